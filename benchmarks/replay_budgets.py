"""Absolute time budgets replayed on a kept gate run: how often would `max_device_us` and
`max_host_us`, set at 1.2x each region's A/A median, fail unchanged code, and how often
would they catch the region at 1.5x that median, under the 95%-confidence rule and under
strict mode (the bare median)?

It reads the JSON reports `bench_gate.py --keep DIR` copied from its A/A reruns (a-*.json,
e-*.json): per region and metric, the budget is 1.2x the median over the reruns of each
rerun's median. Each rerun's measurement is then judged by the plugin's own check
(gate.budget.check, a pure function) as measured (every failure is a false one), and with
every round sample scaled by 1.5 (the same noise, the region 1.5x slower: each should fail).

The rounds judged are what those reruns measured: on CPU host_us per round is a window's
median (bench_gate writes a JSON report, so its windows run whole), device_us the profiled
rounds; a plain `pytest` run times one call per round instead, with no window.

    python benchmarks/replay_budgets.py DIR [--budget 1.2] [--slower 1.5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from tabulate import tabulate

from pytest_neuronperf.gate.budget import check
from pytest_neuronperf.gate.marker import neuron_budget
from pytest_neuronperf.model import Measurement, Record
from pytest_neuronperf.stats import Stats

METRICS = ("device_us", "host_us")


def reruns(directory: Path) -> list[Measurement]:
    out = []
    for path in sorted([*directory.glob("a-*.json"), *directory.glob("e-*.json")]):
        for row in json.loads(path.read_text())["measurements"]:
            out.append(Record.from_dict(row).measurement)
    return out


def scaled(m: Measurement, factor: float) -> Measurement:
    return replace(
        m,
        device_us=Stats.of([v * factor for v in m.device_us.samples]),
        host_us=Stats.of([v * factor for v in m.host_us.samples]),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--budget", type=float, default=1.2)
    parser.add_argument("--slower", type=float, default=1.5)
    args = parser.parse_args()
    ms = reruns(args.directory)
    if not ms:
        sys.exit(f"{args.directory}: no a-*.json or e-*.json reports (bench_gate.py --keep)")
    regions = sorted({m.region for m in ms})
    rows = []
    for region in regions:
        mine = [m for m in ms if m.region == region]
        for metric in METRICS:
            level = statistics.median(getattr(m, metric).median for m in mine)
            limit = level * args.budget
            budget = neuron_budget(**{f"max_{metric}": limit})
            cells = []
            for factor in (1.0, args.slower):
                for strict in (False, True):
                    failed = sum(
                        bool(check(budget, [scaled(m, factor)], strict=strict)) for m in mine
                    )
                    cells.append(f"{failed}/{len(mine)}")
            spread = [getattr(m, metric).median / level for m in mine]
            rows.append(
                [
                    region,
                    metric,
                    f"{level:,.1f}",
                    f"{min(spread):.2f}-{max(spread):.2f}x",
                    *cells,
                ]
            )
    print(
        tabulate(
            rows,
            headers=[
                "region",
                "metric",
                "A/A median µs",
                "reruns' medians",
                f"false fail @{args.budget:g}x (95%)",
                "(strict)",
                f"caught @{args.slower:g}x (95%)",
                "(strict)",
            ],
            tablefmt="github",
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
