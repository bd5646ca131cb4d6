"""Peaks per device kind, ini overrides and the CPU calibration."""

from __future__ import annotations

import pytest

from pytest_neuronperf.work.calibrate import _best_seconds, calibrate_cpu
from pytest_neuronperf.work.peaks import Peaks, PeaksError, PeakTable, builtin_peaks, parse_peaks


@pytest.mark.parametrize(
    ("kind", "flops", "bw"),
    [
        ("cuda:NVIDIA H200", 989e12, 4.8e12),
        ("cuda:NVIDIA H200 NVL", 835e12, 4.8e12),
        ("cuda:NVIDIA H100 80GB HBM3", 989e12, 3.35e12),
        ("cuda:NVIDIA H100 PCIe", 756e12, 2.0e12),
        ("neuron:trn2", 667e12, 2.9e12),
        ("neuron:trn3", 671e12, 4.9e12),
    ],
)
def test_builtin_peaks(kind: str, flops: float, bw: float) -> None:
    peaks = builtin_peaks(kind)
    assert peaks is not None
    assert (peaks.flops_per_s, peaks.bytes_per_s) == (flops, bw)


def test_float32_regions_use_the_fp32_peak_on_gpus() -> None:
    peaks = builtin_peaks("cuda:NVIDIA H200")
    assert peaks is not None
    assert peaks.compute_peak("float32") == 67e12
    assert peaks.compute_peak("bfloat16") == 989e12


def test_unknown_kinds_have_no_builtin_peaks() -> None:
    assert builtin_peaks("neuron:8nc") is None  # the chip is not in the kind
    assert builtin_peaks("cpu:x86_64") is None
    assert "neuron_profile_peaks" in PeakTable.missing_note("neuron:8nc")


def test_parse_lines_with_patterns_and_comments() -> None:
    parsed = parse_peaks(
        [
            "",
            "# roofs",
            "cuda:NVIDIA H200 = 989e12, 4.8e12",
            "neuron:* = 667_000e9 , 2.9e12  # trn2",
        ]
    )
    assert [p for p, _ in parsed] == ["cuda:NVIDIA H200", "neuron:*"]
    assert parsed[1][1].flops_per_s == 667e12
    table = PeakTable(parsed)
    found = table.for_kind("neuron:8nc")
    assert found is not None and found.bytes_per_s == 2.9e12


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("cuda:NVIDIA H200 989e12, 4.8e12", "expected 'DEVICE_KIND = FLOP_PER_S, BYTES_PER_S'"),
        ("cuda:NVIDIA H200 = 989e12", "expected 'DEVICE_KIND = FLOP_PER_S, BYTES_PER_S'"),
        ("= 1, 2", "expected 'DEVICE_KIND"),
        ("cpu:x86_64 = fast, 2", "FLOP/s 'fast' is not a number"),
        ("cpu:x86_64 = 1e12, -2", "bytes/s must be a number > 0"),
        ("cpu:x86_64 = inf, 2", "FLOP/s must be a number > 0"),
    ],
)
def test_bad_lines_name_the_line_and_the_fix(line: str, message: str) -> None:
    with pytest.raises(PeaksError, match="neuron_profile_peaks line 2") as info:
        parse_peaks(["", line])
    assert message in str(info.value)


def test_overrides_win_and_calibration_runs_once_per_table() -> None:
    calls: list[int] = []

    def fake() -> Peaks:
        calls.append(1)
        return Peaks(1e11, 1e10, "fp32", "fake")

    table = PeakTable(parse_peaks(["cuda:NVIDIA H200 = 1e15, 5e12"]), calibrate=fake)
    h200 = table.for_kind("cuda:NVIDIA H200")
    assert h200 is not None and h200.flops_per_s == 1e15
    assert table.for_kind("cpu:x86_64") is table.for_kind("cpu:aarch64")
    assert calls == [1]
    assert PeakTable().for_kind("cpu:x86_64") is None  # no calibration given


def test_calibration_stops_at_its_budget_and_keeps_the_best_call() -> None:
    """A fake clock: each call takes its turn's seconds. The call that ends past the budget
    is the last one made; the best of those made is kept."""
    now = [0.0]
    costs = iter([9.0, 2.0, 1.0, 1.5, 0.5, 0.1, 0.1])
    made: list[float] = []

    def step() -> None:
        cost = next(costs)
        made.append(cost)
        now[0] += cost

    best = _best_seconds(step, repeats=100, budget_s=4.0, clock=lambda: now[0])
    # The first call (9 s) is the warm-up; the budget starts after it: 2 + 1 + 1.5 > 4.
    assert made == [9.0, 2.0, 1.0, 1.5]
    assert best == 1.0
    now[0] = 0.0
    costs = iter([1.0] * 10)
    made.clear()
    assert _best_seconds(step, repeats=3, budget_s=100.0, clock=lambda: now[0]) == 1.0
    assert len(made) == 1 + 3, "repeats bound it where the budget does not"


def test_cpu_calibration_measures_something_plausible() -> None:
    cal = calibrate_cpu(repeats=20, budget_s=0.05)
    assert 1e8 < cal.flops_per_s < 1e14
    assert 1e8 < cal.bytes_per_s < 1e13
    assert cal.seconds > 0
    assert "calibrated" in cal.peaks().source
