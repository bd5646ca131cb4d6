"""How fast the machine runs at this moment, by fixed workloads timed right before each round.

Host-timed (CPU) figures move with a shared machine; dividing each round by a reference
timed beside it allows for that, both ways. Three ticks: a memory-bound multiply of 32K
floats into a kept buffer, a dispatch-bound one on 8 floats, and a compute-bound 96x96
matmul (timed a few times per round: it costs several small ticks); window.py keeps a region
against each and gate/ticks.py calls a regression only when every tick that judges the
region agrees. Why these workloads and what they were measured to track:
docs/gate-quality.md, "The reference workloads".
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
