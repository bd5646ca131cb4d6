"""Would two revisions run in alternation on one runner, C processes a side and pooled,
keep unchanged code inside the tolerance? Replayed on a kept run of bench_models.py
(``--keep DIR``), whose unchanged compare processes ran one after another: each group of 2C
in a row is split into its even processes (the base side, pooled as a baseline is) and its
odd ones (the new side, pooled as one measurement), and judged by the two rules of
replay_recording_processes.py. Only unchanged code: the kept runs' slowed processes all ran
after the unchanged ones, so no slowdown was interleaved.

    python benchmarks/replay_interleaved.py DIR [--tolerance 0.1]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from replay_recording_processes import RULES, Processes, kept_run, verdict
from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.pooled import pooled

PER_SIDE = (1, 2, 3, 4, 5)


def false_verdicts(unchanged: Processes, c: int, rule: str, tolerance: float) -> str:
    """Unchanged groups judged changed, of all groups, with ``c`` processes a side."""
    counts = Counter[str]()
    for region in unchanged[0]:
        seq = [p[region] for p in unchanged]
        for i in range(0, len(seq) - 2 * c + 1, 2 * c):
            group = seq[i : i + 2 * c]
            base = replace(Entry.of(pooled(group[0::2])), processes=c)
            counts["n"] += 1
            counts["false"] += verdict(base, pooled(group[1::2]), rule, tolerance) in (
                "regressed",
                "improved",
            )
    return f"{counts['false']}/{counts['n']}"


def main() -> int:
    args, unchanged, _ = kept_run(__doc__)
    rows = [
        [c, *(false_verdicts(unchanged, c, rule, args.tolerance) for rule in RULES)]
        for c in PER_SIDE
    ]
    headers = ["processes a side", *(f"{rule}: A/A false" for rule in RULES)]
    print(tabulate(rows, headers=headers, tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
