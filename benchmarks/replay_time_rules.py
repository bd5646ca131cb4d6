"""Which rule should turn a region's host-time figures into a verdict? Rules replayed on a
kept run of bench_models.py (or any run kept the same way).

It reads what `bench_models.py --keep DIR` kept (or `bench_gate.py --keep DIR`: its A/A
reruns a and e, its slowed ones c, d, f and g): the pooled baselines (DIR/neuronperf, and
DIR/neuronperf-slow recorded with the +25% spin) and the JSON reports of the reruns: A/A
(a-*.json: every verdict other than "same" is false), +25% (b-*.json: each should regress)
and faster (c-*.json, judged against the slowed recording: none may regress). Each rerun is
judged again, from the figures it kept, by each rule:

  ticks      the reference ticks of the region's kind must agree (gate/ticks.py); the raw
             change plays no part: the rule before issue 36
  raw        the raw rounds alone, with the bootstrap interval
  raw+ticks  the raw change and every tick of the region's kind must agree: a raw speed-up
             is never a regression, a raw slow-down never an improvement
  raw~ticks  as ticks, but a change counts only where the raw median moved past the
             tolerance too (the raw point, not its interval)
  ticks, raw's way  as ticks, but a change counts only where the raw median moved the same
             way (a regression whose raw median fell is the same, and the mirror)
  ticks, raw not against  as ticks, but a change counts only where the raw rounds do not
             show the other way with confidence (a regression whose raw interval lies
             wholly below no change is the same, and the mirror): gate/times.py with_raw,
             the rule before the recording processes' spread
  compute tick, raw not against  as the rule now, but against the compute tick (a 96x96
             matmul) alone wherever both sides have it, whatever the region's kind
  µs ticks, raw not against  as the rule now, but millisecond regions too judged by the
             microsecond ticks of their kind (gate/ticks.py kinds_of): the rule before the
             millisecond tick
  ms+memory, raw not against  as the rule now, but a millisecond region needs the memory
             tick to agree with the millisecond one
  geomean, raw not against  as the rule now, but a millisecond region's rounds are judged
             against the geometric mean of every tick both sides timed (per round, the
             geometric mean of its ratios to them), one interval
  past processes  ticks, raw not against, and a change counts only past the tolerance
             beyond how far the baseline's recording processes ran apart against each tick
             that judged it (gate/spread.py): the rule now

The kept figures are those after any second look the live rule took, so a replayed verdict
differs from a live one where one rule would have taken a second look and another not.

    python benchmarks/replay_time_rules.py DIR [--tolerance 0.1]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from statistics import median

from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import load
from pytest_neuronperf.gate.spread import held_back
from pytest_neuronperf.gate.ticks import (
    COMPUTE,
    LONG,
    MEMORY,
    TICK_FIELDS,
    agreed,
    judging_kinds,
    kinds_of,
    relative_changes,
    relatives_of,
    tick_offsets,
)
from pytest_neuronperf.gate.times import with_raw
from pytest_neuronperf.model import Figures, Measurement, Record
from pytest_neuronperf.stats import TimeChange, compare_times

# A rule sees the raw change, the changes against the ticks that judge the region, and the
# change against every tick both sides were timed against, by kind (with, under "µs" and
# "geomean", the change against the microsecond ticks of the region's kind and against the
# geometric mean of every tick).
Ticks = list[tuple[str, TimeChange]]
Rule = Callable[[TimeChange, Ticks, dict[str, TimeChange]], TimeChange | None]
MICRO, GEOMEAN = "µs", "geomean"
# Under PAST, with its entry's offsets folded in, the change the live rule would judge.
PAST = "past processes"


def _raw_point(raw: TimeChange, ticks: Ticks, _: dict[str, TimeChange]) -> TimeChange | None:
    judged = agreed(ticks)
    if judged is None or judged.verdict not in ("regressed", "improved"):
        return judged
    past = raw.ratio > 1 + raw.tolerance or raw.ratio < 1 / (1 + raw.tolerance)
    same_way = (raw.ratio > 1) == (judged.verdict == "regressed")
    return judged if past and same_way else replace(judged, verdict="same")


def _raw_direction(raw: TimeChange, ticks: Ticks, _: dict[str, TimeChange]) -> TimeChange | None:
    judged = agreed(ticks)
    if judged is None or judged.verdict not in ("regressed", "improved"):
        return judged
    same_way = (raw.ratio >= 1) == (judged.verdict == "regressed")
    return judged if same_way else replace(judged, verdict="same")


def raw_not_against(
    raw: TimeChange, ticks: Ticks, _: dict[str, TimeChange] | None = None
) -> TimeChange | None:
    # The gate's own overrule, so that the replay judges as the live rule does.
    judged = agreed(ticks)
    return None if judged is None else with_raw(raw, judged)


def _compute_alone(
    raw: TimeChange, ticks: Ticks, every: dict[str, TimeChange]
) -> TimeChange | None:
    compute = every.get(COMPUTE)
    return raw_not_against(raw, [(COMPUTE, compute)] if compute else ticks)


def _micro(raw: TimeChange, ticks: Ticks, every: dict[str, TimeChange]) -> TimeChange | None:
    micro = every.get(MICRO)
    return with_raw(raw, micro) if micro is not None else raw_not_against(raw, ticks)


def _long_and_memory(
    raw: TimeChange, ticks: Ticks, every: dict[str, TimeChange]
) -> TimeChange | None:
    if [k for k, _ in ticks] != [LONG] or MEMORY not in every:
        return raw_not_against(raw, ticks)
    return raw_not_against(raw, [*ticks, (MEMORY, every[MEMORY])])


def _geomean(raw: TimeChange, ticks: Ticks, every: dict[str, TimeChange]) -> TimeChange | None:
    mean = every.get(GEOMEAN)
    if [k for k, _ in ticks] != [LONG] or mean is None:
        return raw_not_against(raw, ticks)
    return with_raw(raw, mean)


def _past(raw: TimeChange, ticks: Ticks, every: dict[str, TimeChange]) -> TimeChange | None:
    return every.get(PAST) or raw_not_against(raw, ticks)


RULES: dict[str, Rule] = {
    "ticks": lambda raw, ticks, _: agreed(ticks),
    "raw": lambda raw, ticks, _: raw,
    "raw+ticks": lambda raw, ticks, _: agreed([("raw", raw), *ticks]),
    "raw~ticks": _raw_point,
    "ticks, raw's way": _raw_direction,
    "ticks, raw not against": raw_not_against,
    "compute tick, raw not against": _compute_alone,
    "µs ticks, raw not against": _micro,
    "ms+memory, raw not against": _long_and_memory,
    "geomean, raw not against": _geomean,
    PAST: _past,
}
# Per scenario: its name, the letters of its kept reports, and the baselines it was judged
# against; bench_models.py's layout, and bench_gate.py's (DIR/baselines, A/A a and e, more
# data c, d, f, g).
SCENARIOS = {"a": "A/A", "b": "+25%", "c": "faster"}
LAYOUTS = {
    "models": {"a": ("a", "neuronperf"), "b": ("b", "neuronperf"), "c": ("c", "neuronperf-slow")},
    "gate": {"a": ("ae", "baselines"), "b": ("cdfg", "baselines"), "c": ("", "baselines")},
}


def reruns(directory: Path, letters: str) -> list[Measurement]:
    return [
        Record.from_dict(row).measurement
        for letter in letters
        for path in sorted(directory.glob(f"{letter}-*.json"))
        for row in json.loads(path.read_text())["measurements"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.1)
    args = parser.parse_args()
    # (rule, region, scenario) -> verdict -> count
    counts: dict[tuple[str, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    moves: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    # region -> its recording processes' offsets against each tick that judged it
    spreads: dict[str, str] = {}
    layout = LAYOUTS["gate" if (args.directory / "baselines").is_dir() else "models"]
    for scenario in SCENARIOS:
        letters, where = layout[scenario]
        runs = reruns(args.directory, letters)
        if not runs:
            continue
        baselines = load(args.directory / where, runs[0].device_kind)
        for m in runs:
            entry: Entry | None = baselines.get(m.test_id, m.region)
            if entry is None:
                continue
            raw = compare_times(entry.host_us.samples, m.host_us.samples, args.tolerance)
            ticks = relative_changes(
                entry, relatives_of(m), args.tolerance, judging_kinds(entry, m)
            )
            every = dict(
                relative_changes(entry, relatives_of(m), args.tolerance, tuple(TICK_FIELDS))
            )
            micro = agreed(
                relative_changes(entry, relatives_of(m), args.tolerance, _micro_kinds(entry, m))
            )
            if micro is not None:
                every[MICRO] = micro
            mean = _geomean_change(entry, m, args.tolerance)
            if mean is not None:
                every[GEOMEAN] = mean
            live = past_processes(entry, raw, ticks)
            if live is not None:
                every[PAST] = live
            judged = agreed(ticks)
            moves[(m.region, scenario)].append((raw.ratio, judged.ratio if judged else 1.0))
            if scenario == "a":
                spreads[m.region] = " ".join(
                    f"{k} {tick_offsets(entry, k).text()}" for k, _ in ticks
                )
            for name, rule in RULES.items():
                verdict = rule(raw, ticks, every)
                counts[(name, m.region, scenario)][verdict.verdict if verdict else ""] += 1
    if not counts:
        sys.exit(f"{args.directory}: no rerun reports (bench_models.py --keep DIR)")
    regions = sorted({r for _, r, _ in counts})
    rows = []
    for region in [*regions, ""]:
        among = [region] if region else regions
        row = [region or "all", spreads.get(region, "")]
        for scenario in SCENARIOS:
            pairs = [p for r in among for p in moves.get((r, scenario), [])]
            row.append(_moves(pairs) if region else "")
        for name in RULES:
            a, b, c = (_summed(counts, name, among, s) for s in SCENARIOS)
            row.append(
                f"{a['regressed']}/{a['improved']} · {b['regressed']}/{sum(b.values())} · "
                f"{c['regressed']}/{c['improved']}"
            )
        rows.append(row)
    headers = ["region", "recording processes"]
    headers += [f"{s}: raw, judged" for s in SCENARIOS.values()]
    headers += [f"{name}" for name in RULES]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    print(
        "\nEach rule's cell: A/A regressed/improved (false) · +25% caught/reruns · faster "
        "regressed (false)/improved. 'raw, judged': median of the reruns' raw and "
        "judged changes, with their range. 'recording processes': the fastest and the "
        "slowest recording process's median over the pooled one, per tick that judged it."
    )
    return 0


def past_processes(entry: Entry, raw: TimeChange, ticks: Ticks) -> TimeChange | None:
    """The rule now (with_raw), judged the same where a tick's change does not get past the
    recording processes' offsets against that tick (gate/spread.py)."""
    judged = raw_not_against(raw, ticks)
    if judged is None:
        return None
    parts = [(k, c, tick_offsets(entry, k)) for k, c in ticks]
    return replace(judged, verdict="same") if held_back(judged, parts) else judged


def _micro_kinds(entry: Entry, m: Measurement) -> tuple[str, ...]:
    """The microsecond ticks of the region's kind, as gate/ticks.py judged before LONG."""
    flops, moved = entry.flops, entry.bytes_moved
    if m.work is not None:
        flops, moved = m.work.flops, m.work.bytes_moved
    tick = entry.dispatch_reference_us
    return kinds_of(
        entry.ops, entry.host_us.median, tick.median if tick is not None else None, flops, moved
    )


def _geomean_rounds(f: Figures, scales: dict[str, float]) -> list[float] | None:
    """Per round, the geometric mean of the round's ratios to every tick (each at the
    baseline's speed of that tick, so that the figures read as µs)."""
    series = [
        [v * scales[kind] for v in stats.samples]
        for kind, stats in relatives_of(f).items()
        if stats is not None and kind in scales
    ]
    if len(series) != len(scales) or len({len(s) for s in series}) != 1:
        return None
    return [math.prod(values) ** (1 / len(values)) for values in zip(*series, strict=True)]


def _geomean_change(entry: Entry, m: Measurement, tolerance: float) -> TimeChange | None:
    scales = {
        kind: ref.median
        for kind, (ref_field, _) in TICK_FIELDS.items()
        if (ref := getattr(entry, ref_field)) is not None and getattr(m, ref_field) is not None
    }
    then, now = _geomean_rounds(entry, scales), _geomean_rounds(m, scales)
    if not scales or then is None or now is None:
        return None
    return compare_times(then, now, tolerance)


def _summed(
    counts: dict[tuple[str, str, str], dict[str, int]], rule: str, regions: list[str], scenario: str
) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for region in regions:
        for verdict, n in counts[(rule, region, scenario)].items():
            total[verdict] += n
    return total


def _moves(pairs: list[tuple[float, float]]) -> str:
    if not pairs:
        return "-"
    raw, judged = [p[0] for p in pairs], [p[1] for p in pairs]
    return f"{_pct(median(raw))} ({_pct(min(raw))}..{_pct(max(raw))}), " + (
        f"{_pct(median(judged))} ({_pct(min(judged))}..{_pct(max(judged))})"
    )


def _pct(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%"


if __name__ == "__main__":
    raise SystemExit(main())
