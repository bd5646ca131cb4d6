"""The offline report on real traces: this project's own CPU traces and others' CUDA/ROCm
traces (tests/data/README.md says where each comes from)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_neuronperf.cli.main import main
from pytest_neuronperf.trace.analysis import TraceIndex
from pytest_neuronperf.trace.events import DEVICE_KINDS, Kind, events_from_chrome
from pytest_neuronperf.trace.offline import RegionReport, TraceReport, load_trace, report_trace

DATA = Path(__file__).parent.parent / "data"
ALEXNET = DATA / "hta_critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz"
ROCM = DATA / "hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
TRITON = DATA / "hta_triton_example__triton_example.json.gz"
CUPTI = DATA / "hta_cupti_profiler__benchmark_result_924719_1679055439_trace.json.gz"
CPU_ONLY = DATA / "hta_cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"


def only(report: TraceReport) -> RegionReport:
    [region] = report.regions
    return region


# --- traces this project wrote (examples/test_rmsnorm.py with --neuron-profile-trace-dir)


@pytest.mark.parametrize(
    ("name", "region", "ops", "op_counts"),
    [
        (
            "naive",
            "rmsnorm_naive",
            6,
            {"aten::mul": 3, "aten::mean": 1, "aten::add": 1, "aten::rsqrt": 1},
        ),
        ("fused", "rmsnorm_fused", 1, {"aten::rms_norm": 1}),
        ("compiled", "rmsnorm_compiled", 1, {"Torch-Compiled Region: 0/0": 1}),
    ],
)
def test_own_cpu_traces_give_the_live_counts(
    name: str, region: str, ops: int, op_counts: dict[str, int]
) -> None:
    report = report_trace(DATA / f"cpu_rmsnorm_{name}.json.gz")
    assert report.mode == "host" and report.device_kind == "cpu"
    m = only(report).measurement
    assert (m.region, m.ops, m.op_counts) == (region, ops, op_counts)
    assert m.rounds == 10 and m.consistent  # the prime round is not a round
    assert m.device_us.median > 0


def test_compiled_trace_runs_one_inductor_kernel() -> None:
    m = only(report_trace(DATA / "cpu_rmsnorm_compiled.json.gz")).measurement
    assert m.kernel_counts == {"graph_0_cpp_fused_add_mean_mul_rsqrt_0": 1}


def test_region_by_measurement_name_annotation_name_and_glob() -> None:
    path = DATA / "cpu_rmsnorm_naive.json.gz"
    assert only(report_trace(path, region="rmsnorm_naive")).measurement.rounds == 10
    one = only(report_trace(path, region="neuronperf#0.3 rmsnorm_naive")).measurement
    assert (one.rounds, one.ops) == (1, 6)
    # The glob matches the prime round too: every annotation of that name is a round.
    assert only(report_trace(path, region="neuronperf#0.* rmsnorm_naive")).measurement.rounds == 11


# --- CUDA / ROCm traces recorded by others


def test_alexnet_every_device_event_is_attributed_once_to_its_launching_op() -> None:
    events = events_from_chrome(load_trace(ALEXNET))
    device = [e for e in events if e.kind in DEVICE_KINDS]
    kernels = [e for e in device if e.kind is Kind.KERNEL]
    report = report_trace(ALEXNET)
    assert report.mode == "device" and report.device_kind == "cuda:NVIDIA A100-PG509-200"
    region = only(report)
    m = region.measurement
    assert m.region == "(whole trace)"
    assert m.kernels == len(kernels) == 79
    assert m.device_us.median == pytest.approx(sum(e.dur_us for e in device))
    assert region.launch_gap_us.n == 79
    rows = {r.name: r for r in m.per_op}
    # The HtoD copies belong to aten::to. In this older layout a kernel's External id is
    # its launch correlation and collides with small op ids: linking by External id gave
    # copies to aten::detach and aten::uniform_.
    memcpy_us = sum(e.dur_us for e in device if e.kind is Kind.MEMCPY)
    assert rows["aten::to"].device_us >= memcpy_us
    assert rows["aten::to"].kernels == 0  # copies take device time but are no kernels
    assert rows["aten::detach"].device_us == 0 and rows["aten::uniform_"].device_us == 0
    assert rows["aten::conv2d"].kernels == 40 and rows["aten::linear"].kernels == 12


def test_alexnet_measured_forward_rounds() -> None:
    region = only(
        report_trace(ALEXNET, region="[param|pytorch.model.alex_net|0|0|0|measure|forward]")
    )
    m = region.measurement
    assert m.rounds == 2
    assert m.op_counts["aten::conv2d"] == 5 and m.op_counts["aten::linear"] == 3
    # The first round also clears the cache (zeros, mul, to): the report says so.
    [variant] = m.round_variants
    assert "round 1: 22 ops vs 25" in variant and "aten::zeros" in variant
    assert m.device_us.median == pytest.approx(5317.0)
    # The host runs ahead of a busy GPU: kernels wait in the queue for ~1 ms.
    assert region.launch_gap_us.n == 78 and region.launch_gap_us.median > 500


def test_rocm_step_counts_the_backward_ops_of_the_autograd_thread() -> None:
    report = report_trace(ROCM)
    assert report.device_kind.startswith("rocm:")
    m = only(report).measurement
    # ProfilerStep#2 is the empty step stopping the profiler opens: not a round.
    assert m.region == "ProfilerStep#*" and m.rounds == 1
    # Backward counts the aten ops its nodes dispatch (docs/backward-ops.md): AddmmBackward0
    # is t, mm, t, sum, view; the engine's spans around the nodes are not ops.
    assert m.op_counts["aten::mm"] == 1 and m.op_counts["aten::threshold_backward"] == 1
    assert not [op for op in m.op_counts if op.startswith("autograd::")]
    assert m.op_counts["aten::linear"] == 1
    assert m.kernels == 14  # every kernel in the trace, forward and backward
    rows = {r.name: r for r in m.per_op}
    assert rows["aten::to"].device_us == pytest.approx(38.2, abs=0.1)  # its two HtoD copies
    assert m.device_us.median == pytest.approx(149.0, abs=0.1)


def test_triton_kernel_links_through_the_driver_launch() -> None:
    region = only(report_trace(TRITON))
    m = region.measurement
    assert m.op_counts == {"Torch-Compiled Region: 0/0": 1}
    assert m.kernel_counts == {"triton_poi_fused_add_cos_sin_0": 1}
    assert m.device_us.median == pytest.approx(1.76)
    assert region.launch_gap_us.samples == pytest.approx((2413669097444.592 - 2413669097399.166,))


def test_cpu_only_trace_is_host_mode_and_device_mode_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert report_trace(CPU_ONLY).mode == "host"
    assert main(["report", str(CPU_ONLY), "--mode", "device"]) == 2
    err = capsys.readouterr().err
    assert "no device events (a CPU-only trace)" in err


def test_trace_without_device_events_but_with_launches_needs_host_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["report", str(CUPTI)]) == 2
    assert "runtime calls but no device events" in capsys.readouterr().err
    assert main(["report", str(CUPTI), "--mode", "host"]) == 0


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(TRITON), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"]["mode"] == "device"
    [record] = doc["measurements"]
    region = record["measurement"]
    assert region["ops"] == 1 and region["launches"] == 1
    assert region["launch_gap_us"]["median"] == pytest.approx(45.426, abs=1e-3)


def test_table_output_names_ops_kernels_and_launch_gaps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["report", str(ROCM)]) == 0
    out = capsys.readouterr().out
    assert "rocm:" in out and "aten::threshold_backward" in out
    assert "launch gap" in out and "14 kernel launches" in out
    # The summary table has the column too, as the live CUDA report does.
    assert "launch gap µs" in out.splitlines()[1]
    assert max(len(line) for line in out.splitlines()) < 200  # long kernel names are cut


@pytest.mark.slow  # a subprocess
def test_console_entry_point_runs_as_a_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_neuronperf", "report", str(TRITON)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Torch-Compiled Region: 0/0" in proc.stdout


# --- bad input: one line on stderr, exit status 2, no traceback


def _bad(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda t: t / "missing.json", "cannot read"),
        (lambda t: t, "is a directory"),
        (lambda t: _bad(t, "t.json.gz", b'{"traceEvents": []}'), "not gzip-compressed"),
        (lambda t: _bad(t, "t.json.gz", TRITON.read_bytes()[:600]), "truncated gzip"),
        (lambda t: _bad(t, "t.json", gzip.decompress(TRITON.read_bytes())[:900]), "truncated?"),
        (lambda t: _bad(t, "t.json", b"\x89PNG\r\n\x1a\n\x00\x00"), "not a JSON text file"),
        (lambda t: _bad(t, "t.json", b"hello"), "not valid JSON"),
        (lambda t: _bad(t, "t.json", b""), "empty file"),
        (lambda t: _bad(t, "t.json", b'{"foo": 1}'), "not a chrome trace"),
        (lambda t: _bad(t, "t.json", b'{"schemaVersion": 99, "traceEvents": []}'), "newer"),
        (lambda t: _bad(t, "t.json", b'{"traceEvents": []}'), "no profiler events"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: object,
    expected: str,
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    assert main(["report", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("neuronperf: error: ")
    assert expected in err and "Traceback" not in err
    # Named once: no second wording wrapped around the first.
    assert err.count(str(path)) == 1, err


def test_missing_region_names_the_regions_there(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(DATA / "cpu_rmsnorm_fused.json.gz"), "--region", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no region 'nope'" in err and "'rmsnorm_fused'" in err


def test_index_links_by_launch_even_when_external_ids_collide() -> None:
    events = events_from_chrome(load_trace(ALEXNET))
    index = TraceIndex.build(events)
    device = [e for e in events if e.kind in DEVICE_KINDS]
    assert all(e.correlation in index.launches for e in device)
    assert sum(len(v) for v in index.by_launch.values()) == len(device)


# One JSON layout for every report: `neuronperf report --json` writes the run report's
# layout, so that compare and history read main's trace against the pull request's.
RMSNORM = DATA / "cpu_rmsnorm_naive.json.gz"


def _report_json(trace: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    capsys.readouterr()
    assert main(["report", str(trace), "--json"]) == 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(capsys.readouterr().out)
    return out


def _with_an_extra_op(trace: Path, out: Path) -> tuple[Path, int]:
    """The trace with one ``aten::relu`` added at the end of each region round (written
    here by editing the trace's JSON); returns the copy and how many rounds got one."""
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    added = []
    for e in doc["traceEvents"]:
        if e.get("cat") == "user_annotation" and e["name"].startswith("neuronperf#"):
            end = e["ts"] + e["dur"]
            added.append({**e, "cat": "cpu_op", "name": "aten::relu", "ts": end - 1.0, "dur": 0.5})
            added[-1].pop("args", None)
    doc["traceEvents"] += added
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out, len(added)


@pytest.mark.parametrize("trace", [RMSNORM, TRITON], ids=["cpu-rmsnorm", "gpu-triton"])
def test_report_json_is_the_run_reports_layout_and_validates(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import jsonschema

    from pytest_neuronperf.reports.json import load, schema

    path = _report_json(trace, tmp_path / "report.json", capsys)
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, schema())
    assert doc["source"]["kind"] == "kineto-trace" and doc["source"]["path"] == str(trace)
    # The regions a plain loop finds: each distinct name after "neuronperf#<n>.<round> ";
    # a trace without such annotations is one whole-trace region.
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    names = {
        e["name"].split(" ", 1)[1]
        for e in events
        if e.get("cat") == "user_annotation" and e["name"].startswith("neuronperf#")
    }
    records = load(path).records
    assert len(records) == max(len(names), 1)
    if names:
        assert {r.measurement.region for r in records} == names
    assert all(r["measurement"]["test_id"] == trace.name for r in doc["measurements"])


@pytest.mark.parametrize("trace", [RMSNORM, TRITON], ids=["cpu-rmsnorm", "gpu-triton"])
def test_compare_reads_two_reports_of_the_same_trace_and_nothing_moved(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _report_json(trace, tmp_path / "main" / "report.json", capsys)
    new = _report_json(trace, tmp_path / "pr" / "report.json", capsys)
    fail_on = "regressed,new,removed,changed"
    assert main(["compare", str(base), str(new), "--fail-on", fail_on]) == 0
    out = capsys.readouterr().out
    assert "regressed" not in out and "+ " not in out


def test_compare_of_a_trace_with_an_extra_op_names_the_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra, rounds = _with_an_extra_op(RMSNORM, tmp_path / "pr" / RMSNORM.name)
    assert rounds > 1
    base = _report_json(RMSNORM, tmp_path / "main.json", capsys)
    new = _report_json(extra, tmp_path / "pr.json", capsys)
    assert main(["compare", str(base), str(new), "--fail-on", "regressed"]) == 1
    captured = capsys.readouterr()
    assert "+ aten::relu ×1" in captured.out
    assert "1 region(s) regressed" in captured.err
    # history reads the same two reports.
    html = tmp_path / "history.html"
    assert main(["history", str(base), str(new), "-o", str(html)]) == 0
    assert "rmsnorm_naive" in html.read_text()
