"""Whether a compiled model's two speeds from one fresh process to the next follow where
the process's memory landed: the same unchanged regions in fresh pytest processes with
address-space randomization on (as every process runs) and off (``setarch -R``).

Each process runs one measured test per model of bench_models.py (same configs, same seeds,
one thread, the default 10 rounds over the 1 s window) and writes the JSON report. Modes
alternate process by process, so both see the same machine. Printed per model and mode: the
range of the processes' host medians, their spread (slowest over fastest), the same spread
against the tick that judges the region, and each process's median over the mode's median.

    python benchmarks/explore_aslr.py [--processes 8] [--models llama_compiled,...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from statistics import median

import bench_models
from tabulate import tabulate

MODES: dict[str, tuple[str, ...]] = {"random": (), "fixed": ("setarch", "-R")}


def one_process(project: Path, mode: str, models: str) -> dict[str, tuple[float, float]]:
    """model -> (host median µs, its median against the tick that judges it) from one
    fresh process."""
    rows = bench_models.measured(project, models, prefix=MODES[mode])
    return {m["region"]: (m["host_us"]["median"], bench_models.judging_tick(m)) for m in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--models", default="llama_compiled,resnet_compiled,gpt2_compiled")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = bench_models.models_project(Path(tmp))
        seen = bench_models.alternated(
            opts.processes, list(MODES), lambda mode: one_process(project, mode, opts.models)
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
                f"{min(host):,.0f}-{max(host):,.0f}",
                f"{max(host) / min(host):.2f}",
                f"{max(tick) / min(tick):.2f}",
                " ".join(f"{t / mid:.2f}" for t in tick),
            ]
        )
    head = [
        "model",
        "addresses",
        "host median µs, per process",
        "slowest/fastest",
        "the same against its tick",
        "each process against its tick, over the median",
    ]
    print(tabulate(rows, head, tablefmt="github"))
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
