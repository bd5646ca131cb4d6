"""How torch's intra-op thread count moves host time on a busy machine (docs/threads.md).

For each thread count and workload, one host window as the plugin samples it
(measure/window.py: 10 rounds over 1 s, the reference ticks before every call), while
``--burners`` processes spin on the CPUs. Prints each window's round samples and what
measure/tick.py says of it; ``--save FILE`` keeps the windows as JSON (tests/data holds one
such file for the detector's tests).

    python benchmarks/explore_threads.py [--burners 2] [--threads 2 1] [--save FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from pytest_neuronperf.measure.reference import Reference
from pytest_neuronperf.measure.tick import scheduler_note
from pytest_neuronperf.measure.window import sample_host


def workloads() -> dict[str, Any]:
    x, e, r, w = torch.ones(65536), torch.ones(1024), torch.randn(16, 1024), torch.randn(1024)
    return {
        "mul_sum_64k": lambda: (x * 2.0).sum(),
        "exp_1024": lambda: torch.exp(e),
        "rmsnorm_16x1024": lambda: r * torch.rsqrt((r * r).mean(-1, keepdim=True) + 1e-6) * w,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[2, 1])
    parser.add_argument("--window", type=float, default=1.0)
    parser.add_argument("--save", type=Path)
    opts = parser.parse_args()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(opts.burners)
    ]
    windows: list[dict[str, Any]] = []
    try:
        time.sleep(1)
        reference = Reference()
        for threads in opts.threads:
            torch.set_num_threads(threads)
            for name, fn in workloads().items():
                for _ in range(50):
                    fn()
                s = sample_host(fn, 10, opts.window, reference)
                note = scheduler_note(s.long_calls_us, s.calls, s.host_us, s.fast_us, threads)
                print(f"threads={threads} {name}: {s.calls} calls, rounds (µs) "
                      f"{[round(v, 1) for v in s.host_us]}")  # fmt: skip
                print(f"  {note or 'no scheduler note'}")
                windows.append(
                    {
                        "threads": threads,
                        "workload": name,
                        "calls": s.calls,
                        "host_us": [round(v, 3) for v in s.host_us],
                        "fast_us": [round(v, 3) for v in s.fast_us],
                        "long_calls_us": [round(v, 3) for v in s.long_calls_us],
                    }
                )
    finally:
        for b in burners:
            b.kill()
            b.wait()
    if opts.save:
        meta = {
            "burners": opts.burners,
            "torch": torch.__version__,
            "cpus": os.cpu_count(),
            "window_s": opts.window,
        }
        opts.save.write_text(json.dumps({"meta": meta, "windows": windows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
