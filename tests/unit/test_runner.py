"""The Runner on the real CPU profiler: what its settings switch on and off."""

from __future__ import annotations

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
