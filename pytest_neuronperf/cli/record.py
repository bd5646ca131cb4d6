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
            print(stopped(i + 1, processes, status), file=sys.stderr)
            return status
    return 0


# pytest's exit status when tests failed: the run finished, and the plugin wrote the entries
# of the tests that passed (plugin.WRITE_ON_EXIT); after any other failure it wrote nothing.
TESTS_FAILED = 1


def stopped(n: int, processes: int, status: int) -> str:
    """What the failing process ``n`` (from 1) left in the baselines, and what did not run."""
    if status == TESTS_FAILED:
        wrote = (
            "it recorded the entries of the tests that passed, not of those that failed"
            if n == 1
            else "it added the rounds of the tests that passed to their entries (each now "
            f"over at most {n} processes), nothing of those that failed"
        )
    else:
        wrote = "it wrote nothing (baselines are written only after exit status 0 or 1)"
        if n > 1:
            wrote += f"; the baselines hold what {_processes(1, n - 1)} recorded"
    rest = f"; {_processes(n + 1, processes)} did not run" if n < processes else ""
    return (
        f"neuronperf record: process {n} of {processes} exited with status {status}: {wrote}{rest}"
    )


def _processes(first: int, last: int) -> str:
    return f"process {first}" if first == last else f"processes {first}-{last}"
