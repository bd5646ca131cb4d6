"""Progress lines for slow phases (measure/progress.py): the rules on a clock the tests
move, and the watch thread once for real."""

from __future__ import annotations

import threading

from pytest_neuronperf.measure.progress import Watch, phase


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_phase_says_so_while_running_and_when_done() -> None:
    # The real watch thread: the line comes while the phase is still running.
    lines: list[str] = []
    said = threading.Event()

    def write(line: str) -> None:
        lines.append(line)
        said.set()

    with phase(write, "compiling", after_s=0.05):
        assert said.wait(30), "no line while the phase ran"
        assert lines == ["neuronperf: compiling: still running..."]
    assert len(lines) == 2 and lines[1].startswith("neuronperf: compiling: took ")


def test_a_phase_speaks_at_its_deadline_and_not_before() -> None:
    clock = Clock()
    watch = Watch(clock, threaded=False)
    lines: list[str] = []
    with phase(lines.append, "compiling", after_s=2.0, watch=watch):
        clock.now += 1.9
        watch.fire_due()
        assert lines == []
        clock.now += 0.1
        watch.fire_due()
        assert lines == ["neuronperf: compiling: still running..."]
        clock.now += 1.0
    assert lines[1:] == ["neuronperf: compiling: took 3.0 s"]


def test_short_phases_print_nothing_even_after_their_deadline_passes() -> None:
    clock = Clock()
    watch = Watch(clock, threaded=False)
    lines: list[str] = []
    for _ in range(50):
        with phase(lines.append, "quick", after_s=0.2, watch=watch):
            clock.now += 0.1
    clock.now += 10.0  # past every deadline: a disarmed phase must stay silent
    watch.fire_due()
    assert lines == []


def test_overlapping_phases_each_get_their_own_line() -> None:
    clock = Clock()
    watch = Watch(clock, threaded=False)
    lines: list[str] = []
    with (
        phase(lines.append, "outer", after_s=0.05, watch=watch),
        phase(lines.append, "inner", after_s=0.1, watch=watch),
    ):
        clock.now += 0.3
        watch.fire_due()
    assert sorted(line.split(":")[1].strip() for line in lines) == [
        "inner",
        "inner",
        "outer",
        "outer",
    ]
