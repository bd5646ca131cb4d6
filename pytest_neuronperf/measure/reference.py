"""How fast the machine runs at this moment, by fixed workloads timed right before each round.

Host-timed (CPU) figures move with a shared machine; dividing each round by a reference
timed beside it allows for that, both ways. Three microsecond ticks: a memory-bound
multiply of 32K floats into a kept buffer, a dispatch-bound one on 8 floats, and a
compute-bound 96x96 matmul (timed a few times per round: it costs several small ticks); and
for regions of a millisecond or more a millisecond tick, a 384x384 matmul, since no
microsecond tick follows those from one process to the next. window.py keeps a region
against each tick it timed and gate/ticks.py says which judge it. Why these workloads and
what they were measured to track: docs/gate-quality.md, "The reference workloads".
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
# 384x384: about 1.3 ms on one thread; over 12 fresh processes millisecond models against it
# spread 1.0-3.0% where against the 96x96 tick they spread 1.7-6.3% (docs/gate-quality.md).
_LONG_MATMUL_SIDE = 384
# Regions whose recorded host median is this long or longer are judged against the
# millisecond tick alone (gate/ticks.py): the Hugging Face and torchvision models of
# bench_models.py, 1.3-24 ms, against the microsecond ticks failed unchanged code or missed
# +25% slowdowns from one run to the next; RMSNorm 1024x1024 (0.7-0.8 ms) stays with them.
LONG_REGION_US = 1000.0
# A window times the millisecond tick where the profiled rounds took this share of
# LONG_REGION_US: a call under the profiler is never faster, and its timing jitters.
LONG_TIMED_SHARE = 0.8


class Reference:
    """Times the reference workloads; one per session, their tensors allocated once."""

    def __init__(self) -> None:
        self._memory = _multiply(_ELEMENTS)
        self._dispatch = _multiply(_DISPATCH_ELEMENTS)
        self._compute = _matmul(_MATMUL_SIDE)
        self._long: Callable[[], Any] | None = None

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

    def prepare_long(self) -> Callable[[], Any]:
        """The millisecond workload, built on first use (called outside any timed window):
        only sessions with millisecond regions pay for its tensors and warm-up."""
        if self._long is None:
            self._long = _matmul(_LONG_MATMUL_SIDE)
        return self._long

    def long_tick(self) -> float:
        """The millisecond workload, one timed call, in µs: it is itself as long as a
        region's call, so one call is one figure."""
        return _tick(self.prepare_long(), calls=1)


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


def _tick(fn: Callable[[], Any], calls: int = CALLS_PER_TICK) -> float:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(calls):
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
