"""How far one unchanged region's host time moves from one fresh pytest process to the next,
with glibc's malloc thresholds fixed (`--neuron-profile-heap=fixed`, the default) and left
to move (`system`); docs/heap.md.

Each process runs one measured test per model of bench_models.py (same configs, same seeds,
one thread, the default 10 rounds over the 1 s window) and writes the JSON report. Modes
alternate process by process, so both see the same machine. Printed per model and mode: the
range of the processes' host medians, their spread (slowest over fastest), the same spread
of the medians against the memory tick, and the median page faults of a measured round.

    python benchmarks/explore_heap.py [--processes 10] [--models rmsnorm,mlp,llama_fwd]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from statistics import median

import bench_models
from tabulate import tabulate

MODES = ("fixed", "system")


def one_process(project: Path, mode: str, models: str) -> dict[str, tuple[float, float, float]]:
    """model -> (host median µs, its median against the memory tick, page faults of a
    measured round) from one fresh process."""
    rows = bench_models.measured(project, models, f"--neuron-profile-heap={mode}")
    return {
        m["region"]: (
            m["host_us"]["median"],
            m["host_relative"]["median"],
            m["page_faults"] or 0.0,
        )
        for m in rows
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--models", default="rmsnorm,mlp,llama_fwd")
    opts = parser.parse_args()
    seen = bench_models.alternated_in_project(
        opts.processes, MODES, lambda project, mode: one_process(project, mode, opts.models)
    )
    rows = []
    for (model, mode), figures in sorted(seen.items()):
        host = [h for h, _, _ in figures]
        tick = [t for _, t, _ in figures]
        rows.append(
            [
                model,
                mode,
                *bench_models.spread_cells(host, tick),
                f"{median(f for _, _, f in figures):.0f}",
            ]
        )
    head = [
        "model",
        "heap",
        "host median µs, per process",
        "slowest/fastest",
        "the same against the memory tick",
        "faults/round",
    ]
    print(tabulate(rows, head, tablefmt="github"))


if __name__ == "__main__":
    main()
