"""How a performance failure reads, through pytester on the real CPU profiler: the sentences
in the failure's text, the per-op tables in a ``neuronperf`` section, the PERF status; and
every budget marker of a test enforced."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# One intra-op thread: see test_baseline.py. NP_EXTRA_OP adds one op to the region.
MODULE = """
import os, pytest, torch

torch.set_num_threads(1)

def work(x):
    y = x * 2.0
    if os.environ.get("NP_EXTRA_OP"):
        y = y + 1.0
    return y.sum()

@pytest.mark.neuron_budget(max_ops=2)
def test_gated(neuron_profile):
    neuron_profile(work, torch.ones(4096), name="work")

def test_own_failure(neuron_profile):
    neuron_profile(work, torch.ones(4096), name="work")
    assert False, "the test's own news"
"""

BUDGET = "neuron_budget: region 'work' dispatched 3 ops, budget max_ops=2"
BASELINE = "neuronperf baseline: region 'work' dispatched 3 ops, baseline 2 (+ aten::add ×1)"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1", *args
    )


def call_report(reprec: pytest.HookRecorder, name: str) -> pytest.TestReport:
    (report,) = [
        r
        for r in reprec.getreports("pytest_runtest_logreport")
        if r.when == "call" and r.nodeid.endswith(name)
    ]
    return report


def test_budget_and_baseline_failures_both_shown_with_the_perf_status(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it=MODULE)
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=1, failed=1)
    monkeypatch.setenv("NP_EXTRA_OP", "1")

    # The report itself: the budget's sentence, then the baseline's (ops, kernels, FLOPs,
    # bytes), one line each, and nothing else in the text.
    reprec = pytester.inline_run(
        "-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-rounds=3"
    )
    report = call_report(reprec, "test_gated")
    assert report.failed
    lines = str(report.longrepr).splitlines()
    assert lines[:2] == [BUDGET, BASELINE]
    assert [line.split(": ", 1)[0] for line in lines] == ["neuron_budget"] + [
        "neuronperf baseline"
    ] * 4
    (section,) = [text for name, text in report.sections if name == "neuronperf"]
    assert section.startswith("region 'work' on cpu:")
    assert any(line.startswith("aten::add ") for line in section.splitlines())  # per-op row
    assert "op diff against the baseline: + aten::add ×1" in section
    # A test that failed on its own is a plain failure, with no section of ours.
    own = call_report(reprec, "test_own_failure")
    assert own.failed and "the test's own news" in str(own.longrepr)
    assert [name for name, _ in own.sections if name == "neuronperf"] == []

    result = run(pytester, "--neuron-profile", "-rA")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            f"*{BUDGET}",
            f"*{BASELINE}",
            "*- neuronperf -*",
            "op * calls * kernels * device µs * share*",
            "aten::add *",
            "op diff against the baseline: + aten::add ×1",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*short test summary info*",
            "PERF test_it.py::test_gated - neuron_budget: region 'work' dispatched 3 ops*",
            "FAILED test_it.py::test_own_failure - AssertionError: the test's own news*",
        ]
    )
    # Counted as failed all the same, and shown as PERF in the verbose line.
    verbose = run(pytester, "--neuron-profile", "-v")
    verbose.stdout.fnmatch_lines(["test_it.py::test_gated PERF*"])


def test_a_baseline_failure_alone_is_perf_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it=MODULE.replace("max_ops=2", "max_ops=10"))
    run(pytester, "--neuron-profile-update", "-k", "test_gated").assert_outcomes(
        passed=1, deselected=1
    )
    monkeypatch.setenv("NP_EXTRA_OP", "1")
    reprec = pytester.inline_run("-p", "no:cacheprovider", "--neuron-profile", "-k", "gated")
    report = call_report(reprec, "test_gated")
    assert str(report.longrepr).splitlines()[0] == BASELINE
    assert all(
        line.startswith("neuronperf baseline: ") for line in str(report.longrepr).split("\n")
    )
    result = run(pytester, "--neuron-profile", "-k", "gated")
    result.stdout.fnmatch_lines(["PERF test_it.py::test_gated - neuronperf baseline: *"])


MARKERS = """
import pytest, torch

def work(x):
    return (x * 2.0).sum()

def more(x):
    return ((x * 2.0) + 1.0).sum()

@pytest.mark.neuron_budget(max_ops=1)
class TestClassAndFunction:
    @pytest.mark.neuron_budget(max_kernels=100)
    def test_both_hold(self, neuron_profile):
        neuron_profile(work, torch.ones(64))

@pytest.mark.neuron_budget(max_ops=1, region="first")
@pytest.mark.neuron_budget(max_ops=2, region="second")
def test_one_per_region(neuron_profile):
    neuron_profile(work, torch.ones(64), name="first")
    neuron_profile(more, torch.ones(64), name="second")
"""


def test_every_marker_is_enforced_on_class_function_and_region(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MARKERS)
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            # The class's marker, though the function has one of its own (closer to it).
            "*region 'work' dispatched 2 ops, budget max_ops=1",
            # Both region markers, whichever pytest lists first.
            "*region 'first' dispatched 2 ops, budget max_ops=1",
            "*region 'second' dispatched 3 ops, budget max_ops=2",
        ]
    )


USER_ERRORS = """
import torch

def boom(x):
    raise ValueError("the user's own bug")

def lazy(x):
    yield x

def test_raises(neuron_profile):
    neuron_profile(boom, torch.ones(3))

def test_generator(neuron_profile):
    neuron_profile(lazy, torch.ones(3))

def test_not_callable(neuron_profile):
    neuron_profile(3)

def test_callable_inside_region(neuron_profile):
    with neuron_profile.region("outer"):
        neuron_profile(torch.exp, torch.ones(3))
"""


def test_user_errors_show_the_users_frames_not_the_plugins(pytester: pytest.Pytester) -> None:
    """Issue 25, item 4: the good one-line message, under the user's frames only."""
    pytester.makepyfile(test_user=USER_ERRORS)
    result = run(pytester, "--neuron-profile")
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    ours = [line for line in out.splitlines() if re.search(r"pytest_neuronperf/\S+\.py:\d+", line)]
    assert not ours, ours
    result.stdout.fnmatch_lines(
        [
            "*def boom(x):",
            "*ValueError: the user's own bug",
            "test_user.py:*: ValueError",
            "*the callable returned a generator*",
            "*expected a callable, got int*",
            "*was called inside region 'outer'*",
        ]
    )


def test_a_reused_name_warns_once_per_test(pytester: pytest.Pytester) -> None:
    """Issue 25, item 5: act, act#2, act#3 with one warning saying why it matters."""
    pytester.makepyfile(
        test_reused_names="""
import torch

def test_names(neuron_profile):
    for _ in range(2):
        neuron_profile(torch.exp, torch.ones(3), name="act")
    with neuron_profile.region("act"):
        torch.exp(torch.ones(3))
    assert [m.region for m in neuron_profile.measurements] == ["act", "act#2", "act#3"]
"""
    )
    result = run(pytester, "--neuron-profile", "-W", "always::UserWarning")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*UserWarning: neuron_profile: 'act' is measured again in this test, as 'act#2'*"]
    )


def test_a_time_budget_on_a_region_is_refused_and_its_row_says_cold(
    pytester: pytest.Pytester,
) -> None:
    """Issue 25, item 6: region() measures one cold execution; a time budget on it fails
    with a sentence saying so, and -v says it of the region."""
    pytester.makepyfile(
        test_cold="""
import pytest, torch

@pytest.mark.neuron_budget(max_device_us=1e9)
def test_cold(neuron_profile):
    with neuron_profile.region("tanh"):
        torch.tanh(torch.ones(8))
"""
    )
    result = run(pytester, "--neuron-profile", "-v")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*region 'tanh' has budget max_device_us=1000000000 but its time is one cold*",
            "*one cold execution: no warm-up, no repeat*",
        ]
    )
    assert "first call 0.0 µs" not in result.stdout.str()
