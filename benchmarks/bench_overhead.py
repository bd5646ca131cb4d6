"""What the plugin costs, as ratios against references measured in the same run.

(a) measuring a callable with R rounds through the plugin's Runner, versus doing the same by
    hand with bare torch.profiler (the same warm-up, one profile() over R rounds, then
    key_averages() for the per-op table). Target: <= 1.3x.
(b) a suite of plain tests with the plugin installed and no flag, versus the same suite with
    ``-p no:neuronperf``. Target: <= 1.02x.
(c) measuring a callable with memory profiled (``--neuron-profile-memory``, a memory budget
    or a baseline holding memory) versus without, through the same Runner at one intra-op
    thread and no host window, so the profiled rounds are most of what is timed: what
    ``profile_memory=True`` adds to a measurement. No target: the cost is reported.

Run: python benchmarks/bench_overhead.py [--repeats N] [--only a,b,c]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from suite_cmd import pytest_cmd
from tabulate import tabulate
from torch.profiler import ProfilerActivity, profile, record_function

from pytest_neuronperf.backends import CpuBackend
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.stats import median

WARMUP, ROUNDS = 3, 10


def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def hundred_ops(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    for _ in range(100):
        x = x + 1
    return x


def bare(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    for _ in range(WARMUP):
        fn(*args)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for r in range(ROUNDS):
            with record_function(f"round{r}"):
                fn(*args)
    prof.key_averages()


def ours(runner: Runner, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    runner.measure_callable(fn, args, {}, test_id="bench", name="r", warmup=WARMUP, rounds=ROUNDS)


def timed(f: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def bench_measure(repeats: int) -> list[list[str]]:
    x, w = torch.randn(16, 1024), torch.randn(1024)
    rows = []
    # The default counts FLOPs and bytes in one extra call; --neuron-profile-work=off does not.
    for counting in (True, False):
        runner = Runner(CpuBackend(), count_work=counting)
        label = "default" if counting else "work=off"
        for name, fn in (("naive RMSNorm (6 ops)", naive), ("100 tiny ops", hundred_ops)):
            bare(fn, (x, w))
            ours(runner, fn, (x, w))
            ref, mine = [], []
            for _ in range(repeats):  # interleaved, so drift hits both alike
                ref.append(timed(lambda fn=fn: bare(fn, (x, w))))  # type: ignore[misc]
                mine.append(timed(lambda fn=fn, r=runner: ours(r, fn, (x, w))))  # type: ignore[misc]
            r, m = median(ref), median(mine)
            rows.append(
                [
                    f"(a) {name}, R={ROUNDS}, {label}",
                    f"{r * 1e3:.2f} ms",
                    f"{m * 1e3:.2f} ms",
                    f"{m / r:.2f}x",
                    "<= 1.3x",
                ]
            )
    return rows


def bench_memory(repeats: int) -> list[list[str]]:
    x, w = torch.randn(16, 1024), torch.randn(1024)
    runner = Runner(CpuBackend(), count_work=False, reference=False, window=0.0, threads=1)

    def measure(fn: Callable[..., Any], memory: bool) -> None:
        runner.measure_callable(
            fn, (x, w), {}, test_id="bench", name="r", warmup=WARMUP, rounds=ROUNDS,
            memory=memory,
        )  # fmt: skip

    rows = []
    for name, fn in (("naive RMSNorm (6 ops)", naive), ("100 tiny ops", hundred_ops)):
        measure(fn, True)
        off, on = [], []
        for _ in range(repeats):  # interleaved, so drift hits both alike
            off.append(timed(lambda fn=fn: measure(fn, False)))  # type: ignore[misc]
            on.append(timed(lambda fn=fn: measure(fn, True)))  # type: ignore[misc]
        r, m = median(off), median(on)
        rows.append(
            [
                f"(c) {name}, R={ROUNDS}, memory on vs off, 1 thread, window 0",
                f"{r * 1e3:.2f} ms",
                f"{m * 1e3:.2f} ms",
                f"{m / r:.2f}x",
                "reported",
            ]
        )
    return rows


SUITE = """
import pytest

@pytest.mark.parametrize("i", range(300))
def test_plain(i):
    assert sum(range(i)) >= 0

class TestMore:
    @pytest.mark.parametrize("s", ["a", "b", "c"] * 50)
    def test_strings(self, s):
        assert s.upper() != s
"""


def bench_suite(repeats: int) -> list[list[str]]:
    # An installed package has its bytecode compiled (pip does it at install); without it,
    # every run would compile our modules, which only an editable install with
    # PYTHONDONTWRITEBYTECODE=1 (as on our CI machines) ever pays.
    import compileall

    import pytest_neuronperf

    compileall.compile_dir(Path(pytest_neuronperf.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as d:
        Path(d, "test_plain.py").write_text(SUITE)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        base = pytest_cmd(d)

        def run(extra: list[str]) -> float:
            t0 = time.perf_counter()
            subprocess.run(base + extra, check=True, capture_output=True, env=env, cwd=d)
            return time.perf_counter() - t0

        run([])
        ref, mine = [], []
        for _ in range(repeats):  # interleaved, so drift hits both alike
            ref.append(run(["-p", "no:neuronperf"]))
            mine.append(run([]))
    r, m = median(ref), median(mine)
    # The fastest run of each is the least disturbed by other load on the machine.
    return [
        [
            "(b) 450 plain tests, no flag (median)",
            f"{r:.3f} s",
            f"{m:.3f} s",
            f"{m / r:.3f}x",
            "<= 1.02x",
        ],
        [
            "(b) the same, fastest run of each",
            f"{min(ref):.3f} s",
            f"{min(mine):.3f} s",
            f"{min(mine) / min(ref):.3f}x",
            "<= 1.02x",
        ],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="a,b,c", help="which parts to run, e.g. c")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    rows = []
    if "a" in parts:
        rows += bench_measure(args.repeats)
    if "b" in parts:
        rows += bench_suite(max(5, args.repeats))
    if "c" in parts:
        rows += bench_memory(args.repeats)
    print(tabulate(rows, headers=["what", "reference", "pytest-neuronperf", "ratio", "target"]))


if __name__ == "__main__":
    main()
