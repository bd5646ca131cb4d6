"""How fast the machine runs at this moment, by a fixed workload timed right before each round.

Host-timed (CPU) figures move with the machine, and on shared CI hosts the machine moves a
lot. Measured on these 2-core VMs (single-threaded torch, RMSNorm 64x1024): the same
region's median ranged 57-117 µs across fresh processes, and moved 85 -> 52 µs within one
process half a second apart, as other tenants came and went; a fixed memory-bound workload
moved with it. Dividing each round by the reference timed just before it cut the spread of
run medians across ten processes from ±35% to ±11%. So host-timed backends compare rounds
as multiples of the reference, both ways: a faster machine is allowed for like a slower one.

The reference is one elementwise multiply of 32K floats into a buffer it keeps: one aten op
with no children, so the ticks inside a profiled session add one event per call (a first
version, multiply by a Python scalar and sum, added 15 events a call and tripled the time
spent reading the profile back), below ATen's 32768-element grain, so it never touches the
user's thread pool, and with no fresh output (a fresh 128 KB output sits on glibc's mmap
threshold and was slowed by page faults in some processes and not others). Measured across
ten processes it tracked RMSNorm as well as the multiply-and-sum did (ratio ranges 1.21x and
1.27x).

A second, dispatch-bound tick (the same multiply on 8 floats: all framework, no data) follows
what the first misses. Tiny regions of a few small ops cost what the dispatcher costs, and
over tens of minutes on these VMs that moved on its own: RMSNorm 16x1024 in ten fresh
processes kept a steady ratio to the dispatch tick (sd 0.7%) while its ratio to the memory
tick varied 11% (benchmarks/explore_reference.py). Which tick a region follows depends on
the region, so window.py keeps the region against both and compare.py calls a regression
only when both agree.

A third, compute-bound tick (a 96x96 matmul into a buffer it keeps, about 20 µs here, most of
it arithmetic through the same BLAS path as a user's matmul) follows what the other two
miss: a 256x256 matmul's ratio to a small elementwise op ran from 20 to 39 within 40 s while
the matmul itself stayed within 327-413 µs (benchmarks/RESULTS.md). It costs several small
ticks, so window.py times it a few times per round, not before every call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from statistics import median
from typing import Any

_ELEMENTS = 2**15
_DISPATCH_ELEMENTS = 8
# 96x96: operands of 108 KB stay in a core's L2, and at about 20 µs on one thread the
# arithmetic is most of the call (64x64, about 7 µs, is a third dispatch).
_MATMUL_SIDE = 96
CALLS_PER_TICK = 3


class Reference:
    """Times the reference workloads; one per session, their tensors allocated once."""

    def __init__(self) -> None:
        self._memory = _multiply(_ELEMENTS)
        self._dispatch = _multiply(_DISPATCH_ELEMENTS)
        self._compute = _matmul(_MATMUL_SIDE)

    def tick(self) -> float:
        """The memory-bound workload: the median of a few timed calls, in µs, as one figure
        for the round or call that follows."""
        return _tick(self._memory)

    def dispatch_tick(self) -> float:
        """The dispatch-bound workload, timed the same way."""
        return _tick(self._dispatch)

    def compute_tick(self) -> float:
        """The compute-bound workload, timed the same way."""
        return _tick(self._compute)


def _multiply(elements: int) -> Callable[[], Any]:
    import torch

    x, y, out = torch.ones(elements), torch.full((elements,), 2.0), torch.empty(elements)

    def fn() -> Any:
        return torch.mul(x, y, out=out)

    for _ in range(20):
        fn()
    return fn


def _matmul(side: int) -> Callable[[], Any]:
    import torch

    gen = torch.Generator().manual_seed(0)
    a, b = torch.rand(side, side, generator=gen), torch.rand(side, side, generator=gen)
    out = torch.empty(side, side)

    def fn() -> Any:
        return torch.mm(a, b, out=out)

    for _ in range(20):
        fn()
    return fn


def _tick(fn: Callable[[], Any]) -> float:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(CALLS_PER_TICK):
        t0 = clock()
        fn()
        samples.append((clock() - t0) / 1e3)
    return median(samples)


def against_reference(
    samples: Sequence[float], reference: Sequence[float], scale: float
) -> list[float] | None:
    """Each round as a multiple of the reference timed beside it, times ``scale`` (so the
    figures stay in µs at one machine speed); None when the two cannot be paired."""
    if not samples or len(samples) != len(reference) or not scale > 0:
        return None
    if any(not r > 0 for r in reference):
        return None
    return [s / r * scale for s, r in zip(samples, reference, strict=True)]
