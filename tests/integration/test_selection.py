"""Selecting tests with pytest's own plugins (--lf, --ff, --sw, -k, --deselect) while
recording baselines: an entry of a test that still exists is never deleted, and a test
that is really gone still is. Real plugins, through pytester (the cache provider on)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODULE = """
import os, pytest, torch

torch.set_num_threads(1)

def work(x):
    return (x * 2.0).sum()

def test_a(neuron_profile):
    neuron_profile(work, torch.ones(64), name="work")

def test_b(neuron_profile):
    neuron_profile(work, torch.ones(64), name="work")
    assert not os.environ.get("NP_FAIL_B"), "test_b made to fail"

def test_c(neuron_profile):
    neuron_profile(work, torch.ones(64), name="work")
"""
ALL = ["test_it.py::test_a", "test_it.py::test_b", "test_it.py::test_c"]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "--neuron-profile-update", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1", *args
    )


def stored(pytester: pytest.Pytester) -> list[str]:
    (path,) = (pytester.path / ".neuronperf").glob("cpu_*.json")
    return sorted(json.loads(path.read_text())["entries"])


@pytest.fixture
def recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Three recorded tests, the last run having failed test_b (the cache remembers it)."""
    pytester.makepyfile(test_it=MODULE)
    run(pytester).assert_outcomes(passed=3)
    assert stored(pytester) == ALL
    monkeypatch.setenv("NP_FAIL_B", "1")
    run(pytester).assert_outcomes(passed=2, failed=1)
    monkeypatch.delenv("NP_FAIL_B")
    return pytester


@pytest.mark.parametrize(
    ("args", "outcomes"),
    [
        # --lf drops the passed tests of test_it.py at collection, with no deselection.
        (("--lf",), {"passed": 1}),
        (("--ff",), {"passed": 3}),
        (("--sw",), {"passed": 3}),
        (("-k", "test_b"), {"passed": 1, "deselected": 2}),
        (("--deselect", "test_it.py::test_a"), {"passed": 2, "deselected": 1}),
    ],
    ids=["lf", "ff", "sw", "k", "deselect"],
)
def test_selection_never_deletes_entries_of_tests_that_exist(
    recorded: pytest.Pytester, args: tuple[str, ...], outcomes: dict[str, int]
) -> None:
    result = run(recorded, *args)
    result.assert_outcomes(**outcomes)
    assert stored(recorded) == ALL
    out = result.stdout.str()
    assert "stale" not in out.replace("0 stale removed", ""), out


def test_stepwise_stopping_at_a_failure_keeps_the_rest(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NP_FAIL_B", "1")
    result = run(recorded, "--sw")
    result.assert_outcomes(passed=1, failed=1)  # stopped at test_b: test_c never ran
    assert stored(recorded) == ALL
    monkeypatch.delenv("NP_FAIL_B")
    result = run(recorded, "--sw")  # starts at test_b: test_a deselected
    result.assert_outcomes(passed=2, deselected=1)
    assert stored(recorded) == ALL


def test_a_test_that_is_gone_is_still_removed_under_k(recorded: pytest.Pytester) -> None:
    recorded.makepyfile(test_it=MODULE.split("def test_c")[0])
    result = run(recorded, "-k", "test_a")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*1 stale removed*"])
    assert stored(recorded) == ALL[:2]


def test_a_test_that_is_gone_is_kept_under_lf_until_a_full_run(recorded: pytest.Pytester) -> None:
    # --lf cannot tell a test it dropped from one that is gone: it keeps both.
    recorded.makepyfile(test_it=MODULE.split("def test_c")[0])
    run(recorded, "--lf").assert_outcomes(passed=1)
    assert stored(recorded) == ALL
    result = run(recorded)
    result.stdout.fnmatch_lines(["*1 stale removed*"])
    assert stored(recorded) == ALL[:2]
