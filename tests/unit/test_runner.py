"""The Runner on the real CPU profiler: what its settings switch on and off."""

from __future__ import annotations

import gc
from typing import Any

import pytest
import torch

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement

REFERENCE_FIGURES = (
    "reference_us",
    "device_reference_us",
    "host_relative",
    "dispatch_reference_us",
    "host_relative_dispatch",
)


def measure(*, reference: bool, window: float) -> Measurement:
    runner = Runner(CpuBackend(), count_work=False, reference=reference, window=window)
    x = torch.randn(256)
    _, m = runner.measure_callable(torch.relu, (x,), {}, test_id="t", name="r", warmup=1, rounds=3)
    return m


@pytest.mark.parametrize("window", [0.0, 0.02])
def test_reference_off_times_no_reference_workload(window: float) -> None:
    """--neuron-profile-reference=off: the rounds are raw times, nothing beside them."""
    off = measure(reference=False, window=window)
    assert {name: getattr(off, name) for name in REFERENCE_FIGURES} == dict.fromkeys(
        REFERENCE_FIGURES
    )
    assert off.host_us.n == 3 and off.device_us.n == 3
    # On, each of the five is timed beside every round: the check above can fail.
    on = measure(reference=True, window=window)
    for name in REFERENCE_FIGURES:
        stats = getattr(on, name)
        assert stats is not None and stats.n == 3, name


class WatchedBackend(CpuBackend):
    """Notes whether garbage collection was on while the profile was read back."""

    def __init__(self) -> None:
        super().__init__()
        self.analysed_with_gc: list[bool] = []

    def analyze(self, prof: Any, regions: Any, windows: Any) -> Any:
        self.analysed_with_gc.append(gc.isenabled())
        return super().analyze(prof, regions, windows)


def test_garbage_collection_is_paused_to_read_the_profile_and_never_while_timing() -> None:
    backend = WatchedBackend()
    runner = Runner(backend, count_work=False, window=0.01)
    timed_with_gc: list[bool] = []

    def work(x: torch.Tensor) -> torch.Tensor:
        timed_with_gc.append(gc.isenabled())
        return torch.relu(x)

    assert gc.isenabled()
    runner.measure_callable(work, (torch.ones(8),), {}, test_id="t", name="w", warmup=1, rounds=3)
    with runner.region("block", test_id="t", on_done=lambda m: None):
        work(torch.ones(8))
    assert backend.analysed_with_gc == [False, False]
    assert timed_with_gc and all(timed_with_gc), "warm-up, window and rounds run as ever"
    assert gc.isenabled(), "and it is on again after"


class DeviceTimedBackend(CpuBackend):
    """The CPU profiler standing in for a device backend: host time is not what it gates."""

    mode = "device"  # type: ignore[assignment]  # CpuBackend narrows it to "host"


@pytest.mark.parametrize(
    ("backend", "fixed", "expected"),
    [(CpuBackend, True, 1), (CpuBackend, False, 0), (DeviceTimedBackend, True, 0)],
    ids=["host-fixed", "host-system", "device-fixed"],
)
def test_the_heap_is_fixed_only_where_host_time_is_measured(
    monkeypatch: pytest.MonkeyPatch, backend: type[CpuBackend], fixed: bool, expected: int
) -> None:
    # The thresholds are process-wide (tests/unit/test_heap.py sets them in fresh processes):
    # here only whether the Runner asks for them.
    calls: list[None] = []
    monkeypatch.setattr("pytest_neuronperf.measure.runner.fix_heap", lambda: calls.append(None))
    runner = Runner(backend(), count_work=False, fixed_heap=fixed)
    x = torch.ones(8)
    runner.measure_callable(torch.relu, (x,), {}, test_id="t", name="r", warmup=1, rounds=3)
    assert len(calls) == expected
