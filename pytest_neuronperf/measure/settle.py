"""Warm-up until the allocator has settled, told by the page faults a call takes.

Measured on these machines (2-core VM, glibc): a region whose output is 1 MB keeps landing
on fresh heap addresses for its first 10-15 calls, and each such call takes 256 minor page
faults (the whole output touched for the first time) and runs 7-10 times slower (~450 µs
instead of ~45). A fixed warm-up of 3 calls leaves several of those in the measured rounds,
and how many differs from run to run: medians of one unchanged region ranged 42-610 µs.
The profiler's own allocations move the heap again, so its session settles the same way.
Steady state, what a training loop sees, is no faults; a call that takes (almost) none is
the signal that warm-up is over. Where the OS gives no fault count, the fixed warm-up is all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# A profiled call may fault a page or two as the profiler's event buffers grow.
SETTLED_FAULTS = 4
# One clean call is not enough: the heap hands out a few different addresses in turn
# before it stops growing (measured: a fault-free call, then 256 faults again two calls on).
CLEAN_IN_A_ROW = 3
# At most this many extra calls, and this much time, go into settling; a region that maps
# fresh memory on every call never settles, and is measured (and reported) as it is.
MAX_EXTRA_CALLS = 30
MAX_EXTRA_S = 1.0


def _fault_counter() -> Callable[[], int] | None:
    try:
        import resource
    except ImportError:  # Windows
        return None

    def minor_faults() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    return minor_faults


page_faults = _fault_counter()


@dataclass(frozen=True)
class Settled:
    extra_calls: int
    # Faults of the last call made; None where the OS does not count them.
    last_faults: int | None
    # Whether any call after the first (a first call faults for its own allocations)
    # took more than SETTLED_FAULTS: the region is one that needs settling.
    faulted: bool = False

    @property
    def settled(self) -> bool:
        return self.last_faults is None or self.last_faults <= SETTLED_FAULTS


def settle(call: Callable[[], object], earlier: Sequence[int]) -> Settled:
    """Call ``call`` until CLEAN_IN_A_ROW calls in a row take at most SETTLED_FAULTS page
    faults each. ``earlier`` holds the faults of the caller's own calls before this (its
    warm-up), oldest first: the clean ones at its end count towards the row."""
    last = earlier[-1] if earlier else None
    if page_faults is None:
        return Settled(0, None)
    faulted = any(f > SETTLED_FAULTS for f in earlier[1:])
    clean = 0
    for faults in reversed(earlier):
        if faults > SETTLED_FAULTS:
            break
        clean += 1
    extra = 0
    deadline = time.perf_counter() + MAX_EXTRA_S
    while clean < CLEAN_IN_A_ROW:
        if extra >= MAX_EXTRA_CALLS or time.perf_counter() > deadline:
            break
        before = page_faults()
        call()
        last = page_faults() - before
        clean = clean + 1 if last <= SETTLED_FAULTS else 0
        faulted = faulted or (last > SETTLED_FAULTS and (extra > 0 or bool(earlier)))
        extra += 1
    return Settled(extra, last, faulted)
