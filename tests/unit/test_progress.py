"""Progress lines for slow phases (measure/progress.py), with real threads and sleeps."""

from __future__ import annotations

import threading
import time

from pytest_neuronperf.measure.progress import phase


def test_a_slow_phase_says_so_while_running_and_when_done() -> None:
    lines: list[str] = []
    said = threading.Event()

    def write(line: str) -> None:
        lines.append(line)
        said.set()

    with phase(write, "compiling", after_s=0.05):
        assert said.wait(5), "no line while the phase ran"
        assert lines == ["neuronperf: compiling: still running..."]
    assert len(lines) == 2 and lines[1].startswith("neuronperf: compiling: took ")


def test_short_phases_print_nothing_even_after_their_deadline_passes() -> None:
    lines: list[str] = []
    for _ in range(50):
        with phase(lines.append, "quick", after_s=0.2):
            pass
    time.sleep(0.4)  # past every deadline: a disarmed phase must stay silent
    assert lines == []


def test_overlapping_phases_each_get_their_own_line() -> None:
    lines: list[str] = []
    with phase(lines.append, "outer", after_s=0.05), phase(lines.append, "inner", after_s=0.1):
        time.sleep(0.3)
    assert sorted(line.split(":")[1].strip() for line in lines) == [
        "inner",
        "inner",
        "outer",
        "outer",
    ]
