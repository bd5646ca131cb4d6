"""Whether a region runs at the same speed in a recording process and in a compare process:
the same unchanged regions in fresh pytest processes that record a new baseline
(``--neuron-profile-update``, as ``neuronperf record``'s first process), pool into one
(``--neuron-profile-pool``, its later processes) and compare against one (a CI run).

A baseline is recorded once first; then modes alternate process by process, each on a
fresh copy of that baseline (update on an empty directory), so every mode sees the same
machine. Printed per model and mode: each process's median against the tick that judges
the region over the median of every process, their median, and the calls the window took.

    python benchmarks/explore_modes.py [--processes 5] [--models llama_compiled,...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from statistics import median
from typing import Any

import bench_models
from tabulate import tabulate

MODES = {"update": ["--neuron-profile-update"], "pool": ["--neuron-profile-pool"], "compare": []}


def one_process(project: Path, flags: list[str], where: str, models: str) -> dict[str, Any]:
    """model -> (its median against the tick that judges it, the window's calls) from one
    fresh process recording into or comparing against ``where``."""
    rows = bench_models.measured(project, models, f"--neuron-profile-dir={where}", *flags)
    return {m["region"]: (bench_models.judging_tick(m), m["host_calls"]) for m in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--models", default="llama_compiled,resnet_compiled,gpt2_compiled")
    opts = parser.parse_args()
    seen: dict[tuple[str, str], list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        project = bench_models.models_project(Path(tmp))
        one_process(project, MODES["update"], "base", opts.models)
        for i in range(opts.processes):
            order = list(MODES)[i % 3 :] + list(MODES)[: i % 3]
            for mode in order:
                where = project / "run"
                shutil.rmtree(where, ignore_errors=True)
                if mode != "update":
                    shutil.copytree(project / "base", where)
                for model, pair in one_process(project, MODES[mode], "run", opts.models).items():
                    seen.setdefault((model, mode), []).append(pair)
            print(f"round {i + 1}/{opts.processes} done", file=sys.stderr)
    rows = []
    for model in sorted({m for m, _ in seen}):
        mid = median(t for (m, _), v in seen.items() if m == model for t, _ in v)
        for mode in MODES:
            figures = seen[(model, mode)]
            rows.append(
                [
                    model,
                    mode,
                    " ".join(f"{t / mid:.2f}" for t, _ in figures),
                    f"{median(t for t, _ in figures) / mid:.2f}",
                    f"{median(c for _, c in figures):.0f}",
                ]
            )
    head = ["model", "process", "each against its tick, over all", "median", "calls"]
    print(tabulate(rows, head, tablefmt="github"))
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
