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

Each is judged twice: on the rounds as measured ("raw", what the plugin does), and at the
recording's speed: the rounds scaled by the reference ticks of the baseline bench_gate kept
(DIR/baselines), as the baseline rule scales its medians; a rule tried for budgets and not
kept (docs/gate-quality.md). Each way's budget is 1.2x the A/A median of what it judges.

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

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import load
from pytest_neuronperf.gate.budget import check
from pytest_neuronperf.gate.marker import neuron_budget
from pytest_neuronperf.gate.ticks import TICK_FIELDS, judging_kinds
from pytest_neuronperf.measure.reference import against_reference
from pytest_neuronperf.model import Measurement, Record
from pytest_neuronperf.stats import Stats, median_interval

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


def entries(directory: Path, ms: list[Measurement]) -> dict[tuple[str, str], Entry]:
    """The kept baseline's entry of each rerun's region (bench_gate --keep DIR/baselines)."""
    out = {}
    kinds = {m.device_kind for m in ms}
    for kind in kinds:
        store = load(directory / "baselines", kind)
        for m in ms:
            entry = store.get(m.test_id, m.region)
            if entry is not None:
                out[(m.test_id, m.region)] = entry
    return out


def judged(m: Measurement, entry: Entry | None, metric: str) -> tuple[float, Measurement]:
    """The median a budget on ``metric`` judges and the measurement to hand the check: as
    measured, or (with ``entry``) at the entry's recording speed."""
    if entry is None:
        return getattr(m, metric).median, m
    scaled = at_recording_speed(entry, m)
    return getattr(scaled, metric).median, scaled


def at_recording_speed(entry: Entry, m: Measurement) -> Measurement:
    """``m`` with its rounds scaled by the reference ticks the entry was recorded beside, as
    the baseline rule scales its medians: host time at each tick that judges the region,
    the one whose interval reaches lowest kept (over a limit only at every tick), device
    time at the profiled rounds' tick. A time either side lacks ticks for stays raw."""
    device = scaled_rounds(m.device_us, m.device_reference_us, entry.device_reference_us)
    hosts = [
        s
        for kind in judging_kinds(entry, m)
        if (s := scaled_rounds(m.host_us, *host_ticks(entry, m, kind))) is not None
    ]
    host = min(hosts, key=lambda s: median_interval(s.samples)[1]) if hosts else None
    return replace(m, device_us=device or m.device_us, host_us=host or m.host_us)


def host_ticks(entry: Entry, m: Measurement, kind: str) -> tuple[Stats | None, Stats | None]:
    tick_field, _ = TICK_FIELDS[kind]
    now: Stats | None = getattr(m, tick_field)
    then: Stats | None = getattr(entry, tick_field)
    return now, then


def scaled_rounds(rounds: Stats, now: Stats | None, then: Stats | None) -> Stats | None:
    if now is None or then is None:
        return None
    out = against_reference(rounds.samples, now.samples, then.median)
    return Stats.of(out) if out is not None else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--budget", type=float, default=1.2)
    parser.add_argument("--slower", type=float, default=1.5)
    args = parser.parse_args()
    ms = reruns(args.directory)
    if not ms:
        sys.exit(f"{args.directory}: no a-*.json or e-*.json reports (bench_gate.py --keep)")
    stored = entries(args.directory, ms)
    regions = sorted({m.region for m in ms})
    rows = []
    totals: dict[str, list[int]] = {}
    for way in ("raw", "at speed"):
        for region in regions:
            mine = [m for m in ms if m.region == region]
            for metric in METRICS:
                lookup = stored if way == "at speed" else {}
                level = statistics.median(
                    judged(m, lookup.get((m.test_id, m.region)), metric)[0] for m in mine
                )
                limit = level * args.budget
                budget = neuron_budget(**{f"max_{metric}": limit})
                cells = []
                for i, factor in enumerate((1.0, args.slower)):
                    for j, strict in enumerate((False, True)):
                        failed = 0
                        for m in mine:
                            s = scaled(m, factor)
                            _, as_judged = judged(s, lookup.get((m.test_id, m.region)), metric)
                            failed += bool(check(budget, [as_judged], strict=strict))
                        totals.setdefault(way, [0, 0, 0, 0])[2 * i + j] += failed
                        cells.append(f"{failed}/{len(mine)}")
                spread = [
                    judged(m, lookup.get((m.test_id, m.region)), metric)[0] / level for m in mine
                ]
                rows.append(
                    [
                        way,
                        region,
                        metric,
                        f"{level:,.1f}",
                        f"{min(spread):.2f}-{max(spread):.2f}x",
                        *cells,
                    ]
                )
    headers = [
        "judged",
        "region",
        "metric",
        "A/A median µs",
        "reruns' medians",
        f"false fail @{args.budget:g}x (95%)",
        "(strict)",
        f"caught @{args.slower:g}x (95%)",
        "(strict)",
    ]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    n = len(ms) * len(METRICS)
    for way, (false, false_strict, caught, caught_strict) in totals.items():
        print(
            f"{way}: false failures {false}/{n} (strict {false_strict}/{n}), "
            f"caught {caught}/{n} (strict {caught_strict}/{n})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
