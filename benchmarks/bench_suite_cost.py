"""What a budgeted test costs a suite: N small measured tests run every way a user would,
as ratios against pytest-benchmark on the same regions in the same run.

The regions cycle through naive RMSNorm 16x1024 (six ops), a 256x256 matmul and a tiny
two-layer MLP. Each way is one fresh pytest process over the same N tests; the ways run
interleaved, round after round, so drift on the machine falls on all of them. The figure is
the process's wall time, start-up and torch's import included on every side (pytest's own
"in X s" would not do: with --neuron-profile the plugin imports torch before the session
starts, without it the test module does so inside the session). "ms per test" is the
marginal cost: (the way's time - plain's) / N.

  plain            the region called once, plugin disabled (-p no:neuronperf)
  bare profiler    a torch.profiler session of 10 rounds and key_averages(), by hand
  pytest-benchmark its default settings (`benchmark(fn)`)
  pb compare       pytest-benchmark against its saved run, --benchmark-compare-fail=median:10%
  ours, no flag    budget marker, plain `pytest`: measured (rounds, no window), enforced
  ours, window 0   --neuron-profile --neuron-profile-window=0 --neuron-profile-work=off
  ours, flag       --neuron-profile, no baseline stored
  ours, compare    --neuron-profile against a baseline recorded once before the rounds

Targets (issue 26; issue 16's were 1.5x and 3x): "ours, no flag" <= 0.6x pytest-benchmark;
"ours, compare" <= 1.0x "pb compare"; recording (--neuron-profile-update) <= 1.5x
pytest-benchmark's --benchmark-save. --aa N adds N compare runs of each tool with nothing
changed and counts their failures (all false). Torch runs single-threaded on every side
(OMP_NUM_THREADS=1).

Run: python benchmarks/bench_suite_cost.py [--tests 50] [--repeats 3] [--aa 0]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite_cmd import pytest_cmd
from tabulate import tabulate

REGIONS = """
import pytest
import torch

X = torch.randn(16, 1024)
W = torch.randn(1024)
A = torch.randn(256, 256)
MLP = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
H = torch.randn(4, 64)


def rmsnorm():
    return X * torch.rsqrt((X * X).mean(-1, keepdim=True) + 1e-6) * W


def matmul():
    return A @ A


@torch.no_grad()
def mlp():
    return MLP(H)


FNS = [rmsnorm, matmul, mlp]
"""

BODIES = {
    "plain": """
@pytest.mark.parametrize("i", range({n}))
def test_region(i):
    FNS[i % 3]()
""",
    "bare": """
from torch.profiler import ProfilerActivity, profile


@pytest.mark.parametrize("i", range({n}))
def test_region(i):
    fn = FNS[i % 3]
    for _ in range(3):
        fn()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(10):
            fn()
    prof.key_averages()
""",
    "pb": """
@pytest.mark.parametrize("i", range({n}))
def test_region(benchmark, i):
    benchmark(FNS[i % 3])
""",
    "ours": """
@pytest.mark.neuron_budget(max_ops=20, max_device_us=1e7)
@pytest.mark.parametrize("i", range({n}))
def test_region(neuron_profile, i):
    neuron_profile(FNS[i % 3])
""",
}

# name -> (suite, extra pytest arguments); "ours, compare" and "pb compare" need a recording.
WAYS: dict[str, tuple[str, list[str]]] = {
    "plain": ("plain", ["-p", "no:neuronperf"]),
    "bare profiler": ("bare", ["-p", "no:neuronperf"]),
    "pytest-benchmark": ("pb", ["-p", "no:neuronperf"]),
    "pb compare": (
        "pb",
        ["-p", "no:neuronperf", "--benchmark-compare=0001", "--benchmark-compare-fail=median:10%"],
    ),
    "ours, no flag": ("ours", ["-p", "no:benchmark"]),
    "ours, window 0": (
        "ours",
        [
            "-p",
            "no:benchmark",
            "--neuron-profile",
            "--neuron-profile-window=0",
            "--neuron-profile-work=off",
            "--neuron-profile-dir=empty",
        ],
    ),
    "ours, flag": (
        "ours",
        ["-p", "no:benchmark", "--neuron-profile", "--neuron-profile-dir=empty"],
    ),
    "ours, compare": (
        "ours",
        ["-p", "no:benchmark", "--neuron-profile", "--neuron-profile-dir=stored"],
    ),
}


def failures(summary: str) -> int:
    """How many tests failed, from what ``pytest_run`` returns: ours as pytest's summary line
    counts them, pytest-benchmark's as its lines naming each benchmark that failed."""
    found = re.search(r"(\d+) failed", summary.split(";")[0])
    return (int(found.group(1)) if found else 0) + summary.count("Field 'median' has failed")


def pytest_run(root: Path, suite: str, extra: list[str]) -> tuple[float, str]:
    """The process's wall seconds and pytest's summary; exit 1 (a gate failed) still counts."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = pytest_cmd("-rf", f"test_{suite}.py")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + extra, cwd=root, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd + extra)} exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    lines = proc.stdout.strip().splitlines()
    # pytest-benchmark prints its legend after pytest's summary line.
    summary = next(
        (x for x in reversed(lines) if " in " in x and ("passed" in x or "failed" in x)), lines[-1]
    )
    # A failure in a run that changed nothing is the gate's false failure: shown, not hidden.
    failed = [x for x in lines if x.startswith(("FAILED ", "PERF "))]
    # pytest-benchmark's compare fails the session, one line per benchmark, not per test,
    # and not on stdout.
    both = (proc.stdout + proc.stderr).splitlines()
    failed += [x.strip() for x in both if "Field 'median' has failed" in x]
    return seconds, "; ".join([summary.strip("= "), *failed])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--aa",
        type=int,
        default=0,
        help="compare runs with nothing changed beyond the timed rounds' own, ours and "
        "pytest-benchmark's in turn: every failure is a false one",
    )
    args = parser.parse_args()
    n = args.tests
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for suite, body in BODIES.items():
            (root / f"test_{suite}.py").write_text(REGIONS + body.format(n=n))
        seconds, summary = pytest_run(
            root,
            "ours",
            ["-p", "no:benchmark", "--neuron-profile-update", "--neuron-profile-dir=stored"],
        )
        print(f"recorded our baseline: {seconds:.1f} s ({summary})")
        ours_record = seconds
        seconds, summary = pytest_run(root, "pb", ["-p", "no:neuronperf", "--benchmark-save=base"])
        print(f"recorded pytest-benchmark's: {seconds:.1f} s ({summary})")
        print(f"recording: {ours_record / seconds:.2f}x --benchmark-save (target <= 1.5x)")
        times: dict[str, list[float]] = {way: [] for way in WAYS}
        # Every compare run changed nothing: each failure in it is a false failure.
        false = {"ours, compare": 0, "pb compare": 0}
        runs = {"ours, compare": 0, "pb compare": 0}
        for r in range(args.repeats):
            for way, (suite, extra) in WAYS.items():
                seconds, summary = pytest_run(root, suite, extra)
                times[way].append(seconds)
                if way in false:
                    false[way] += failures(summary)
                    runs[way] += 1
                print(f"  round {r + 1}, {way}: {seconds:.2f} s ({summary})", flush=True)
        for r in range(args.aa):
            for way in false:
                seconds, summary = pytest_run(root, *WAYS[way])
                false[way] += failures(summary)
                runs[way] += 1
                print(f"  A/A {r + 1}, {way}: {seconds:.2f} s ({summary})", flush=True)
    med = {way: statistics.median(t) for way, t in times.items()}
    against = {"ours, no flag": "pytest-benchmark", "ours, compare": "pb compare"}
    targets = {"ours, no flag": "<= 0.6x", "ours, compare": "<= 1.0x"}
    rows = []
    for way, m in med.items():
        ref = against.get(way, "pytest-benchmark")
        rows.append(
            [
                way,
                f"{m:.2f} s",
                f"{(m - med['plain']) / n * 1e3:.1f}",
                f"{m / med[ref]:.2f}x {ref}",
                targets.get(way, "-"),
            ]
        )
    print(
        f"\n{n} tests, median of {args.repeats} interleaved runs (wall time of each process):\n"
        + tabulate(rows, headers=["way", "wall", "ms per test", "ratio", "target"])
    )
    for way, count in false.items():
        print(f"A/A, {way}: {count} false failures in {runs[way]} runs x {n} tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
