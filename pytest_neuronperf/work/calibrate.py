"""CPU peaks measured on the machine: a float32 matmul for FLOP/s, a large copy for bytes/s.

No published figure fits a shared CI runner, so the CPU roof is what this machine does now,
with the thread count the measured regions use: the best of many short repetitions (single
calls vary tenfold on a shared runner), once per session, only when a CPU region's roofline
is needed. The copy's buffers are small (peak RSS is a budget), so on a large last-level
cache it measures the cache. Figures: benchmarks/RESULTS.md, "CPU calibration".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .peaks import Peaks

MATMUL_N = 256
# Two buffers of this size: 24 MiB of peak RSS for the session (docs/cost.md).
COPY_MIB = 12


@dataclass(frozen=True)
class Calibration:
    flops_per_s: float
    bytes_per_s: float
    threads: int
    seconds: float

    def peaks(self) -> Peaks:
        return Peaks(
            self.flops_per_s,
            self.bytes_per_s,
            "fp32 matmul, measured",
            f"calibrated here: {MATMUL_N}^3 matmul and {COPY_MIB} MiB copy, "
            f"{self.threads} threads, best of repeats",
        )


def _best_seconds(
    step: Callable[[], object],
    repeats: int,
    budget_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Best time of ``repeats`` calls, or of those that fit in ``budget_s``. No early stop
    on "stable" times: slow calls come in equal scheduler quanta, which look stable while
    being many times too slow (benchmarks/RESULTS.md, "CPU calibration")."""
    step()  # first call pays page faults and BLAS start-up
    best = float("inf")
    deadline = clock() + budget_s
    for _ in range(repeats):
        t0 = clock()
        step()
        best = min(best, clock() - t0)
        if clock() > deadline:
            break
    return best


def calibrate_cpu(*, repeats: int = 100, budget_s: float = 0.25) -> Calibration:
    """Measure this machine's float32 matmul FLOP/s and copy bytes/s."""
    import torch

    t0 = time.perf_counter()
    with torch.no_grad():
        a = torch.randn(MATMUL_N, MATMUL_N)
        b = torch.randn(MATMUL_N, MATMUL_N)
        out = torch.empty(MATMUL_N, MATMUL_N)
        threads = torch.get_num_threads()
        mm_s = _best_seconds(lambda: torch.mm(a, b, out=out), repeats, budget_s)
        if threads > 1:
            # With every core busy elsewhere the threaded matmul waits at its barriers for
            # the whole budget; one thread never waits, so the roof is at least its figure.
            torch.set_num_threads(1)
            try:
                single = _best_seconds(lambda: torch.mm(a, b, out=out), repeats // 4, budget_s / 3)
            finally:
                torch.set_num_threads(threads)
            mm_s = min(mm_s, single)
        n = COPY_MIB * 2**20 // 4
        src = torch.ones(n)
        dst = torch.empty(n)
        copy_s = _best_seconds(lambda: dst.copy_(src), max(3, repeats // 12), budget_s)
    return Calibration(
        flops_per_s=2 * MATMUL_N**3 / mm_s,
        bytes_per_s=2 * n * 4 / copy_s,
        threads=threads,
        seconds=time.perf_counter() - t0,
    )


def cpu_peaks() -> Peaks:
    return calibrate_cpu().peaks()
