"""measure/heap.py on this machine's glibc: each check runs in a fresh interpreter, since
the thresholds are process-wide and a process's history moves glibc's own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_neuronperf.measure.heap import glibc

pytestmark = pytest.mark.skipif(not glibc(), reason="the thresholds are glibc's")

# Three 4 MB blocks made, touched and freed ten times: with glibc's moving thresholds the
# first round is mmapped, which lifts the trim threshold to 8 MB only, so the 12 MB freed
# at the heap's top goes back to the OS every round and faults in again on the next.
CHURN = """
import ctypes, json, resource, sys
from pytest_neuronperf.measure.heap import fix_heap
took = fix_heap() if sys.argv[1] == "fixed" else None
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = (ctypes.c_void_p,)
size, faults = 4 << 20, []
for _ in range(10):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks = [libc.malloc(size) for _ in range(3)]
    for b in blocks:
        ctypes.memset(b, 1, size)
    for b in blocks:
        libc.free(b)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"took": took, "faults": faults}))
"""

PAGES = 3 * (4 << 20) // 4096


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
    assert sum(later) < PAGES // 10, fixed


def test_glibcs_own_thresholds_fault_the_blocks_in_every_round() -> None:
    """The contrast that makes the test above discriminate: the same churn unfixed."""
    system = churn("system")
    later = system["faults"][1:]  # type: ignore[index]
    assert min(later) >= PAGES // 2, system


def test_fix_heap_sets_the_thresholds_once_per_process() -> None:
    code = (
        "from pytest_neuronperf.measure import heap\n"
        "print(heap.fix_heap(), heap.fix_heap(), heap.fix_heap.cache_info().misses)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "1"]
