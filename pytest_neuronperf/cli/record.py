"""``neuronperf record``: a baseline over several recording processes.

A process keeps a speed offset of its own (where its buffers landed, what its neighbours
were doing): measured on these 2-core VMs, up to ±10% for one region between fresh
processes, which a baseline from one process carries into every later verdict. So this runs
pytest once with --neuron-profile-update and then again with --neuron-profile-pool, each in
a fresh process, and the entries end up holding every process's rounds."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence

DEFAULT_PROCESSES = 3

Run = Callable[[list[str]], int]


def _run(argv: list[str]) -> int:
    return subprocess.call(argv)


def record(pytest_args: Sequence[str], processes: int, run: Run = _run) -> int:
    """Runs the recording processes in turn; stops at the first that fails, so a baseline
    is never pooled from a run whose tests did not pass. Returns pytest's exit status."""
    if processes < 1:
        raise ValueError(f"--processes must be >= 1, got {processes}")
    args = list(pytest_args)
    if args[:1] == ["--"]:
        args = args[1:]
    for i in range(processes):
        flag = "--neuron-profile-update" if i == 0 else "--neuron-profile-pool"
        print(f"neuronperf record: process {i + 1} of {processes} ({flag})", flush=True)
        status = run([sys.executable, "-m", "pytest", flag, *args])
        if status != 0:
            print(
                f"neuronperf record: process {i + 1} exited with status {status}; "
                "stopped (the baselines hold what the processes before it recorded)",
                file=sys.stderr,
            )
            return status
    return 0
