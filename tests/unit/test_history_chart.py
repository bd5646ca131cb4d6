"""The history chart's per-region figures (reports/charts/history.py)."""

from __future__ import annotations

from dataclasses import replace

from pytest_neuronperf.model import Measurement, Record
from pytest_neuronperf.reports.charts.history import Series
from pytest_neuronperf.stats import Stats


def point(host_us: float) -> Record:
    m = Measurement(
        test_id="t.py::t",
        region="r",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=1,
        kernels=1,
        device_us=Stats.of([host_us]),
        host_us=Stats.of([host_us]),
        rounds=1,
    )
    return Record(m, gated="host_us")


def test_the_largest_step_keeps_its_sign() -> None:
    """Issue 25, item 11: a -79% step read "largest step +79%"."""
    down = Series("cpu:x86_64", "t.py::t", "r", (point(100.0), point(21.0), point(22.0)))
    assert round(down.largest_step("host_us"), 2) == -0.79
    up = replace(down, points=(point(100.0), point(130.0), point(60.0)))
    assert round(up.largest_step("host_us"), 2) == -0.54
    # A creep is judged on the step's size, up or down.
    assert not down.crept(0.10)
