"""CPU peaks measured on the machine: a float32 matmul for FLOP/s, a large copy for bytes/s.

No published figure fits a shared CI runner (core count, turbo, memory channels and
neighbours all vary), so the CPU roof is what this machine does now, with the same torch
thread count the measured regions use. Best of a few repetitions, a few hundred ms in all;
the plugin runs it once per session, only when a CPU region's roofline is needed.

The matmul is large enough to run near the BLAS library's peak but small enough to repeat
often: on a shared runner single calls vary tenfold (measured on this 2-core machine: a
256^3 matmul took 0.19 ms at best and 28 ms at worst), and only the best of many calls
approaches the roof (the first ten or so calls in a fresh process took 9-32 ms each here, so
the time budget must outlast them). The copy counts its bytes as a kernel would be counted
here, read once plus written once; its two buffers are kept small (peak RSS is a budget), so
on a large last-level cache it measures the cache, not DRAM (see docs/design.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .peaks import Peaks

MATMUL_N = 256
# Two buffers of this size: 24 MiB of peak RSS for the session (the issue-16 budget is 32).
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


def _best_seconds(step: Callable[[], object], repeats: int, budget_s: float) -> float:
    """Best time of ``repeats`` calls, or of those that fit in ``budget_s``. No early stop
    on "stable" times: slow calls come in equal scheduler quanta (16.0, 16.0, 16.02 ms
    measured here) and looked stable while being 60 times too slow."""
    clock = time.perf_counter
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
    """Measure this machine's float32 matmul FLOP/s and copy bytes/s (0.2-0.6 s here)."""
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
            # the whole budget (measured: 2.1 GFLOP/s against 190 when quiet); one thread
            # never waits (80-91 GFLOP/s here, steady), so the roof is at least that.
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
