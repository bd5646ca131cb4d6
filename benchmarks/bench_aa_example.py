"""A/A reruns of the README's example against one baseline: the CPU time gate's false
failures on tiny, dispatch-bound regions (RMSNorm 16x1024, about 45 µs), over the tens of
minutes a CI sees between recording a baseline and comparing against it.

Records a baseline of ``examples/test_rmsnorm.py`` into a temporary directory (pooled over
``--record-processes`` processes, as ``neuronperf record`` does), then reruns
the example ``--reruns`` times, spread evenly over ``--spread`` seconds, comparing against
it. Per rerun and region it prints the gated change against each reference tick (the
memory-bound one and the dispatch-bound one, reference.py) and the verdict; at the end, the
false failures (every failure here is false: nothing changed) and what a gate on the memory
tick alone would have called on the same windows.

    python benchmarks/bench_aa_example.py [--reruns 20] [--spread 1800] [--record-processes 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from suite_cmd import pytest_cmd

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import load
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.model import Measurement

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/test_rmsnorm.py"


def pytest(directory: Path, *extra: str) -> None:
    subprocess.run(
        pytest_cmd(EXAMPLE, "--neuron-profile", f"--neuron-profile-dir={directory}", *extra),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip


def change(entry: Entry, m: Measurement, which: str) -> float:
    """The gated figure's median ratio, current / baseline, against one reference."""
    if which == "memory":
        then, now = entry.host_relative, m.host_relative
    else:
        then, now = entry.host_relative_dispatch, m.host_relative_dispatch
    if then is None or now is None:
        return float("nan")
    return now.median / then.median - 1


def memory_only(entry: Entry, m: Measurement) -> str:
    """The verdict of the gate before the dispatch tick, on the same window."""
    e = replace(entry, host_relative_dispatch=None, dispatch_reference_us=None)
    c = compare(e, replace(m, host_relative_dispatch=None), tolerance=0.1, host_timed=True)
    return c.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--spread", type=float, default=1800.0)
    parser.add_argument(
        "--record-processes",
        type=int,
        default=3,
        help="processes the baseline is pooled over, as `neuronperf record` does",
    )
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baselines"
        started = time.monotonic()
        pytest(base, "--neuron-profile-update")
        for _ in range(opts.record_processes - 1):
            pytest(base, "--neuron-profile-pool")
        files = list(base.glob("*.json"))
        if len(files) != 1:
            sys.exit(f"expected one baseline file in {base}, found {files}")
        kind = json.loads(files[0].read_text())["device_kind"]
        baselines = load(base, kind)
        ours = alone = measured = seconds = 0
        for i in range(opts.reruns):
            due = started + (i + 1) * opts.spread / opts.reruns
            time.sleep(max(0.0, due - time.monotonic()))
            report = Path(tmp) / f"rerun{i}.json"
            pytest(base, f"--neuron-profile-json={report}")
            cells = []
            for row in json.loads(report.read_text())["measurements"]:
                m = Measurement.from_dict(row["measurement"])
                entry = baselines.get(m.test_id, m.region)
                if entry is None:
                    continue
                failed = row["baseline"] == "regressed"
                old = memory_only(entry, m) == "regressed"
                measured += 1
                ours += failed
                alone += old
                seconds += bool(m.recheck_note)
                cells.append(
                    f"{m.test_id.split('::')[-1][5:17]}/{m.region[8:13]} "
                    f"m{change(entry, m, 'memory'):+.0%} d{change(entry, m, 'dispatch'):+.0%}"
                    + (" FAIL" if failed else "")
                    + (" (m-alone FAIL)" if old else "")
                )
            print(f"{time.monotonic() - started:6.0f}s  " + "  ".join(cells), flush=True)
        print(
            f"\n{opts.reruns} A/A reruns over {time.monotonic() - started:.0f} s, "
            f"{measured} measurements against one baseline:\n"
            f"  false failures, both references must agree: {ours}/{measured}\n"
            f"  the memory tick alone, on the same windows: {alone}/{measured}\n"
            f"  second looks sampled: {seconds}"
        )


if __name__ == "__main__":
    main()
