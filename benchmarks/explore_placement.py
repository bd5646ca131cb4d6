"""Whether a compiled model's speed from one fresh process to the next follows where the
process was placed: the same unchanged regions in fresh pytest processes in each of
``--modes``:

  random  as every process runs
  fixed   address-space randomization off (``setarch -R``): where its memory lands
  cpu0    pinned to CPU 0 (``taskset -c 0``), and cpu1 to CPU 1: which core it runs on
  hash0   ``PYTHONHASHSEED=0``, and hash1 with 1: how its str hashes lay out Python's dicts

Each process runs one measured test per model of bench_models.py (same configs, same seeds,
one thread, the default 10 rounds over the 1 s window) and writes the JSON report. Modes
alternate process by process, so all see the same machine. Printed per model and mode: the
range of the processes' host medians, their spread (slowest over fastest), the same spread
against the tick that judges the region, and each process's median over the mode's median.

    python benchmarks/explore_placement.py [--processes 8] [--modes random,fixed]
                                           [--models llama_compiled,...]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from statistics import median

import bench_models
from tabulate import tabulate

MODES: dict[str, tuple[str, ...]] = {
    "random": (),
    "fixed": ("setarch", "-R"),
    "cpu0": ("taskset", "-c", "0"),
    "cpu1": ("taskset", "-c", "1"),
    "hash0": ("env", "PYTHONHASHSEED=0"),
    "hash1": ("env", "PYTHONHASHSEED=1"),
}


def one_process(project: Path, mode: str, models: str) -> dict[str, tuple[float, float]]:
    """model -> (host median µs, its median against the tick that judges it) from one
    fresh process."""
    rows = bench_models.measured(project, models, prefix=MODES[mode])
    return {m["region"]: (m["host_us"]["median"], bench_models.judging_tick(m)) for m in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--modes", default="random,fixed")
    parser.add_argument("--models", default="llama_compiled,resnet_compiled,gpt2_compiled")
    opts = parser.parse_args()
    modes = opts.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"--modes {','.join(unknown)}: unknown; choose from {', '.join(MODES)}")
    seen = bench_models.alternated_in_project(
        opts.processes, modes, lambda project, mode: one_process(project, mode, opts.models)
    )
    rows = []
    for (model, mode), figures in sorted(seen.items()):
        host = [h for h, _ in figures]
        tick = [t for _, t in figures]
        mid = median(tick)
        rows.append(
            [
                model,
                mode,
                *bench_models.spread_cells(host, tick),
                " ".join(f"{t / mid:.2f}" for t in tick),
            ]
        )
    head = [
        "model",
        "mode",
        "host median µs, per process",
        "slowest/fastest",
        "the same against its tick",
        "each process against its tick, over the median",
    ]
    print(tabulate(rows, head, tablefmt="github"))
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
