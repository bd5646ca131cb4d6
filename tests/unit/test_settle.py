"""Warm-up until page faults stop, and the reference workload, on the real CPU profiler."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.measure import settle
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.reports.detail import measurement_detail

needs_fault_counts = pytest.mark.skipif(
    settle.page_faults is None, reason="this OS does not count page faults"
)


def scripted(monkeypatch: pytest.MonkeyPatch, faults_per_call: list[int]) -> Callable[[], None]:
    """Make settle.page_faults report ``faults_per_call`` for successive calls."""
    total = [0]
    calls = iter(faults_per_call)

    def call() -> None:
        total[0] += next(calls)

    monkeypatch.setattr(settle, "page_faults", lambda: total[0])
    return call


def test_settling_needs_clean_calls_in_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    call = scripted(monkeypatch, [256, 0, 256, 0, 0, 0, 256])
    s = settle.settle(call, [])
    assert s == settle.Settled(extra_calls=6, last_faults=0, faulted=True)
    assert s.settled


def test_clean_warm_up_calls_at_the_end_count_towards_the_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert settle.settle(scripted(monkeypatch, []), [256, 0, 0, 0]) == settle.Settled(0, 0)
    # Only the first call faulted: the region does not need settling under the profiler.
    assert settle.settle(scripted(monkeypatch, [0, 0]), [256, 0]) == settle.Settled(2, 0)
    # A faulting call ends the row: the clean ones before it do not count.
    call = scripted(monkeypatch, [0, 0, 0])
    assert settle.settle(call, [0, 0, 256]) == settle.Settled(3, 0, faulted=True)


def test_a_region_that_never_settles_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    call = scripted(monkeypatch, [256] * 100)
    s = settle.settle(call, [])
    assert s.extra_calls == settle.MAX_EXTRA_CALLS and not s.settled


def test_without_fault_counts_nothing_is_added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settle, "page_faults", None)
    assert settle.settle(lambda: None, [0]) == settle.Settled(0, None)


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    r = Runner(CpuBackend(), count_work=False)
    r.backend.prepare()
    yield r


def measure(runner: Runner, fn: Callable[..., Any], *args: Any, warmup: int = 2) -> Measurement:
    _, m = runner.measure_callable(
        fn,
        args,
        {},
        test_id="t",
        name="r",
        warmup=warmup,
        rounds=5,
    )
    return m


@needs_fault_counts
def test_fresh_memory_every_call_is_reported(runner: Runner) -> None:
    # 40 MB: above the largest mmap threshold glibc adapts to (32 MB on 64-bit), so every
    # call maps, faults and unmaps its output anew, and warm-up cannot change that.
    m = measure(runner, lambda n: torch.ones(n), 10_000_000)
    assert m.page_faults is not None and m.page_faults > 1000
    assert m.settle_calls > 0
    detail = measurement_detail(m)
    assert "page faults: " in detail and "per round even after warm-up" in detail


@needs_fault_counts
def test_in_place_work_settles_at_once_and_says_nothing(runner: Runner) -> None:
    x = torch.ones(1024)
    # The first call may fault (the op's first dispatch allocates); the three after it do
    # not, and they are the row settling asks for.
    m = measure(runner, lambda t: t.mul_(1.0), x, warmup=4)
    assert m.settle_calls == 0
    assert m.page_faults is not None and m.page_faults <= settle.SETTLED_FAULTS
    detail = measurement_detail(m)
    assert "page faults" not in detail and "until page faults stopped" not in detail


def test_warm_up_zero_asks_for_cold_figures(runner: Runner) -> None:
    assert measure(runner, lambda n: torch.ones(n), 10_000_000, warmup=0).settle_calls == 0


def test_reference_is_timed_beside_cpu_rounds_only_when_asked(runner: Runner) -> None:
    x = torch.ones(1024)
    m = measure(runner, torch.neg, x)
    # One reference figure for each round, host-timed and profiled alike.
    assert m.reference_us is not None and m.reference_us.n == m.host_us.n
    assert m.device_reference_us is not None and m.device_reference_us.n == m.device_us.n
    assert m.reference_us.min > 0
    # The reference runs outside the rounds: the region's ops are its own.
    assert m.op_counts == {"aten::neg": 1}
    plain = Runner(CpuBackend(), count_work=False, reference=False)
    m = measure(plain, torch.neg, x)
    assert m.reference_us is None and m.device_reference_us is None
