"""Threads, windows and lazy callables end to end through pytester, on the real CPU
profiler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODULE = """
import pytest, torch

def mul_sum(x):
    return (x * 2.0).sum()

def test_mul_sum(neuron_profile):
    # The user's own count: the plugin measures at its fixed one and gives this back.
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        neuron_profile(mul_sum, torch.ones(65536))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
"""

FILE = Path(".neuronperf") / "cpu_x86_64.json"


def run(pytester: pytest.Pytester, *args: str, rounds: int = 5) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        f"--neuron-profile-rounds={rounds}",
        "--neuron-profile-warmup=1",
        "--neuron-profile-json=report.json",
        *args,
    )


def reported(pytester: pytest.Pytester) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads((pytester.path / "report.json").read_text())[
        "measurements"
    ]
    return rows


def entry(pytester: pytest.Pytester, test: str, region: str) -> dict[str, object]:
    data = json.loads((pytester.path / FILE).read_text())
    found: dict[str, object] = data["entries"][test][region]
    return found


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("file names below assume an x86_64 CPU")
    pytester.makepyfile(test_it=MODULE)
    return pytester


def test_kernel_count_and_times_are_judged_only_at_the_same_thread_count(
    project: pytest.Pytester,
) -> None:
    """(x*2.0).sum() on 64K floats: 2 kernels on 1 thread, 3 on 2. A baseline from one
    thread is not comparable with a run on two: said once, and no test fails."""
    run(project, "--neuron-profile-update").assert_outcomes(passed=1)
    stored = entry(project, "test_it.py::test_mul_sum", "mul_sum")
    assert stored["kernels"] == 2
    assert stored["environment"]["threads"] == "1"  # type: ignore[index]

    result = run(project, "--neuron-profile-threads=2")
    result.assert_outcomes(passed=1)
    [row] = reported(project)
    assert row["measurement"]["kernels"] == 3  # type: ignore[index]
    assert row["baseline"] == "not comparable" and row["status"] == "measured"
    lines = result.stdout.lines
    said = [line for line in lines if "not comparable with its baseline" in line]
    assert said == [
        "1 measurement not comparable with its baseline (recorded with 1 thread, now 2 "
        "threads): not judged, and no test failed for it; run pytest --neuron-profile "
        "--neuron-profile-update to record them as they are measured now"
    ]
    result.stdout.fnmatch_lines(["*backend cpu, device cpu:x86_64, torch *, 2 threads*"])

    # Back on one thread the entry is judged again, and one more op fails.
    result = run(project, "--neuron-profile-tolerance=500")
    result.assert_outcomes(passed=1)
    assert reported(project)[0]["baseline"] == "same"
    project.makepyfile(test_it=MODULE.replace("(x * 2.0).sum()", "(x * 2.0 + 1.0).sum()"))
    result = run(project, "--neuron-profile-tolerance=500")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*dispatched 3 ops, baseline 2 (+ aten::add ×1)*"])


def test_no_window_is_not_judged_against_a_windowed_baseline(project: pytest.Pytester) -> None:
    run(project, "--neuron-profile-update").assert_outcomes(passed=1)
    assert entry(project, "test_it.py::test_mul_sum", "mul_sum")["environment"]["window"] == (  # type: ignore[index]
        "0.05"  # tests/conftest.py
    )
    result = run(project, "--neuron-profile-window=0", rounds=10)
    result.assert_outcomes(passed=1)
    [row] = reported(project)
    assert row["baseline"] == "not comparable", row["baseline_notes"]
    said = [line for line in result.stdout.lines if "not comparable with" in line]
    assert len(said) == 1 and (
        "host time recorded with a 0.05 s window, now no window (one call per round)" in said[0]
    )
    # Recording at the window in use makes it comparable again.
    run(project, "--neuron-profile-window=0", "--neuron-profile-update").assert_outcomes(passed=1)
    result = run(project, "--neuron-profile-window=0", "--neuron-profile-tolerance=500")
    assert reported(project)[0]["baseline"] == "same"


def test_lazy_callables_and_budgets_on_nothing_fail_with_what_happened(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_lazy="""
import pytest, torch

def gen(x):
    yield x * 2

@pytest.mark.neuron_budget(max_ops=5)
def test_generator(neuron_profile):
    neuron_profile(gen, torch.ones(4))

@pytest.mark.neuron_budget(max_ops=5)
def test_empty_region(neuron_profile):
    y = torch.ones(4) * 2
    with neuron_profile.region("late"):
        pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*MeasureError: neuron_profile('gen'): the callable returned a generator "
            "(generator), so its work had not run when it returned*",
            "*neuron_budget: region 'late' ran no op, so its budget (max_ops=5) checked nothing*",
        ]
    )
