"""The fixed heap end to end: pytest runs in fresh processes (pytester's subprocess, as the
thresholds are process-wide) measuring on the real CPU profiler."""

from __future__ import annotations

import pytest
from helpers import CHURN_PAGES, HEAP_CHURN

from pytest_neuronperf.measure.heap import glibc

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(not glibc(), reason="the thresholds are glibc's"),
]

# Three 4 MB temporaries a call: under glibc's moving thresholds they went back to the OS
# and faulted in again on every call in some processes (docs/heap.md).
MODULE = """
import torch

def rmsnorm(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

def test_rmsnorm(neuron_profile):
    neuron_profile(rmsnorm, torch.randn(1024, 1024), torch.randn(1024), name="rmsnorm")
"""

# After the session: whether the thresholds were set, and the page faults of 12 MB made and
# freed nine more times once the first round has mapped it in (tests/unit/test_heap.py).
CONFTEST = (
    HEAP_CHURN
    + """
from pytest_neuronperf.measure import heap

def pytest_unconfigure(config):
    print(f"heap set {heap.fix_heap.cache_info().misses} later faults {sum(churn()[1:])}")
"""
)


def after_session(pytester: pytest.Pytester, *args: str) -> tuple[int, int]:
    pytester.makepyfile(test_norm=MODULE)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=5", "--neuron-profile-window=0.2", *args
    )
    result.assert_outcomes(passed=1)
    line = next(s for s in result.outlines if s.startswith("heap set "))
    words = line.split()
    return int(words[2]), int(words[5])


def test_a_measured_cpu_region_fixes_the_heap_for_the_rest_of_the_process(
    pytester: pytest.Pytester,
) -> None:
    setting, faults = after_session(pytester, "--neuron-profile")
    assert setting == 1
    assert faults < CHURN_PAGES // 10


@pytest.mark.parametrize(
    "args",
    [("--neuron-profile", "--neuron-profile-heap=system"), ()],
    ids=["system", "not-profiling"],
)
def test_the_heap_is_left_alone_when_asked_or_when_nothing_is_measured(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    setting, _ = after_session(pytester, *args)
    assert setting == 0
