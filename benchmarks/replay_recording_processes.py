"""How many recording processes, and compare processes, would the time rules need? Replayed
on a kept run of bench_models.py (``--keep DIR``), whose unchanged compare processes stand
in for recording processes: explore_modes.py found a recording process and a compare
process run at the same speed.

A baseline is pooled from the first R unchanged compare processes (a-*.json, as
``--neuron-profile-pool`` pools them: rounds concatenated, one process each); the rest are
judged against it in groups of C processes, each group's rounds pooled as one measurement:
unchanged (false verdicts) and the +25% reruns (b-*.json, caught), by two rules:

  raw not against  the reference ticks of the region's kind agree and the raw rounds do
                   not show the other way (gate/times.py with_raw): the rule before the
                   recording processes' spread
  past processes   that, and a change counts only past the tolerance beyond the farthest
                   recording process against each tick that judged it (gate/spread.py):
                   the rule now

The processes ran in turn over half an hour, so a larger R also reaches later in time.

    python benchmarks/replay_recording_processes.py DIR [--tolerance 0.1]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

from replay_time_rules import PAST, past_processes, raw_not_against
from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.pooled import pooled
from pytest_neuronperf.gate.ticks import judging_kinds, relative_changes, relatives_of
from pytest_neuronperf.model import Measurement, Record
from pytest_neuronperf.stats import compare_times

RULES = ("raw not against", PAST)
RECORDING = (3, 5, 8, 10)
COMPARING = (1, 2, 3, 4)


def processes(directory: Path, letter: str) -> list[dict[str, Measurement]]:
    """Each kept report of ``letter``, in the order they ran: region -> measurement."""
    paths = sorted(directory.glob(f"{letter}-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    return [
        {(m := Record.from_dict(row).measurement).region: m for row in rows}
        for rows in (json.loads(p.read_text())["measurements"] for p in paths)
    ]


def verdict(entry: Entry, m: Measurement, rule: str, tolerance: float) -> str:
    raw = compare_times(entry.host_us.samples, m.host_us.samples, tolerance)
    ticks = relative_changes(entry, relatives_of(m), tolerance, judging_kinds(entry, m))
    judged = past_processes(entry, raw, ticks) if rule == PAST else raw_not_against(raw, ticks)
    return judged.verdict if judged is not None else ""


Processes = list[dict[str, Measurement]]


def kept_run(description: str) -> tuple[argparse.Namespace, Processes, Processes]:
    """The command line's options, and its kept run's unchanged and slowed processes."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.1)
    args = parser.parse_args()
    unchanged, slowed = processes(args.directory, "a"), processes(args.directory, "b")
    if not unchanged or not slowed:
        raise SystemExit(f"{args.directory}: no a-*.json and b-*.json (bench_models.py --keep)")
    return args, unchanged, slowed


def main() -> int:
    args, unchanged, slowed = kept_run(__doc__)
    rows = []
    for r in RECORDING:
        for c in COMPARING:
            row: list[object] = [r, c]
            for rule in RULES:
                false, caught = Counter[str](), Counter[str]()
                for region in unchanged[0]:
                    entry = replace(
                        Entry.of(pooled([p[region] for p in unchanged[:r]])), processes=r
                    )
                    rest = [p[region] for p in unchanged[r:]]
                    slow = [p[region] for p in slowed]
                    for group in (rest[i : i + c] for i in range(0, len(rest) - c + 1, c)):
                        v = verdict(entry, pooled(group), rule, args.tolerance)
                        false["n"] += 1
                        false["hit"] += v in ("regressed", "improved")
                    for group in (slow[i : i + c] for i in range(0, len(slow) - c + 1, c)):
                        caught["n"] += 1
                        caught["hit"] += (
                            verdict(entry, pooled(group), rule, args.tolerance) == "regressed"
                        )
                row += [f"{false['hit']}/{false['n']}", f"{caught['hit']}/{caught['n']}"]
            rows.append(row)
    headers = ["recording processes", "compare processes"]
    headers += [f"{rule}: {what}" for rule in RULES for what in ("A/A false", "+25% caught")]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
