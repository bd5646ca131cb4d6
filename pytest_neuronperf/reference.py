"""How fast the machine is right now, by a fixed workload timed beside each measurement.

Host-timed (CPU) figures move with the machine: measured on these 2-core VMs, one
unchanged 45 µs region had run medians of 41-89 µs across fresh processes, and two
different regions moved together (both up 30-120% in the same runs). Dividing by a fixed
memory-bound workload timed in the same rounds cut that spread from 49% to 17% for one
region and from 83% to 21% for another (benchmarks/bench_gate.py shows the effect on the
gate). The reference is single-threaded by size (below ATen's 32768-element grain), so it
never touches the user's thread pool, and writes into a buffer it keeps: a fresh 128 KB
output sits on glibc's mmap threshold, and a first version that allocated one was slowed
by page faults in some processes and not others (it then read 30-45% "faster machine" in
every rerun against one baseline).

Only a slower machine is allowed for (see ``drift``): a merge gate must not fail because
the reference happened to run fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from statistics import median
from typing import Any

_ELEMENTS = 2**15
CALLS_PER_ROUND = 3


class Reference:
    """Times the reference workload; one per session, its tensors allocated once."""

    def __init__(self) -> None:
        import torch

        x, out = torch.ones(_ELEMENTS), torch.empty(_ELEMENTS)
        self._fn: Callable[[], Any] = lambda: torch.mul(x, 2.0, out=out).sum()
        for _ in range(20):
            self._fn()
        self._samples: list[float] = []

    def tick(self) -> None:
        """Time a few calls; the caller interleaves ticks with its own rounds."""
        clock = time.perf_counter_ns
        for _ in range(CALLS_PER_ROUND):
            t0 = clock()
            self._fn()
            self._samples.append((clock() - t0) / 1e3)

    def take(self) -> float:
        """The median of the ticks since the last take, in µs (0 when none)."""
        samples, self._samples = self._samples, []
        return median(samples) if samples else 0.0


def drift(baseline_ref: float | None, current_ref: float | None) -> float:
    """How much slower the machine runs now than at the baseline: >= 1.0, and 1.0 when it
    runs as fast or faster, or when either side was not timed. One-sided on purpose: a
    faster reference would make every region look slower, and the reference's own noise
    would then fail merges."""
    if not baseline_ref or not current_ref:
        return 1.0
    return max(1.0, current_ref / baseline_ref)
