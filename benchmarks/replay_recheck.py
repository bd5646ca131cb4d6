"""Would rechecking a flagged region in fresh processes reach issue 36's targets? Replayed on
a kept run of bench_models.py (``--keep DIR``), before building it.

A baseline is pooled from the first R unchanged compare processes (as
replay_recording_processes.py pools them). Each later process is judged alone, by the rule
before the recording processes' spread (replay_recording_processes.py "raw not against");
where that first look flags the region, it is judged again on its rounds pooled with the
next K processes that ran (wrapping round to the first), and that verdict stands; where it
does not, the region passes. Two first looks:

  flagged   the first process's verdict is regressed or improved
  unsure    its interval reaches past the tolerance on either side

Each process starts one group, so neighbouring groups share processes: the counts are not
independent. Per model: the fewest +25% reruns of one model caught.

Then why, per model: the spread (sd of the log) of the unchanged processes' medians, raw
and against each tick that judges the model, and the processes each side would need to
pool for an unchanged region to stay inside the tolerance at three standard deviations:
2 * (3 * sd / log(1 + tolerance))^2 (the difference of two means of C processes each).

    python benchmarks/replay_recheck.py DIR [--tolerance 0.1]
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from statistics import stdev

from replay_recording_processes import RULES, Processes, kept_run, verdict
from replay_time_rules import raw_not_against
from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.pooled import pooled
from pytest_neuronperf.gate.ticks import judging_kinds, relative_changes, relatives_of
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.stats import Stats, compare_times

BEFORE = RULES[0]
RECORDING = (5, 8)
RECHECKS = (2, 3)
LOOKS = ("flagged", "unsure")
# Standard deviations an unchanged region's pooled change may move and stay inside.
Z = 3.0


def looks_changed(entry: Entry, m: Measurement, look: str, tolerance: float) -> bool:
    """Whether one process's measurement would send the region to be rechecked."""
    raw = compare_times(entry.host_us.samples, m.host_us.samples, tolerance)
    ticks = relative_changes(entry, relatives_of(m), tolerance, judging_kinds(entry, m))
    judged = raw_not_against(raw, ticks)
    if judged is None:
        return False
    if look == "flagged":
        return judged.verdict in ("regressed", "improved")
    return judged.high > 1 + tolerance or judged.low < 1 / (1 + tolerance)


def final(entry: Entry, group: list[Measurement], look: str, tolerance: float) -> str:
    """The verdict that stands: the pooled group's where the first look sent it on."""
    if not looks_changed(entry, group[0], look, tolerance):
        return "same"
    return verdict(entry, pooled(group), BEFORE, tolerance)


def main() -> int:
    args, unchanged, slowed = kept_run(__doc__)
    rows = [
        [r, k, look, *judged(unchanged, slowed, r, k, look, args.tolerance)]
        for r in RECORDING
        for k in RECHECKS
        for look in LOOKS
    ]
    headers = ["recording", "rechecks", "first look", "A/A false", "+25% caught", "per model"]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    print()
    headers = ["model", "against", "sd between processes", "processes per side"]
    print(tabulate(needed(unchanged, args.tolerance), headers=headers, tablefmt="github"))
    return 0


def judged(
    unchanged: Processes, slowed: Processes, r: int, k: int, look: str, tolerance: float
) -> list[str]:
    """A/A false, +25% caught and the fewest of one model caught, for a baseline of ``r``
    processes and groups of one process and ``k`` rechecks."""
    counts, fewest = Counter[str](), len(slowed)
    for region in unchanged[0]:
        entry = replace(Entry.of(pooled([p[region] for p in unchanged[:r]])), processes=r)
        rest = [p[region] for p in unchanged[r:]]
        slow = [p[region] for p in slowed]
        verdicts = {
            kind: [final(entry, [seq[(i + j) % len(seq)] for j in range(k + 1)], look, tolerance)
                   for i in range(len(seq))]
            for kind, seq in (("a", rest), ("b", slow))
        }  # fmt: skip
        counts["a"] += len(verdicts["a"])
        counts["false"] += sum(v in ("regressed", "improved") for v in verdicts["a"])
        caught = sum(v == "regressed" for v in verdicts["b"])
        counts["b"] += len(verdicts["b"])
        counts["caught"] += caught
        fewest = min(fewest, caught)
    return [
        f"{counts['false']}/{counts['a']}",
        f"{counts['caught']}/{counts['b']}",
        f"{fewest}/{len(slowed)}",
    ]


def needed(unchanged: Processes, tolerance: float) -> list[list[object]]:
    """Per model and figure: its spread between processes, and the processes per side it
    would take to gate it at ``tolerance`` (the module's docstring)."""
    out: list[list[object]] = []
    for region in unchanged[0]:
        ms = [p[region] for p in unchanged]
        kinds = judging_kinds(Entry.of(pooled(ms)), ms[0])
        series: dict[str, list[Stats | None]] = {"raw": [m.host_us for m in ms]}
        series |= {kind: [relatives_of(m)[kind] for m in ms] for kind in kinds}
        for name, stats in series.items():
            logs = [math.log(s.median) for s in stats if s is not None]
            sd = float(stdev(logs))
            per_side = 2 * (Z * sd / math.log(1 + tolerance)) ** 2
            out.append([region, name, f"{sd * 100:.1f}%", math.ceil(per_side)])
    return out


if __name__ == "__main__":
    raise SystemExit(main())
