"""Which reference ticks should judge a region's host time? Rules replayed on a kept gate run.

It reads what `bench_gate.py --keep DIR` kept: the pooled baseline (DIR/baselines) and the
JSON reports of the reruns, A/A (a-*.json, e-*.json: every regression is a false failure)
and slowed (c-*, d-*, f-*, g-*.json: every one should regress). Each rerun's host time is
judged against its entry tick by tick by the plugin's own comparison (gate/ticks.py
relative_changes, on the figures the rerun kept after any second look), then the ticks'
changes are combined by each rule:

  every    the memory and dispatch ticks, and the compute tick for arithmetic-heavy regions,
           must all agree (the rule before issue 26's end)
  kind     the ticks of what the region's time is made of must agree (gate/ticks.py
           judging_kinds: memory always, dispatch where the ops' dispatch is at least
           DISPATCH_SHARE of its time, compute where arithmetic-heavy): the rule now
  steadiest  the tick whose recorded rounds spread least (iqr / median), and any within
           1.5x of its spread, must agree
  majority two of three ticks agreeing suffice (all where two judge)

A rerun's verdict differs from its live one only where a second look would have been taken
under one rule and not another (the kept figures are the ones after it); for the rule the
run itself used, the replay gives the live verdicts.

    python benchmarks/replay_ticks.py DIR [--tolerance 0.1]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import load
from pytest_neuronperf.gate.ticks import (
    COMPUTE,
    DISPATCH,
    MEMORY,
    TICK_FIELDS,
    agreed,
    judging_kinds,
    relative_changes,
    relatives_of,
)
from pytest_neuronperf.model import Measurement, Record
from pytest_neuronperf.stats import TimeChange

Changes = list[tuple[str, TimeChange]]
A_A = ("a", "e")
SLOWED = ("c", "d", "f", "g")


def steadiest(entry: Entry, kinds: tuple[str, ...]) -> tuple[str, ...]:
    spreads = []
    for kind in kinds:
        rel = getattr(entry, TICK_FIELDS[kind][1])
        if rel is None or rel.median <= 0:
            return kinds
        spreads.append((rel.iqr / rel.median, kind))
    best = min(s for s, _ in spreads)
    return tuple(k for s, k in sorted(spreads) if s <= best * 1.5)


def majority(changes: Changes) -> TimeChange | None:
    if len(changes) >= 3:
        for verdict in ("regressed", "improved"):
            if sum(c.verdict == verdict for _, c in changes) >= 2:
                return agreed([(k, c) for k, c in changes if c.verdict == verdict])
    return agreed(changes)


def only(changes: Changes, kinds: tuple[str, ...]) -> TimeChange | None:
    return agreed([(k, c) for k, c in changes if k in kinds])


RULES: dict[str, Callable[[Entry, Measurement, Changes], TimeChange | None]] = {
    "every": lambda e, m, ch: agreed(ch),
    "kind": lambda e, m, ch: only(ch, judging_kinds(e, m)),
    "steadiest": lambda e, m, ch: only(ch, steadiest(e, tuple(k for k, _ in ch))),
    "majority": lambda e, m, ch: majority(ch),
}


def reruns(directory: Path, scenarios: tuple[str, ...]) -> list[tuple[str, Measurement]]:
    out = []
    for scenario in scenarios:
        for path in sorted(directory.glob(f"{scenario}-*.json")):
            for row in json.loads(path.read_text())["measurements"]:
                out.append((scenario, Record.from_dict(row).measurement))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.1)
    args = parser.parse_args()
    runs = [*reruns(args.directory, A_A), *reruns(args.directory, SLOWED)]
    if not runs:
        sys.exit(f"{args.directory}: no rerun reports (bench_gate.py --keep DIR)")
    baselines = load(args.directory / "baselines", runs[0][1].device_kind)
    # (rule, region, slowed?) -> [regressed, measured]
    counts: dict[tuple[str, str, bool], list[int]] = defaultdict(lambda: [0, 0])
    kinds_now: dict[str, str] = {}
    for scenario, m in runs:
        entry = baselines.get(m.test_id, m.region)
        if entry is None:
            continue
        now = judging_kinds(entry, m)
        every = (MEMORY, DISPATCH, *((COMPUTE,) if COMPUTE in now else ()))
        changes = relative_changes(entry, relatives_of(m), args.tolerance, every)
        kinds_now[m.region] = "+".join(k.split("-")[0] for k in now)
        for name, rule in RULES.items():
            verdict = rule(entry, m, changes)
            cell = counts[(name, m.region, scenario in SLOWED)]
            cell[0] += verdict is not None and verdict.verdict == "regressed"
            cell[1] += 1
    regions = sorted({r for _, r, _ in counts})
    rows = []
    for region in [*regions, ""]:
        row = [region or "all regions", kinds_now.get(region, "")]
        for name in RULES:
            for slowed in (False, True):
                keys = [(name, r, slowed) for r in (regions if not region else [region])]
                row.append(f"{sum(counts[k][0] for k in keys)}/{sum(counts[k][1] for k in keys)}")
        rows.append(row)
    headers = ["region", "kind's ticks"]
    for name in RULES:
        headers += [f"{name}: A/A false", f"{name}: slowed caught"]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
