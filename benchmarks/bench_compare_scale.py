"""Comparing against a large baseline: a suite of N small measured tests run with
``--neuron-profile`` against an N-entry baseline, versus the same run with no baseline.

The entries are recorded first (``--neuron-profile-update``); both timed runs use window 0,
so the difference is loading, comparing and writing nothing. Runs alternate (A B A B ...)
so drift on the machine falls on both. Target: <= 1.2x.

Run: python benchmarks/bench_compare_scale.py [--tests 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite_cmd import pytest_cmd

SUITE = """
import pytest, torch

X = torch.randn(32, 32)

@pytest.mark.parametrize("i", range({n}))
def test_many(neuron_profile, i):
    neuron_profile(lambda: (X * 2.0).sum())
"""


def run(root: Path, *extra: str) -> tuple[float, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = pytest_cmd(
        "--neuron-profile",
        "--neuron-profile-window=0",
        "--neuron-profile-rounds=5",
        "test_many.py",
        *extra,
    )
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    # 1: some tests failed the gate (one call a round, five rounds: noisy by design here);
    # what they cost is part of comparing, so the run counts. Anything else is a failure.
    if proc.returncode not in (0, 1):
        sys.exit(f"pytest failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
    return elapsed, proc.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "test_many.py").write_text(SUITE.format(n=args.tests))
        run(root, "--neuron-profile-update", "--neuron-profile-dir=stored")
        size = (root / "stored" / "cpu_x86_64.json").stat().st_size
        print(f"recorded {args.tests} entries ({size / 1e6:.1f} MB)")
        with_base, without = [], []
        for _ in range(args.repeats):
            seconds, summary = run(root, "--neuron-profile-dir=stored")
            with_base.append(seconds)
            print(f"  with the baseline: {seconds:.1f} s ({summary})")
            seconds, summary = run(root, "--neuron-profile-dir=empty")
            without.append(seconds)
            print(f"  with none: {seconds:.1f} s ({summary})")
    a, b = statistics.median(with_base), statistics.median(without)
    print(
        f"{args.tests} tests, median of {args.repeats}: with a {args.tests}-entry baseline "
        f"{a:.1f} s, with none {b:.1f} s: {a / b:.2f}x (target <= 1.2x); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    return 0 if a / b <= 1.2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
