"""--neuron-profile-recheck end to end: a test whose time moved runs again in real fresh
pytest processes, and the region is judged on every process's rounds pooled."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

from pytest_neuronperf.model import APART_NOTE

# ``slow`` lists the pids that run the region twice as long ("all": every process);
# "crash" makes every other process, a fresh one, exit with status 3.
WORK = """
import os, time, torch
from pathlib import Path

def work(x):
    start = time.perf_counter()
    y = torch.tanh(x @ x)
    said = Path(__file__).with_name("slow").read_text().split()
    if str(os.getpid()) in said or "all" in said:
        end = time.perf_counter() + (time.perf_counter() - start)
        while time.perf_counter() < end:
            pass
    elif "crash" in said:
        os._exit(3)
    return y

def test_spin(neuron_profile):
    neuron_profile.measure(work, (torch.randn(96, 96),), name="spin")
"""
ARGS = ("-p", "no:cacheprovider", "-p", "no:randomly", "--neuron-profile-window=0.1")


def recorded(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_spin=WORK)
    slow("")(pytester)
    pytester.runpytest_inprocess(*ARGS, "--neuron-profile-update").assert_outcomes(passed=1)


def slow(text: str) -> Any:
    return lambda p: (p.path / "slow").write_text(text)


def judged(pytester: pytest.Pytester, recheck: int) -> tuple[pytest.RunResult, dict[str, Any]]:
    report = pytester.path / "report.json"
    result = pytester.runpytest_inprocess(
        *ARGS, "--neuron-profile", f"--neuron-profile-recheck={recheck}",
        f"--neuron-profile-json={report}",
    )  # fmt: skip
    (row,) = json.loads(report.read_text())["measurements"]
    return result, row


def test_a_slow_process_alone_passes_once_rechecked(pytester: pytest.Pytester) -> None:
    recorded(pytester)
    slow(str(os.getpid()))(pytester)
    result, row = judged(pytester, 0)
    result.assert_outcomes(failed=1)
    assert "host time regressed" in result.stdout.str()
    result, row = judged(pytester, 2)
    result.assert_outcomes(passed=1)
    note = row["measurement"]["recheck_note"]
    assert re.search(
        r"host time regressed \+\d+% in this process; judged on its rounds pooled with 2 "
        r"fresh processes'$",
        note,
    ), note
    # Three processes' rounds, ten each.
    assert row["measurement"]["host_us"]["n"] == 30
    assert row["baseline"] == "same"


def test_a_slowdown_every_process_shows_fails_on_the_pooled_rounds(
    pytester: pytest.Pytester,
) -> None:
    recorded(pytester)
    slow("all")(pytester)
    result, row = judged(pytester, 2)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "PERF" in out and "region 'spin' host time regressed" in out
    assert "judged on its rounds pooled with 2 fresh processes'" in out
    assert row["measurement"]["host_us"]["n"] == 30


def test_a_recheck_that_breaks_leaves_the_first_process_verdict(
    pytester: pytest.Pytester,
) -> None:
    recorded(pytester)
    slow(f"{os.getpid()} crash")(pytester)
    result, row = judged(pytester, 2)
    result.assert_outcomes(failed=1)
    note = row["measurement"]["recheck_note"]
    assert note.endswith(
        "in this process; not rechecked (fresh process 1 exited with status 3): judged on "
        "this process alone"
    ), note
    assert row["measurement"]["host_us"]["n"] == 10


def test_a_region_judged_alone_is_held_back_within_the_recordings_spread(
    pytester: pytest.Pytester,
) -> None:
    # Recorded over three processes, the last twice as slow: the recording's own spread,
    # with the pooled median among the two fast processes' rounds.
    recorded(pytester)
    pooled = pytester.runpytest_inprocess(*ARGS, "--neuron-profile-pool")
    pooled.assert_outcomes(passed=1)
    slow("all")(pytester)
    pooled = pytester.runpytest_inprocess(*ARGS, "--neuron-profile-pool")
    pooled.assert_outcomes(passed=1)
    pooled.stdout.fnmatch_lines(["*1 pooled (now over 3 processes)*"])
    slow(f"{os.getpid()} crash")(pytester)
    result, row = judged(pytester, 2)
    # Twice the pooled median, not past the slow recording process: held back.
    result.assert_outcomes(passed=1)
    assert (
        "not rechecked (fresh process 1 exited with status 3)" in row["measurement"]["recheck_note"]
    )
    assert any(n.startswith(APART_NOTE) for n in row["baseline_notes"]), row["baseline_notes"]
