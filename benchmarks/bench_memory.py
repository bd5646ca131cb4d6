"""Peak memory: what CPU calibration adds, and whether 200 measured tests stay flat.

(a) peak RSS of a fresh process that imports torch and runs ``calibrate_cpu()``, against the
    same process doing everything but the calibration. Target: <= 32 MiB added.
(b) RSS after the 20th, 100th and 200th of 200 measured tests in one pytest run
    (``--neuron-profile``, window 0). Target: flat (the 200th within 10% of the 20th).

Run: python benchmarks/bench_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from suite_cmd import pytest_cmd

PEAK = """
import resource, sys, torch
from pytest_neuronperf.work.calibrate import calibrate_cpu
torch.ones(4).sum()  # torch's own start-up allocations count on both sides
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[1] == "calibrate":
    calibrate_cpu()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""

SUITE = """
import pytest, torch

@pytest.mark.parametrize("i", range(200))
def test_many(neuron_profile, i):
    x = torch.randn(64, 64)
    neuron_profile(lambda: (x * 2.0).sum())
"""

CONFTEST = """
import json, os
SEEN = []

def pytest_runtest_logfinish(nodeid):
    SEEN.append(nodeid)
    if len(SEEN) in (20, 100, 200):
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open(os.environ["RSS_OUT"], "a") as out:
            out.write(json.dumps([len(SEEN), rss]) + "\\n")
"""


def peak_added_mib() -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    runs = {
        side: int(
            subprocess.run(
                [sys.executable, "-c", PEAK, side],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for side in ("plain", "calibrate")
    }
    return (runs["calibrate"] - runs["plain"]) / 1024  # ru_maxrss is in KiB on Linux


def rss_over_tests() -> list[tuple[int, float]]:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "test_many.py").write_text(SUITE)
        (root / "conftest.py").write_text(CONFTEST)
        out = root / "rss.jsonl"
        env = {**os.environ, "OMP_NUM_THREADS": "1", "RSS_OUT": str(out)}
        subprocess.run(
            pytest_cmd("--neuron-profile", "--neuron-profile-window=0", "test_many.py"),
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    return [(n, rss / 2**20) for n, rss in rows]


def main() -> int:
    added = peak_added_mib()
    print(
        f"(a) calibration adds {added:.1f} MiB to peak RSS (target <= 32 MiB): "
        f"{'PASS' if added <= 32 else 'FAIL'}"
    )
    rows = rss_over_tests()
    for n, mib in rows:
        print(f"(b) RSS after test {n:3d}: {mib:.1f} MiB")
    flat = rows[-1][1] <= rows[0][1] * 1.10
    print(
        f"(b) 200th vs 20th: {rows[-1][1] / rows[0][1]:.3f}x (target <= 1.10): "
        f"{'PASS' if flat else 'FAIL'}"
    )
    return 0 if added <= 32 and flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
