"""Which reference tick tracks a region best across fresh processes: the next step for the CPU
time gate on tiny, dispatch-bound regions (README, Gate quality).

Each process times naive and fused RMSNorm for 1 s per region, each call after a tick of the
memory-bound reference the plugin uses (a multiply of 32K floats into a kept buffer) and a
tick of a dispatch-bound one (8 floats), and keeps per region the 10th percentile of
call/tick for: the memory tick, the dispatch tick, their sum, and raw call times. Printed:
each figure's spread (sd and range, relative to the median) over the processes; the lower,
the better the reference follows the machine for that region.

    python benchmarks/explore_reference.py [--processes 10] [--rows 16 64] [--spread 1800]

``--spread S`` starts the processes evenly over S seconds, to see the drift of tens of
minutes that an A/A rerun against a baseline recorded earlier meets; it also prints, per
figure, how many processes came out more than 10% above the first one (a gate's false
failures if the first were the baseline), and the same for "either": a change counted only
when both the memory and the dispatch figures show it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

FIGURES = ("memory", "dispatch", "sum", "raw")


def _tick(fn: Callable[[], Any]) -> float:
    samples = []
    for _ in range(3):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(samples)


def _low_decile(values: list[float]) -> float:
    values = sorted(values)
    return values[int(0.1 * (len(values) - 1))]


def one_process(rows: int) -> dict[str, dict[str, float]]:
    import torch

    torch.set_num_threads(1)
    x, w = torch.randn(rows, 1024), torch.randn(1024)
    regions: dict[str, Callable[[], Any]] = {
        "naive": lambda: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w,
        "fused": lambda: torch.rms_norm(x, (1024,), w, 1e-6),
    }
    a, b, o = torch.ones(2**15), torch.full((2**15,), 2.0), torch.empty(2**15)
    s, t, so = torch.ones(8), torch.ones(8), torch.empty(8)

    def memory() -> Any:
        return torch.mul(a, b, out=o)

    def dispatch() -> Any:
        return torch.mul(s, t, out=so)

    for _ in range(50):
        memory(), dispatch(), *(f() for f in regions.values())
    out: dict[str, dict[str, float]] = {}
    for name, fn in regions.items():
        calls: list[tuple[float, float, float]] = []
        end = time.perf_counter() + 1.0
        while time.perf_counter() < end:
            m, d = _tick(memory), _tick(dispatch)
            t0 = time.perf_counter_ns()
            fn()
            calls.append(((time.perf_counter_ns() - t0) / 1e3, m, d))
        out[name] = {
            "memory": _low_decile([h / m for h, m, _ in calls]),
            "dispatch": _low_decile([h / d for h, _, d in calls]),
            "sum": _low_decile([h / (m + d) for h, m, d in calls]),
            "raw": _low_decile([h for h, _, _ in calls]),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--rows", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--spread", type=float, default=0.0)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child is not None:
        print(json.dumps(one_process(opts.child)))
        return
    for rows in opts.rows:
        runs = []
        start = time.monotonic()
        for i in range(opts.processes):
            time.sleep(max(0.0, start + i * opts.spread / opts.processes - time.monotonic()))
            run = json.loads(
                subprocess.run(
                    [sys.executable, __file__, "--child", str(rows)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            runs.append(run)
            print(
                f"{time.monotonic() - start:7.0f}s "
                + " ".join(
                    f"{region}:" + "/".join(f"{run[region][f]:.3g}" for f in FIGURES)
                    for region in run
                ),
                flush=True,
            )
        for region in runs[0]:
            cells = []
            for figure in FIGURES:
                values = [run[region][figure] for run in runs]
                mid = statistics.median(values)
                cells.append(
                    f"{figure} sd {statistics.pstdev(values) / mid:.1%} "
                    f"({min(values) / mid - 1:+.0%}..{max(values) / mid - 1:+.0%})"
                )
            print(f"{rows}x1024 {region}: " + "; ".join(cells))
            over = {
                f: sum(run[region][f] > 1.1 * runs[0][region][f] for run in runs[1:])
                for f in FIGURES
            }
            over["either"] = sum(
                min(run[region][f] / runs[0][region][f] for f in ("memory", "dispatch")) > 1.1
                for run in runs[1:]
            )
            print(f"  >10% above the first of {len(runs) - 1}: {over}", flush=True)


if __name__ == "__main__":
    main()
