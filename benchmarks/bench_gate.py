"""Gate quality: pytest-neuronperf's baseline gate next to pytest-benchmark's
``--benchmark-compare-fail=median:10%``, on the same small torch workloads, in the same runs.

One baseline run records both tools' baselines (ours then pools two more recording
processes into it, as ``neuronperf record --processes 3`` does; --record-processes); then
every rerun is one pytest process with both plugins on (so both see the same machine
state), judged against that one baseline:
  (a) A/A: nothing changed                  -> any failure is a false failure
  (b) fusion broken: one extra op            -> should fail every time
  (c) 25% slower: more data through the same ops -> should fail (the realised slowdown is
      shown; the exact FLOPs/bytes gate sees the extra data before time is judged)
  (d)-(f) as (c) and (a) with FLOP/byte counting off, so only the time rule can tell, and
          twice the data
  (g) less extra data, aiming at +25% itself, time rule alone (below it, some slowdowns pass:
      the tolerance is 10% and the interval must clear it)
"time vs A/A": what a scenario did to the figures the gate judges, per region against the
memory-bound reference tick / the dispatch-bound one; a regression must show in both.
"second looks": how many of our measurements regressed in their first host-time window and
were judged again on three more, pooled (measure.py); in the A/A rows each is a false
failure avoided.

The regions: naive RMSNorm 64x1024, a multiply-and-sum of 2^18 floats, and "tiny", the
README example's naive RMSNorm at 16x1024 (about 24 µs, nearly all dispatch).

Each rerun is a fresh process, as CI runs are: in-process reruns would share allocator and
cache state and understate run-to-run drift. Both tools run single-threaded torch: on this
2-core box a parallel op waits milliseconds for a core another process holds.
``--torch-threads=default`` leaves torch's own count instead (OMP_NUM_THREADS unset): ours
then measures at its --neuron-profile-threads (1), pytest-benchmark at torch's count.

    python benchmarks/bench_gate.py [--aa 20] [--fusion 5] [--slow 20] [--only abcdefg]
                                    [--record-processes 3] [--keep DIR] [--torch-threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tabulate import tabulate

WORKLOADS = """
import os
import pytest
import torch

# --torch-threads=default leaves torch's own count (and OMP_NUM_THREADS unset): what a suite
# that never thought about threads does; pytest-neuronperf then fixes the count itself.
if os.environ.get("BENCH_TORCH_THREADS", "1") != "default":
    torch.set_num_threads(int(os.environ.get("BENCH_TORCH_THREADS", "1")))
INJECT = os.environ.get("BENCH_INJECT", "none")
# More data through the same ops, enough for each region to take at least 25% longer: RMSNorm's
# six small ops spend much of their time in dispatch, so its rows grow 1.7x (+27-36% measured);
# mul_sum's 1.25x data realised anything from +12% to +28% from one run to the next (memory
# bandwidth is what the neighbours share), so it gets 1.5x. The table prints what each run
# realised, on the figure the gate judges.
# "near" aims at the 25% itself (1.5x and 1.3x data realised +20% and +17% in one run), where
# a 10% tolerance with a confidence interval starts to let slowdowns through.
# "tiny" is the README example's RMSNorm, 16x1024 (about 24 µs unprofiled here): six ops that
# are nearly all dispatch, so its time grows slowly with data (alone: 32 rows +30%, 64 rows
# +93%; in the gate's window 2x rows realised only +16-23%), so it gets 3x, 2.5x and 4x.
SCALES = {
    "slow": {"rmsnorm": 1.7, "mul_sum": 1.5, "tiny": 3.0},
    "near": {"rmsnorm": 1.6, "mul_sum": 1.4, "tiny": 2.5},
    "slow2": {"rmsnorm": 2.0, "mul_sum": 2.0, "tiny": 4.0},
}
SCALE = SCALES.get(INJECT, {})


def rmsnorm(x, w):
    y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w
    if INJECT == "fusion":
        y = y + 0.0  # one more op: what a broken fusion looks like
    return y


def mul_sum(x):
    y = x * 2.0
    if INJECT == "fusion":
        y = y + 0.0
    return y.sum()


def inputs(name):
    torch.manual_seed(0)
    scale = SCALE.get(name, 1.0)
    if name in ("rmsnorm", "tiny"):
        rows = 64 if name == "rmsnorm" else 16
        return torch.randn(int(rows * scale), 1024), torch.randn(1024)
    return (torch.randn(int(2**18 * scale)),)


FNS = {"rmsnorm": rmsnorm, "mul_sum": mul_sum, "tiny": rmsnorm}


@pytest.mark.parametrize("name", sorted(FNS))
def test_ours(neuron_profile, name):
    neuron_profile(FNS[name], *inputs(name), name=name)


@pytest.mark.parametrize("name", sorted(FNS))
def test_pb(benchmark, name):
    args = inputs(name)
    benchmark(FNS[name], *args)
"""

# The regions WORKLOADS measures, one test of each tool per region.
WORKLOAD_NAMES = ("mul_sum", "rmsnorm", "tiny")

# pytest-benchmark reports a failed comparison at session end, one line per benchmark:
#   test_pb[rmsnorm] (0001_base) - Field 'median' has failed PercentageRegressionCheck: ...
PB_FAILED = re.compile(r"(test_pb\[\w+\]) \(\d+_\w+\) - Field 'median' has failed")


# The workload's torch thread count ("default": torch's own), set from --torch-threads.
TORCH_THREADS = ["1"]


def run(
    project: Path, inject: str, extra: list[str]
) -> tuple[set[str], set[str], dict[str, float], int]:
    """One pytest process. Returns (our failed tests, pytest-benchmark's failed tests, the
    figures our gate judges per region: on cpu the median over rounds of host_relative, the
    low decile of each call's time over the reference tick before it, and the same against
    the dispatch-bound tick as "<region> (d)"; and how many of our
    measurements needed a second look because the first one regressed)."""
    junit = project / "junit.xml"
    report = project / "report.json"
    env = dict(
        os.environ,
        BENCH_INJECT=inject,
        PYTHONDONTWRITEBYTECODE="1",
        BENCH_TORCH_THREADS=TORCH_THREADS[0],
    )
    if TORCH_THREADS[0] == "default":
        env.pop("OMP_NUM_THREADS", None)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--neuron-profile",
        f"--junitxml={junit}",
        f"--neuron-profile-json={report}",
        "-o",
        "junit_family=xunit1",  # xunit2 drops the properties the medians are read from
        f"--benchmark-storage=file://{project / 'pb'}",
        "--benchmark-max-time=0.2",
        *extra,
    ]
    out = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"pytest exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr}")
    ours: set[str] = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        failure = case.find("failure")
        if name.startswith("test_ours") and failure is not None:
            ours.add(name)
            print(f"  ours failed {name}: {failure.get('message', '')[:160]}", file=sys.stderr)
    theirs = set(PB_FAILED.findall(out.stdout + out.stderr))
    relative: dict[str, float] = {}
    rechecked = 0
    for record in report_rows(report):
        m = record["measurement"]
        for key, suffix in (("host_relative", ""), ("host_relative_dispatch", " (d)")):
            if m.get(key):
                relative[m["region"] + suffix] = statistics.median(m[key]["samples"])
        rechecked += bool(m.get("recheck_note"))
    # Each region's verdict against the baseline, as the table's baseline column says it.
    cells = (f"{r['measurement']['region']} {r['baseline_cell']}" for r in report_rows(report))
    print("  " + ", ".join(cells), file=sys.stderr)
    return ours, theirs, relative, rechecked


def report_rows(report: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(report.read_text())["measurements"]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aa", type=int, default=20)
    parser.add_argument("--fusion", type=int, default=5)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument(
        "--keep", type=Path, help="copy every rerun's JSON report into this directory"
    )
    parser.add_argument(
        "--record-processes",
        type=int,
        default=3,
        help="processes our baseline is pooled over (1: a single --neuron-profile-update)",
    )
    parser.add_argument(
        "--only", default="abcdefg", help="the scenarios to run, by letter (a is always run)"
    )
    parser.add_argument(
        "--torch-threads",
        default="1",
        help="the workload's torch.set_num_threads, or 'default' for torch's own count",
    )
    opts = parser.parse_args()
    TORCH_THREADS[0] = opts.torch_threads
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_gate_") as tmp:
        project = Path(tmp)
        (project / "test_workloads.py").write_text(WORKLOADS)
        (project / "pytest.ini").write_text("[pytest]\n")
        run(project, "none", ["--neuron-profile-update", "--benchmark-save=base"])
        # Ours pools its baseline over fresh processes, as `neuronperf record` does; the
        # other tool's baseline is the one saved run its --benchmark-save keeps.
        for _ in range(opts.record_processes - 1):
            run(project, "none", ["--neuron-profile-pool"])
        if opts.keep:
            opts.keep.mkdir(parents=True, exist_ok=True)
            shutil.copytree(project / ".neuronperf", opts.keep / "baselines", dirs_exist_ok=True)
        compare = ["--benchmark-compare=0001", "--benchmark-compare-fail=median:10%"]
        rows = []
        n_tests = len(WORKLOAD_NAMES)
        # What each scenario did to the time, as the gated figure's medians over its reruns
        # against those of the A/A reruns: "25% more data" is not 25% more time.
        aa_level: dict[str, float] = {}
        # (c) is caught by the exact FLOPs/bytes gate before time is even judged; (d) turns
        # counting off, so the statistical time rule alone must see the same 25%.
        time_only = ["--neuron-profile-work=off"]
        for label, inject, reruns, want, extra in (
            ("(a) A/A reruns: false failures", "none", opts.aa, "0%", []),
            ("(b) one extra op: caught", "fusion", opts.fusion, "100%", []),
            ("(c) 25% slower (more data): caught", "slow", opts.slow, ">= 95%", []),
            ("(d) same, time rule alone: caught", "slow", opts.slow, ">= 95%", time_only),
            ("(e) A/A, time rule alone: false failures", "none", opts.aa, "0%", time_only),
            ("(f) 2x the data (tiny 4x), time rule alone", "slow2", opts.slow, ">= 95%", time_only),
            ("(g) about +25%, time rule alone: caught", "near", opts.slow, "-", time_only),
        ):
            # (a) sets the level the others' time changes are read against.
            if label[1] not in opts.only + "a":
                continue
            ours_n = theirs_n = rechecks = 0
            levels: dict[str, list[float]] = {}
            for _ in range(reruns):
                # Our failure messages go to stderr as they happen, to see why.
                ours, theirs, relative, rechecked = run(project, inject, compare + extra)
                if opts.keep:
                    opts.keep.mkdir(parents=True, exist_ok=True)
                    kept = opts.keep / f"{label[1]}-{len(list(opts.keep.glob(label[1] + '-*')))}"
                    shutil.copy(project / "report.json", kept.with_suffix(".json"))
                rechecks += rechecked
                ours_n += len(ours)
                theirs_n += len(theirs)
                for region, value in relative.items():
                    levels.setdefault(region, []).append(value)
            level = {k: statistics.median(v) for k, v in levels.items()}
            if inject == "none" and not aa_level:
                aa_level = level
            # Per region: against the memory tick / against the dispatch tick.
            change = ", ".join(
                f"{k} "
                + "/".join(
                    f"{(level[key] / aa_level[key] - 1) * 100:+.0f}%"
                    for key in (k, f"{k} (d)")
                    if aa_level.get(key) and key in level
                )
                for k in sorted(level)
                if not k.endswith(" (d)")
            )
            total = reruns * n_tests
            rows.append(
                [
                    label,
                    change,
                    f"{reruns} x {n_tests}",
                    f"{ours_n}/{total} ({100 * ours_n / total:.0f}%)",
                    str(rechecks),
                    f"{theirs_n}/{total} ({100 * theirs_n / total:.0f}%)",
                    want,
                ]
            )
            print(f"{label}: done after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(
        tabulate(
            rows,
            headers=[
                "scenario",
                "time vs A/A",
                "reruns x tests",
                "pytest-neuronperf",
                "second looks",
                "pytest-benchmark median:10%",
                "target (ours)",
            ],
            tablefmt="github",
        )
    )
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
