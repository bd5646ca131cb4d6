"""A region's memory from real profiles recorded with ``profile_memory=True``: live (Kineto's
results) and saved (chrome traces). Expected figures come from tensor sizes, or from a
plain loop over the profile's own memory events, never from the code under test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.trace.analysis import analyze_markers
from pytest_neuronperf.trace.memory import (
    OUTSIDE_OPS,
    device_name,
    records_from_chrome,
    records_from_kineto,
)
from pytest_neuronperf.trace.offline import report_trace

N = 1 << 16
X = torch.ones(N)
NBYTES = X.nbytes  # N float32


def mul_add() -> None:
    y = X * X + X  # x * x alive while the add allocates its result
    del y


def free_then_alloc() -> None:
    a = torch.empty(N)
    del a
    b = torch.empty(N)
    del b


def profiled(fn: Callable[[], None], rounds: int = 2) -> Any:
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for r in range(rounds):
            with record_function(f"neuronperf#0.{r} r"):
                fn()
    return prof


def markers(rounds: int = 2) -> list[str]:
    return [f"neuronperf#0.{r} r" for r in range(rounds)]


def plain_loop(prof: Any, marker: str) -> tuple[int, int, int]:
    """(peak, allocated, retained) of the memory events inside the marker, by hand."""
    events = list(prof.profiler.kineto_results.events())
    span = next(e for e in events if e.name() == marker)
    level = peak = allocated = 0
    inside = [
        e
        for e in events
        if e.name() == "[memory]" and span.start_ns() <= e.start_ns() <= span.end_ns()
    ]
    for e in sorted(inside, key=lambda e: e.start_ns()):
        level += e.nbytes()
        peak = max(peak, level)
        allocated += max(e.nbytes(), 0)
    return peak, allocated, level


def round_memory(prof: Any) -> list[Any]:
    backend = CpuBackend()
    results = analyze_markers(
        backend.collect(prof), markers(), "host", backend.memory_records(prof), "cpu"
    )
    return [r.memory for r in results]


def test_a_region_peaks_at_what_it_holds_at_once_charged_to_the_ops_that_allocated() -> None:
    prof = profiled(mul_add)
    for marker, mem in zip(markers(), round_memory(prof), strict=True):
        assert mem is not None
        assert (mem.peak_bytes, mem.allocated_bytes, mem.retained_bytes) == plain_loop(prof, marker)
        assert mem.peak_bytes == 2 * NBYTES
        assert mem.allocated_bytes == 2 * NBYTES
        assert mem.retained_bytes == 0
        assert mem.op_bytes == {"aten::mul": NBYTES, "aten::add": NBYTES}
        # The step line: the mul holds one tensor, the add two, the frees after them none.
        assert [(s.op, s.high, s.end) for s in mem.steps] == [
            ("aten::mul", NBYTES, NBYTES),
            ("aten::add", 2 * NBYTES, 2 * NBYTES),
            (OUTSIDE_OPS, NBYTES, 0),
        ]


def test_freeing_before_allocating_again_does_not_add() -> None:
    prof = profiled(free_then_alloc)
    for mem in round_memory(prof):
        assert mem is not None
        assert mem.peak_bytes == NBYTES
        assert mem.allocated_bytes == 2 * NBYTES
        assert mem.op_bytes == {"aten::empty": 2 * NBYTES}


def test_a_profile_without_memory_has_no_figure_rather_than_zero() -> None:
    with profile(activities=[ProfilerActivity.CPU]) as prof, record_function("neuronperf#0.0 r"):
        mul_add()
    assert CpuBackend().memory_records(prof) is None
    backend = CpuBackend()
    [result] = analyze_markers(backend.collect(prof), markers(1), "host", None)
    assert result.memory is None


def test_a_saved_trace_holds_the_same_records_and_the_offline_report_the_same_figures(
    tmp_path: Path,
) -> None:
    prof = profiled(mul_add)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    saved = records_from_chrome(json.loads(path.read_text()))
    live = records_from_kineto(prof.profiler.kineto_results)
    assert [r.nbytes for r in saved] == [r.nbytes for r in live]
    assert {r.device for r in saved} == {"cpu"}
    [region] = report_trace(path).regions
    memory = region.measurement.memory
    assert memory is not None
    assert (memory.peak_bytes, memory.allocated_bytes) == (2 * NBYTES, 2 * NBYTES)
    assert memory.op_bytes == {"aten::mul": NBYTES, "aten::add": NBYTES}


def test_a_trace_without_memory_records_reports_no_memory(tmp_path: Path) -> None:
    with profile(activities=[ProfilerActivity.CPU]) as prof, record_function("step"):
        mul_add()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    [region] = report_trace(path, region="step").regions
    assert region.measurement.memory is None


def test_damaged_memory_records_are_skipped() -> None:
    doc = {
        "traceEvents": [
            {"name": "[memory]", "ts": 1.0, "pid": 1, "tid": 1, "args": {"Bytes": "lots"}},
            {"name": "[memory]", "ts": "x", "pid": 1, "tid": 1, "args": {"Bytes": 4}},
            {"name": "[memory]", "ts": 2.0, "pid": 1, "tid": 1, "args": {"Bytes": 8}},
        ]
    }
    assert [r.nbytes for r in records_from_chrome(doc)] == [8]
    assert records_from_chrome({"traceEvents": None}) == []


def test_device_types_read_by_number_and_by_name() -> None:
    assert device_name(0) == "cpu"
    assert device_name(1) == "cuda"
    assert device_name(20) == "privateuse1"
    assert device_name(99) == "device99"
    assert device_name(torch._C._autograd.DeviceType.CPU) == "cpu"
