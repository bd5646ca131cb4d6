"""trace/device.py, device truth: a region's kernels and device time are every device event it
launched, whatever launched it, on real traces recorded by others (tests/data/README.md).

Every expected figure here comes from :func:`launched_by`, a plain loop over the trace's
JSON that shares no code with the analyzer: a device event (``kernel``, ``gpu_memcpy``,
``gpu_memset``) belongs to a region when the runtime or driver call whose ``correlation``
it carries starts inside the region's span, in the region's process, on any thread.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import subprocess
import sys
from bisect import bisect_right
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch._C._autograd import DeviceType
from torch.autograd.profiler_util import FunctionEvent as _FunctionEvent

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.cli.main import main
from pytest_neuronperf.gate.budget import check
from pytest_neuronperf.gate.marker import Budget
from pytest_neuronperf.trace.analysis import Mode, TraceIndex, analyze_markers
from pytest_neuronperf.trace.device import DeviceIndex
from pytest_neuronperf.trace.events import (
    Event,
    Kind,
    events_from_chrome,
    events_from_function_events,
)
from pytest_neuronperf.trace.offline import (
    RegionReport,
    TraceReport,
    load_trace,
    region_rounds,
    report_trace,
    select_regions,
)

DATA = Path(__file__).parent.parent / "data"
HTA_GRAPHS = DATA / "hta__tests__data__trace_diff__test__test.json.gz"
VLLM_GRAPH = DATA / "tracelens__tests__traces__inference__vllm_decode_full__graph_execution.json.gz"
B200_EAGER = DATA / "tracelens__tests__traces__b200__eager_trace.json.gz"
SGLANG = (
    DATA / "tracelens__tests__traces__inference__sglang_prefilldecode__"
    "sglang_Qwen3-8B_prefilldecode.json.gz"
)
RESNET = DATA / "tracelens__tests__traces__mi300__resnet_act_checkpoint.json.gz"
ALEXNET = DATA / "hta_critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz"
SIMPLE_ADD = (
    DATA / "hta_critical_path__simple_add__benchmark_result_493459_1694039959_trace.json.gz"
)
ROCM_TOY = DATA / "hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
TRITON = DATA / "hta_triton_example__triton_example.json.gz"
ALL_TRACES = sorted(DATA.glob("*.json.gz"))

DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
FunctionEvent: Any = _FunctionEvent  # torch's own event class, untyped in its stubs


@functools.cache
def trace(path: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    return events


@functools.cache
def report(path: Path) -> TraceReport:
    return report_trace(path)


def only(rep: TraceReport) -> RegionReport:
    [region] = rep.regions
    return region


def device_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS]


def launches(events: Iterable[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {
        e["args"]["correlation"]: e
        for e in events
        if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATS and "correlation" in e["args"]
    }


def launched_by(events: list[dict[str, Any]], span: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The device events a region launched; ``span`` None: the whole trace, every one."""
    if span is None:
        return device_events(events)
    calls = launches(events)
    lo, hi, pid = span["ts"], span["ts"] + span["dur"], span["pid"]
    # Kineto wrote some ProfilerStep annotations under a pid of their own (the Triton
    # example): a region whose process made no launch call takes every process's.
    any_process = pid not in {c["pid"] for c in calls.values()}
    out = []
    for e in device_events(events):
        call = calls.get(e["args"].get("correlation"))
        if call is None:
            continue
        if (any_process or call["pid"] == pid) and lo <= call["ts"] <= hi:
            out.append(e)
    return out


def kernels_and_us(events: list[dict[str, Any]]) -> tuple[int, float]:
    return sum(1 for e in events if e["cat"] == "kernel"), sum(float(e["dur"]) for e in events)


def busy(events: list[dict[str, Any]]) -> float:
    """Union of the events' intervals, per device (pid), summed."""
    total = 0.0
    for device in {e["pid"] for e in events}:
        intervals = sorted(
            (float(e["ts"]), float(e["ts"]) + float(e["dur"]), float(e["dur"]))
            for e in events
            if e["pid"] == device
        )
        end = -1.0
        for a, b, d in intervals:
            if a >= end:
                total += d  # as recorded: b - a rounds at timestamps near 1e12 µs
                end = b
            elif b > end:
                total += b - end
                end = b
    return total


def steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [
        e
        for e in events
        if e.get("cat") == "user_annotation" and str(e.get("name")).startswith("ProfilerStep#")
    ]
    return sorted(found, key=lambda e: float(e["ts"]))


# --- every region's kernels and device time, against the independent count

# (trace, regions, steps the report leaves out at the end): "steps" is one round per
# ProfilerStep, None the whole trace. The ROCm toy's last step is the empty one that
# stopping the profiler opens.
CASES = [
    (HTA_GRAPHS, "steps", 0),
    (RESNET, "steps", 0),
    (ROCM_TOY, "steps", 1),
    (TRITON, "steps", 0),
    (VLLM_GRAPH, None, 0),
    (B200_EAGER, None, 0),
    (SGLANG, None, 0),
    (ALEXNET, None, 0),
    (SIMPLE_ADD, None, 0),
]


@pytest.mark.parametrize(("path", "regions", "dropped"), CASES, ids=lambda v: getattr(v, "name", v))
def test_each_rounds_kernels_and_device_time_are_everything_it_launched(
    path: Path, regions: str | None, dropped: int
) -> None:
    events = trace(path)
    spans: list[dict[str, Any] | None] = [None]
    if regions == "steps":
        spans = list(steps(events))
        spans = spans[: len(spans) - dropped]
    expected = [kernels_and_us(launched_by(events, s)) for s in spans]
    m = only(report(path)).measurement
    assert m.rounds == len(expected)
    assert m.kernels == max(k for k, _ in expected)
    assert m.device_us.samples == pytest.approx([us for _, us in expected], rel=1e-12)
    if regions == "steps":
        # Each round's kernels: every one of them has a launch, so every one has a gap.
        assert m.launch_gap_us is not None
        assert m.launch_gap_us.n == sum(k for k, _ in expected)


def test_alexnet_annotation_rounds_count_what_each_launched() -> None:
    name = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
    events = trace(ALEXNET)
    spans = sorted(
        (e for e in events if e.get("cat") == "user_annotation" and e["name"] == name),
        key=lambda e: float(e["ts"]),
    )
    expected = [kernels_and_us(launched_by(events, s)) for s in spans]
    m = only(report_trace(ALEXNET, region=name)).measurement
    assert m.device_us.samples == pytest.approx([us for _, us in expected], rel=1e-12)
    assert m.kernels == max(k for k, _ in expected)


def test_four_traces_give_the_launched_figures_recorded_for_them() -> None:
    # The "launched" figures first recorded for these traces; the test's own count agrees.
    cases = [
        (VLLM_GRAPH, 425, 10_717.708),
        (B200_EAGER, 768, 11_665.76),
        (SGLANG, 527, 492_811.563),
    ]
    for path, kernels, us in cases:
        counted, counted_us = kernels_and_us(launched_by(trace(path), None))
        assert counted == kernels and counted_us == pytest.approx(us)
        m = only(report(path)).measurement
        assert m.kernels == kernels and m.device_us.median == pytest.approx(us)
    hta = only(report(HTA_GRAPHS)).measurement
    assert hta.kernels == 1555
    assert sum(hta.device_us.samples) == pytest.approx(907_245.0)


# --- graph replays, direct launches, flows


def test_one_graph_launch_carries_every_device_event_of_its_correlation() -> None:
    events = trace(VLLM_GRAPH)
    [graph] = [c for c in launches(events).values() if "GraphLaunch" in c["name"]]
    replayed = [
        e for e in device_events(events) if e["args"]["correlation"] == graph["args"]["correlation"]
    ]
    kernels, us = kernels_and_us(replayed)
    assert kernels == 421
    rows = {r.name: r for r in only(report(VLLM_GRAPH)).measurement.per_op}
    row = rows["hipGraphLaunch (graph replay)"]
    assert row.calls == 0 and row.kernels == kernels
    assert row.device_us == pytest.approx(us)


def test_graph_launches_on_both_threads_of_a_training_step_carry_their_kernels() -> None:
    events = trace(HTA_GRAPHS)
    graphs = [c for c in launches(events).values() if "GraphLaunch" in c["name"]]
    device = device_events(events)
    carried = {
        c["args"]["correlation"]: sum(
            1
            for e in device
            if e["cat"] == "kernel" and e["args"]["correlation"] == c["args"]["correlation"]
        )
        for c in graphs
    }
    assert sorted(set(carried.values())) == [315, 429]
    assert len({c["tid"] for c in graphs}) == 2  # forward thread and autograd thread


def launched_under_no_op(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Launch calls that no cpu_op on their thread contains."""
    ops: dict[tuple[Any, Any], list[tuple[float, float]]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ops.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    # Per thread: op starts in order, and the latest end of any op started so far. An op
    # contains a call iff one that started no later than the call ends no earlier.
    reach: dict[tuple[Any, Any], tuple[list[float], list[float]]] = {}
    for thread, spans in ops.items():
        spans.sort()
        ends, latest = [], -1.0
        for _, end in spans:
            latest = max(latest, end)
            ends.append(latest)
        reach[thread] = ([a for a, _ in spans], ends)
    out = []
    for c in launches(events).values():
        starts, ends = reach.get((c["pid"], c["tid"]), ([], []))
        i = bisect_right(starts, c["ts"])
        if i == 0 or ends[i - 1] < c["ts"] + c["dur"]:
            out.append(c)
    return out


@pytest.mark.parametrize(
    ("path", "expected_rows"),
    [
        (B200_EAGER, {"_copy_page_indices_kernel"}),
        (SGLANG, {"create_flashinfer_kv_indices_triton", "(launched outside any op)"}),
        (HTA_GRAPHS, {"(launched outside any op)"}),
    ],
    ids=["b200", "sglang", "hta"],
)
def test_launches_under_no_op_get_rows_named_for_their_launcher(
    path: Path, expected_rows: set[str]
) -> None:
    events = trace(path)
    outside = launched_under_no_op(events)
    device = device_events(events)
    corr = {c["args"]["correlation"] for c in outside}
    by_kernel = [e for e in device if e["args"]["correlation"] in corr]
    m = only(report(path)).measurement
    rows = {r.name: r for r in m.per_op if r.calls == 0}
    if path is HTA_GRAPHS:
        # Its backward thread's ops are the aten ops autograd nodes dispatch (trace/analysis):
        # what a node launches itself (a graph replay, fbgemm's kernels) gets a row named
        # for its launcher beside the rows of launches under no cpu_op at all.
        assert expected_rows <= set(rows)
        others = set(rows) - expected_rows
        assert others and all(
            n.endswith(("(graph replay)", "(not one of the region's ops)")) for n in others
        ), others
    else:
        assert set(rows) == expected_rows
    assert sum(rows[n].kernels for n in expected_rows) * m.rounds == sum(
        1 for e in by_kernel if e["cat"] == "kernel"
    )
    if path is not HTA_GRAPHS:  # one round: the rows hold exactly those launches' time
        assert sum(r.device_us for r in rows.values()) == pytest.approx(
            sum(e["dur"] for e in by_kernel)
        )
        # A direct launch is no dispatch: the ops are what they were.
        assert sum(r.calls for r in m.per_op) == m.ops


def test_device_events_linked_only_by_their_flow_still_count(tmp_path: Path) -> None:
    # The vLLM graph trace with "correlation" removed from every device event's args: a
    # real trace altered here, leaving the ac2g flow ends as their only link to the launch.
    doc = json.loads(gzip.decompress(VLLM_GRAPH.read_bytes()))
    for e in device_events(doc["traceEvents"]):
        del e["args"]["correlation"]
    path = tmp_path / "flows_only.json"
    path.write_text(json.dumps(doc))
    m = only(report_trace(path)).measurement
    kernels, us = kernels_and_us(launched_by(trace(VLLM_GRAPH), None))
    assert m.kernels == kernels and m.device_us.median == pytest.approx(us)
    rows = {r.name: r for r in m.per_op}
    assert rows["hipGraphLaunch (graph replay)"].kernels == 421


# --- the per-op table accounts for all device time


@pytest.mark.parametrize("path", ALL_TRACES, ids=lambda p: p.name[:48])
def test_every_regions_per_op_rows_sum_to_its_device_time(path: Path) -> None:
    events = events_from_chrome(load_trace(path))
    index = TraceIndex.build(events)
    # The CUPTI range-profiler trace has launches but no device events: host mode only.
    mode: Mode = "device" if index.has_device else "host"
    for name, nodes in select_regions(events, index, None, str(path)):
        for r in region_rounds(name, nodes, mode, index):
            assert sum(r.op_device_us.values()) == pytest.approx(r.device_us, rel=1e-9, abs=1e-9)
            assert sum(r.op_kernels.values()) == len(r.kernels)
    for region in report_trace(path, mode=mode).regions:
        m = region.measurement
        if m.rounds == 1:
            total = sum(row.device_us for row in m.per_op)
            assert total == pytest.approx(m.device_us.median, rel=1e-9, abs=1e-9)


def test_the_whole_trace_owns_device_events_whose_launch_was_not_recorded() -> None:
    # The ResNet trace without its ProfilerStep annotations: the whole trace is the region.
    raw = trace(RESNET)
    launched = launches(raw)
    lost = [e for e in device_events(raw) if e["args"].get("correlation") not in launched]
    kernels, us = kernels_and_us(lost)
    assert len(lost) == 968
    events = [
        e for e in events_from_chrome(load_trace(RESNET)) if not e.name.startswith("ProfilerStep#")
    ]
    index = TraceIndex.build(events)
    [(name, nodes)] = select_regions(events, index, None, "resnet")
    [r] = region_rounds(name, nodes, "device", index)
    assert name == "(whole trace)"
    assert r.op_kernels["(launch not recorded)"] == kernels
    assert r.op_device_us["(launch not recorded)"] == pytest.approx(us)
    all_kernels, all_us = kernels_and_us(device_events(raw))
    assert len(r.kernels) == all_kernels and r.device_us == pytest.approx(all_us)


# --- GPU-only traces, and overlapping streams


def test_gpu_only_trace_reports_the_whole_trace_per_stream(tmp_path: Path) -> None:
    # The HTA training trace with every host event dropped (made here, not recorded so):
    # only kernels, memcpys and memsets, and the metadata events.
    doc = json.loads(gzip.decompress(HTA_GRAPHS.read_bytes()))
    doc["traceEvents"] = [
        e for e in doc["traceEvents"] if e.get("ph") == "M" or e.get("cat") in DEVICE_CATS
    ]
    path = tmp_path / "gpu_only.json"
    path.write_text(json.dumps(doc))
    rep = report_trace(path)
    assert rep.mode == "device"
    m = only(rep).measurement
    device = device_events(doc["traceEvents"])
    kernels, us = kernels_and_us(device)
    assert (m.region, m.ops, m.kernels) == ("(whole trace)", 0, kernels)
    assert m.device_us.median == pytest.approx(us)
    per_stream: dict[str, float] = {}
    for e in device:
        per_stream[f"stream {e['tid']}"] = per_stream.get(f"stream {e['tid']}", 0.0) + e["dur"]
    assert {r.name: r.device_us for r in m.per_op} == pytest.approx(per_stream)
    assert len(per_stream) == 4
    assert m.device_busy_us is not None
    assert m.device_busy_us.median == pytest.approx(busy(device))


def test_overlapping_streams_report_sum_and_busy_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = trace(HTA_GRAPHS)
    launched = [launched_by(events, s) for s in steps(events)]
    m = only(report(HTA_GRAPHS)).measurement
    assert m.device_busy_us is not None
    sums = [kernels_and_us(ev)[1] for ev in launched]
    unions = [busy(ev) for ev in launched]
    assert m.device_us.samples == pytest.approx(sums)
    assert m.device_busy_us.samples == pytest.approx(unions)
    # The figures docs/device-time.md gives: a median step sums 151.0 ms of device work
    # on 4 streams, while the device was busy for 122.2 ms.
    assert round(m.device_us.median / 1000, 1) == 151.0
    assert round(m.device_busy_us.median / 1000, 1) == 122.2
    assert len({e["tid"] for ev in launched for e in ev}) == 4
    assert main(["report", str(HTA_GRAPHS)]) == 0
    out = capsys.readouterr().out
    assert "device busy (union over streams): median 122,239.0 µs" in out


def test_budgets_and_baselines_judge_the_sum_not_the_busy_time() -> None:
    m = only(report(HTA_GRAPHS)).measurement
    assert m.device_busy_us is not None
    between = (m.device_busy_us.median + m.device_us.median) / 2  # ~137 ms
    [violation] = check(Budget(max_device_us=between), [m])
    assert violation.metric == "max_device_us" and violation.value == m.device_us.median
    assert check(Budget(max_device_us=m.device_us.median * 1.01), [m]) == []
    assert Entry.of(m).device_us == m.device_us


def test_busy_time_equals_the_sum_on_one_stream() -> None:
    m = only(report(ROCM_TOY)).measurement
    assert m.device_busy_us is not None
    assert m.device_busy_us.median == pytest.approx(m.device_us.median, rel=1e-6)


# --- the live path: torch's FunctionEvents, built as its Kineto parser builds them


def _live_graph_replay() -> list[Any]:
    """A region that replays a CUDA graph and calls a Triton kernel outside any op, as
    ``prof.events()`` returns it: the launches have no linked op (linked id 0), the device
    events carry their launch's correlation as their id."""
    cuda = DeviceType.CUDA
    return [
        FunctionEvent(
            1, "region", 1, 0.0, 100.0, is_user_annotation=True, activity_type="user_annotation"
        ),
        FunctionEvent(2, "aten::mul", 1, 5.0, 15.0, activity_type="cpu_op"),
        FunctionEvent(
            900,
            "cudaLaunchKernel",
            1,
            6.0,
            9.0,
            linked_correlation_id=2,
            activity_type="cuda_runtime",
        ),
        FunctionEvent(
            900,
            "mul_kernel",
            7,
            20.0,
            23.0,
            device_type=cuda,
            linked_correlation_id=2,
            activity_type="kernel",
            device_resource_id=7,
        ),
        FunctionEvent(901, "cudaGraphLaunch", 1, 30.0, 40.0, activity_type="cuda_runtime"),
        FunctionEvent(
            901,
            "graph_kernel_a",
            7,
            41.0,
            45.0,
            device_type=cuda,
            activity_type="kernel",
            device_resource_id=7,
        ),
        FunctionEvent(
            901,
            "graph_kernel_b",
            7,
            45.0,
            52.0,
            device_type=cuda,
            activity_type="kernel",
            device_resource_id=7,
        ),
        FunctionEvent(
            901,
            "Memcpy DtoD",
            7,
            52.0,
            53.0,
            device_type=cuda,
            activity_type="gpu_memcpy",
            device_resource_id=7,
        ),
        FunctionEvent(902, "cuLaunchKernelEx", 1, 60.0, 62.0, activity_type="cuda_driver"),
        # Dynamo's bookkeeping is no op: what it launches gets a row named for it.
        FunctionEvent(3, "TorchDynamo Cache Lookup", 1, 70.0, 80.0, activity_type="cpu_op"),
        FunctionEvent(
            903,
            "cudaLaunchKernel",
            1,
            72.0,
            74.0,
            linked_correlation_id=3,
            activity_type="cuda_runtime",
        ),
        FunctionEvent(
            903,
            "guard_copy",
            7,
            75.0,
            76.0,
            device_type=cuda,
            linked_correlation_id=3,
            activity_type="kernel",
            device_resource_id=7,
        ),
        FunctionEvent(
            902,
            "triton_add",
            7,
            63.0,
            65.0,
            device_type=cuda,
            activity_type="kernel",
            device_resource_id=7,
        ),
        # The GPU timeline's copy of the annotation: a span, not device work.
        FunctionEvent(
            1,
            "region",
            7,
            20.0,
            65.0,
            device_type=cuda,
            is_user_annotation=True,
            activity_type="gpu_user_annotation",
        ),
    ]


def test_live_events_count_graph_replays_and_direct_launches() -> None:
    events = events_from_function_events(_live_graph_replay())
    [r] = analyze_markers(events, ["region"], "device")
    assert r.ops == ["aten::mul"]
    assert sorted(r.kernels) == [
        "graph_kernel_a",
        "graph_kernel_b",
        "guard_copy",
        "mul_kernel",
        "triton_add",
    ]
    assert r.device_us == pytest.approx(3 + 4 + 7 + 1 + 2 + 1)
    bookkeeping = "TorchDynamo Cache Lookup (not one of the region's ops)"
    assert r.op_device_us == pytest.approx(
        {
            "aten::mul": 3.0,
            "cudaGraphLaunch (graph replay)": 12.0,
            "triton_add": 2.0,
            bookkeeping: 1.0,
        }
    )
    assert r.op_kernels == {
        "aten::mul": 1,
        "cudaGraphLaunch (graph replay)": 2,
        "triton_add": 1,
        bookkeeping: 1,
    }
    assert r.device_busy_us == pytest.approx(3 + 12 + 2 + 1)
    assert len(r.launch_gaps_us) == 5


def test_live_events_before_activity_types_follow_the_old_rules() -> None:
    # torch without FunctionEvent.activity_type: a linked CPU event is a launch, device
    # events are kernels unless named Memcpy / Memset. The graph replay, unlinked, is lost
    # there (an op named cudaGraphLaunch): what activity types fixed.
    old = _live_graph_replay()
    for fe in old:
        fe.activity_type = None
    [r] = analyze_markers(events_from_function_events(old), ["region"], "device")
    assert "cudaGraphLaunch" in r.ops and "mul_kernel" in r.kernels


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_verify_cuda_says_there_is_no_cuda_device_and_writes_why(tmp_path: Path) -> None:
    bench = Path(__file__).parent.parent.parent / "benchmarks"
    env = {**os.environ, "OUT": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, str(bench / "verify_cuda.py")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "no CUDA device" in proc.stderr and "Traceback" not in proc.stderr
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["backend"] == "cuda" and "no CUDA device" in result["unavailable"]


# --- synthetic traces: the rules at their edges


def x_event(name: str, cat: str, ts: float, dur: float, track: tuple[int, int], **args: Any) -> Any:
    pid, tid = track
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid,
            "args": args}  # fmt: skip


def test_a_kernel_whose_launch_was_not_recorded_belongs_to_the_op_of_its_external_id(
    tmp_path: Path,
) -> None:
    # No runtime launch call at all: each kernel's only tie is the External id of an op.
    # One op inside the step, one after it, and a kernel whose id names no op.
    host, device = (1, 1), (0, 7)
    events = [
        x_event("ProfilerStep#0", "user_annotation", 0, 100, host),
        x_event("aten::mm", "cpu_op", 10, 40, host, **{"External id": 7}),
        x_event("aten::add", "cpu_op", 200, 10, host, **{"External id": 8}),
        x_event("gemm", "kernel", 60, 30, device, **{"External id": 7, "correlation": 99}),
        x_event("add", "kernel", 220, 5, device, **{"External id": 8, "correlation": 98}),
        x_event("orphan", "kernel", 230, 3, device, **{"External id": 9, "correlation": 97}),
    ]
    path = tmp_path / "external_ids.json"
    path.write_text(json.dumps({"traceEvents": events}))
    step = events[0]
    inside = {
        e["args"]["External id"]
        for e in events
        if e["cat"] == "cpu_op" and step["ts"] <= e["ts"] <= step["ts"] + step["dur"]
    }
    mine = [e for e in events if e["cat"] == "kernel" and e["args"]["External id"] in inside]
    m = only(report_trace(path)).measurement
    assert (m.kernels, m.device_us.median) == kernels_and_us(mine) == (1, 30.0)
    assert [(r.name, r.kernels, r.device_us) for r in m.per_op] == [("aten::mm", 1.0, 30.0)]


def test_a_launch_at_the_regions_very_end_is_the_regions() -> None:
    region = Event("step", Kind.ANNOTATION, 100.0, 50.0, (1, 1))
    at_end = Event("cudaLaunchKernel", Kind.RUNTIME, 150.0, 1.0, (1, 2), correlation=1)
    after = Event("cudaLaunchKernel", Kind.RUNTIME, 150.01, 1.0, (1, 2), correlation=2)
    kernels = {
        c: [Event(f"k{c}", Kind.KERNEL, 160.0 + c, 1.0, (0, 7), correlation=c)] for c in (1, 2)
    }
    index = DeviceIndex.build({1: at_end, 2: after}, kernels, {}, [region])
    assert [g.anchor for g in index.in_span(region)] == [at_end]
