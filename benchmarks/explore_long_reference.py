"""Which reference follows a millisecond region across fresh processes: the gate's
microsecond ticks, or a reference timed at about the region's own duration (issue 36).

Each process builds the models of bench_models.py (same configs, same seeds, one thread)
and times each one for 1.5 s, every call right after one call of each reference: the
gate's memory tick (a multiply of 32K floats) and compute tick (a 96x96 matmul), and two
long ones, a 384x384 matmul (about 1 ms) and a multiply of 4M floats (about 2 ms, beyond
the caches). It keeps per model the raw median call and, per reference, the median and the
low decile of call/reference. Printed: each figure's spread over the processes (sd of its
log, and how many processes lay more than 10% from the figure's median); the lower, the
better that reference follows the region.

    python benchmarks/explore_long_reference.py [--processes 12] [--models a,b]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import median, pstdev
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).parent))
import bench_models

REFERENCES = ("tick_mem", "tick_mm", "long_mm", "long_mem")
FIGURES = ("raw", *REFERENCES, *(f"{r}_q" for r in REFERENCES))
SECONDS = 1.5


def _references(torch: Any) -> dict[str, Callable[[], Any]]:
    def mul(n: int) -> Callable[[], Any]:
        x, y, out = torch.ones(n), torch.full((n,), 2.0), torch.empty(n)
        return lambda: torch.mul(x, y, out=out)

    def mm(side: int) -> Callable[[], Any]:
        a, b, out = torch.rand(side, side), torch.rand(side, side), torch.empty(side, side)
        return lambda: torch.mm(a, b, out=out)

    return {"tick_mem": mul(2**15), "tick_mm": mm(96), "long_mm": mm(384), "long_mem": mul(2**22)}


def _us(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e3


def _low_decile(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def child(models: list[str]) -> None:
    """One process: each model's figures, as one JSON line."""
    os.environ.setdefault("BENCH_MODELS", ",".join(models))
    # The suite's model builders, as its test file defines them (up to its tests).
    namespace: dict[str, Any] = {}
    exec(bench_models.WORKLOADS.split("NAMES = os.environ")[0], namespace)
    refs = _references(namespace["torch"])
    for fn in refs.values():
        for _ in range(20):
            fn()
    out: dict[str, dict[str, float]] = {}
    for name in models:
        f, args = namespace["built"](name)
        for _ in range(5):
            f(*args)
        raw: list[float] = []
        ratios: dict[str, list[float]] = {r: [] for r in refs}
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            ticks = {r: _us(fn) for r, fn in refs.items()}
            call = _us(partial(f, *args))
            raw.append(call)
            for r, tick in ticks.items():
                ratios[r].append(call / tick)
        figures = {"raw": median(raw), "calls": float(len(raw))}
        for r, values in ratios.items():
            figures[r], figures[f"{r}_q"] = median(values), _low_decile(values)
        out[name] = figures
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=12)
    parser.add_argument("--models", default=",".join(bench_models.MODELS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    models = opts.models.split(",")
    if opts.child:
        child(models)
        return
    env = dict(os.environ, OMP_NUM_THREADS="1")
    runs = []
    for _ in range(opts.processes):
        cmd = [sys.executable, __file__, "--child", "--models", opts.models]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = []
    for model in models:
        row: list[Any] = [model]
        for figure in FIGURES:
            values = [run[model][figure] for run in runs]
            mid = median(values)
            sd = pstdev([math.log(v / mid) for v in values]) * 100
            off = sum(abs(v / mid - 1) > 0.10 for v in values)
            row.append(f"{sd:.1f}% ({off})")
        rows.append(row)
    print(f"{opts.processes} processes; sd of log across them (processes > 10% off the median)")
    print(tabulate(rows, headers=["model", *FIGURES], tablefmt="github"))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
