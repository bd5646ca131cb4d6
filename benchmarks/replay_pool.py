"""What pooling the baseline over recording processes did, judged offline on a kept run.

``bench_gate.py --keep DIR`` keeps the pooled baseline and every rerun's JSON report. The
gate is a pure function of them (compare.py), so this judges the same reruns again against
each recording process alone (its ``rounds`` of the pooled entry's samples) and against the
pool: per scenario, how many measurements each baseline would have failed, and per process
how far the A/A reruns sat from it (the offset a one-process baseline carries into every
verdict). Only the time rule is replayed (the exact counts do not depend on the baseline's
process). Where the live run took a second look, the report holds it and that is what is
judged; where it did not, a process is judged on the first window alone, without the second
look a live run against it would have taken: its failures here are an upper bound.

    python benchmarks/replay_pool.py DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from pathlib import Path

from tabulate import tabulate

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import load
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.model import ROUND_SAMPLES as SAMPLED
from pytest_neuronperf.model import Measurement, Record


def process(entry: Entry, i: int) -> Entry:
    """Recording process ``i`` of a pooled entry, as the entry it would have written alone."""
    n = entry.rounds
    cut = {}
    for name in SAMPLED:
        stats = getattr(entry, name)
        if stats is not None:
            cut[name] = replace(stats, samples=stats.samples[i * n : (i + 1) * n])
    return replace(entry, processes=1, **cut)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("keep", type=Path, help="the directory bench_gate.py --keep wrote")
    opts = parser.parse_args()
    files = sorted((opts.keep / "baselines").glob("*.json"))
    kind = json.loads(files[0].read_text())["device_kind"]
    baselines = load(opts.keep / "baselines", kind)
    reports: dict[str, list[Measurement]] = {}
    for path in sorted(opts.keep.glob("?-*.json")):
        doc = json.loads(path.read_text())
        ms = [Record.from_dict(r).measurement for r in doc["measurements"]]
        reports.setdefault(path.name[0], []).extend(ms)
    processes = min(e.processes for r in baselines.entries.values() for e in r.values())
    judges = {"pool": lambda e: e} | {
        f"process {i + 1}": (lambda e, i=i: process(e, i)) for i in range(processes)
    }
    rows = []
    offsets: dict[str, dict[str, list[float]]] = {}
    for letter, ms in sorted(reports.items()):
        row = [letter, len(ms)]
        for name, judge in judges.items():
            failed = 0
            for m in ms:
                entry = baselines.get(m.test_id, m.region)
                if entry is None:
                    continue
                c = compare(judge(entry), replace(m, work=None), tolerance=0.1, host_timed=True)
                failed += c.host is not None and c.host.verdict == "regressed"
                if letter in "ae" and c.host is not None:
                    offsets.setdefault(name, {}).setdefault(m.region, []).append(c.host.ratio)
            row.append(f"{failed}/{len(ms)}")
        rows.append(row)
    print(
        tabulate(
            rows,
            headers=["scenario", "measurements", *(f"time rule vs {j}" for j in judges)],
            tablefmt="github",
        )
    )
    print("\nA/A reruns (a, e) against each baseline: median change of the gated figure")
    for name, by_region in offsets.items():
        cells = ", ".join(
            f"{region} {(statistics.median(r) - 1) * 100:+.0f}%"
            for region, r in sorted(by_region.items())
        )
        print(f"  {name}: {cells}")


if __name__ == "__main__":
    main()
