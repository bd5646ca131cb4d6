"""measure/heap.py on this machine's glibc: each check runs in a fresh interpreter, since
the thresholds are process-wide and a process's history moves glibc's own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import CHURN_PAGES, HEAP_CHURN

from pytest_neuronperf.measure.heap import glibc

pytestmark = pytest.mark.skipif(not glibc(), reason="the thresholds are glibc's")

# The first round maps the blocks in; with glibc's moving thresholds the trim threshold then
# sits at 8 MB only, so the 12 MB freed at the heap's top goes back to the OS every round.
CHURN = (
    HEAP_CHURN
    + """
import json, sys
from pytest_neuronperf.measure.heap import fix_heap
took = fix_heap() if sys.argv[1] == "fixed" else None
print(json.dumps({"took": took, "faults": churn()}))
"""
)


def churn(mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHURN, mode], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_fixed_thresholds_keep_freed_blocks_on_the_heap() -> None:
    fixed = churn("fixed")
    assert fixed["took"] is True
    later = fixed["faults"][1:]  # type: ignore[index]
    # The first round maps the heap in; after it, the blocks come back without a fault.
    assert sum(later) < CHURN_PAGES // 10, fixed


def test_glibcs_own_thresholds_fault_the_blocks_in_every_round() -> None:
    """The contrast that makes the test above discriminate: the same churn unfixed."""
    system = churn("system")
    later = system["faults"][1:]  # type: ignore[index]
    assert min(later) >= CHURN_PAGES // 2, system


def test_fix_heap_sets_the_thresholds_once_per_process() -> None:
    code = (
        "from pytest_neuronperf.measure import heap\n"
        "print(heap.fix_heap(), heap.fix_heap(), heap.fix_heap.cache_info().misses)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "1"]
