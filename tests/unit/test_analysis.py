"""The analysis on real torch.profiler output: the tutorial's counts must come out."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from pytest_neuronperf.backends import CpuBackend
from pytest_neuronperf.measure.errors import MeasureError
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.trace.analysis import analyze_markers
from pytest_neuronperf.trace.events import events_from_chrome
from pytest_neuronperf.trace.offline import report_trace
from pytest_neuronperf.trace.summary import op_diff, op_diff_text

HIDDEN = 256


def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, 1e-6)


@pytest.fixture(scope="module")
def runner() -> Runner:
    r = Runner(CpuBackend())
    # Kernel profiling must be on before compiling: prepare as the plugin would.
    r.backend.prepare()
    return r


@pytest.fixture(scope="module")
def xw() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4, HIDDEN), torch.randn(HIDDEN)


@pytest.fixture(scope="module")
def compiled(runner: Runner) -> Callable[..., Any]:
    return torch.compile(naive)


def measure(
    runner: Runner, fn: Callable[..., Any], *args: Any, rounds: int = 3, warmup: int = 1
) -> Measurement:
    _, m = runner.measure_callable(
        fn, args, {}, test_id="t", name="r", warmup=warmup, rounds=rounds
    )
    return m


def test_naive_rmsnorm_is_six_eager_ops(runner: Runner, xw: Any) -> None:
    m = measure(runner, naive, *xw)
    assert m.ops == 6
    assert m.op_counts == {"aten::mul": 3, "aten::mean": 1, "aten::add": 1, "aten::rsqrt": 1}
    assert m.consistent
    assert m.device_us.n == 3 and m.device_us.median > 0
    assert sum(r.calls for r in m.per_op) == 6


def test_rms_norm_is_one_op(runner: Runner, xw: Any) -> None:
    m = measure(runner, fused, *xw)
    assert m.ops == 1
    assert m.op_counts == {"aten::rms_norm": 1}
    # Its CPU implementation still runs several leaf computations (torch 2.13).
    assert m.kernels == 7
    assert m.kernel_counts == {
        "aten::pow": 1,
        "aten::fill_": 1,
        "aten::copy_": 2,
        "aten::rsqrt": 1,
        "aten::mul": 2,
    }
    assert m.per_op[0].name == "aten::rms_norm" and m.per_op[0].share == 1.0


@pytest.mark.slow  # torch.compile
def test_compiled_naive_is_one_region_with_one_fused_kernel(
    runner: Runner, compiled: Callable[..., Any], xw: Any
) -> None:
    m = measure(runner, compiled, *xw)
    assert m.ops == 1
    [(name, count)] = m.op_counts.items()
    assert name.startswith("Torch-Compiled Region") and count == 1
    assert m.kernels == 1
    [kernel] = m.kernel_counts
    assert "cpp_fused" in kernel
    assert m.first_call_us > m.host_us.median  # compilation shows in warm-up, not rounds


def test_rounds_that_dispatch_different_ops_are_reported(runner: Runner, xw: Any) -> None:
    calls = {"n": 0}

    def drifting(x: torch.Tensor) -> torch.Tensor:
        calls["n"] += 1
        y = x * 2
        # A data-dependent extra op on one measured call: the prime round, round 0, then
        # round 1 (profiled before the host window). No warm-up, so no settling calls
        # move the count.
        return y + 1 if calls["n"] == 3 else y

    m = measure(runner, drifting, xw[0], warmup=0)
    assert not m.consistent
    assert m.ops == 2  # budgets see the worst round
    assert "round 1" in m.round_variants[0] and "+ aten::add ×1" in m.round_variants[0]


def test_region_nesting_annotations_and_empty_regions(runner: Runner, xw: Any) -> None:
    done: list[Measurement] = []
    x, w = xw
    with runner.region("outer", test_id="t", on_done=done.append):
        naive(x, w)
        with torch.profiler.record_function("user block"):  # user annotations are transparent
            torch.relu(x)
        with runner.region("inner", test_id="t", on_done=done.append):
            fused(x, w)
    with runner.region("nothing", test_id="t", on_done=done.append):
        pass
    by_name = {m.region: m for m in done}
    assert by_name["outer"].ops == 8  # 6 naive + relu + rms_norm of the inner region
    assert by_name["inner"].op_counts == {"aten::rms_norm": 1}
    assert by_name["nothing"].ops == 0 and by_name["nothing"].per_op == ()


def test_callable_form_inside_a_region_is_refused(runner: Runner, xw: Any) -> None:
    with (
        pytest.raises(MeasureError, match="inside region 'outer'"),
        runner.region("outer", test_id="t", on_done=lambda m: None),
    ):
        measure(runner, naive, *xw)


@pytest.mark.parametrize("form", ["callable", "region"])
def test_exception_propagates_and_profiler_is_stopped(runner: Runner, xw: Any, form: str) -> None:
    class Boom(Exception):
        pass

    def explode(x: torch.Tensor) -> None:
        torch.relu(x)
        raise Boom("user error")

    with pytest.raises(Boom, match="user error"):
        if form == "callable":
            measure(runner, explode, xw[0])
        else:
            with runner.region("r", test_id="t", on_done=lambda m: None):
                explode(xw[0])
    assert not torch.autograd.profiler._is_profiler_enabled
    assert measure(runner, naive, *xw).ops == 6  # the next measurement is unaffected


def test_saved_chrome_trace_gives_the_same_ops_as_live_events(
    runner: Runner, xw: Any, tmp_path: Path
) -> None:
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("naive"):
            naive(*xw)
        with record_function("fused"):
            fused(*xw)
    live = analyze_markers(runner.backend.collect(prof), ["naive", "fused"], "host")
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    saved = analyze_markers(
        events_from_chrome(json.loads(path.read_text())), ["naive", "fused"], "host"
    )
    assert [r.ops for r in live] == [r.ops for r in saved]
    assert [len(r.ops) for r in saved] == [6, 1]
    assert [r.kernels for r in live] == [r.kernels for r in saved]


def test_op_diff_names_what_appeared_and_vanished() -> None:
    before = {"aten::rms_norm": 1}
    after = {"aten::mul": 3, "aten::mean": 1}
    assert op_diff(before, after) == [("aten::mul", 3), ("aten::mean", 1), ("aten::rms_norm", -1)]
    assert op_diff_text(before, after) == "+ aten::mul ×3, + aten::mean ×1, - aten::rms_norm ×1"


# Ops in a backward pass (docs/backward-ops.md).

ROCM = (
    Path(__file__).parent.parent
    / "data"
    / "hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
)
AUTOGRAD = "autograd::engine::evaluate_function: "


def expected_ops(events: list[dict[str, Any]], region: dict[str, Any]) -> Counter[str]:
    """Top-level ops of ``region`` by a plain loop over the chrome trace: host ops on any
    thread of its process inside its span whose enclosing events in the span are all
    annotations, the autograd engine's node spans or the node's own span inside one."""
    lo, hi = region["ts"], region["ts"] + region["dur"]
    inside = [
        e
        for e in events
        if e is not region
        and e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "user_annotation")
        and e["pid"] == region["pid"]
        and lo <= e["ts"]
        and e["ts"] + e["dur"] <= hi
    ]

    def transparent(e: dict[str, Any], around: list[dict[str, Any]]) -> bool:
        return (
            e["cat"] == "user_annotation"
            or e["name"].startswith(AUTOGRAD)
            or any(b["name"] == AUTOGRAD + e["name"] for b in around)
        )

    found: Counter[str] = Counter()
    for e in inside:
        around = [
            a
            for a in inside
            if a is not e
            and a["tid"] == e["tid"]
            and a["ts"] <= e["ts"]
            and e["ts"] + e["dur"] <= a["ts"] + a["dur"]
            and a["dur"] > e["dur"]
        ]
        if not transparent(e, around) and all(transparent(a, around) for a in around):
            found[e["name"]] += 1
    return found


class MLP(torch.nn.Module):
    """LlamaMLP's shape: down(silu(gate(x)) * up(x))."""

    def __init__(self, hidden: int = 64, inner: int = 128) -> None:
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, inner, bias=False)
        self.up_proj = torch.nn.Linear(hidden, inner, bias=False)
        self.down_proj = torch.nn.Linear(inner, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return out


def test_a_backward_pass_counts_the_aten_ops_its_nodes_dispatch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    mlp, x = MLP(), torch.randn(4, 64)

    def step() -> None:
        mlp.zero_grad(set_to_none=True)
        mlp(x).sum().backward()

    step()
    runner = Runner(CpuBackend(), count_work=False, reference=False, trace_dir=tmp_path)
    done: list[Measurement] = []
    with runner.region("fwd_bwd", test_id="t", on_done=done.append):
        step()
    [m] = done
    [trace] = tmp_path.glob("*.json")
    events = json.loads(trace.read_text())["traceEvents"]
    [region] = [e for e in events if e.get("name", "").endswith(" fwd_bwd") and e.get("ph") == "X"]
    expected = expected_ops(events, region)
    assert m.op_counts == dict(expected)
    assert not [op for op in m.op_counts if op.startswith("autograd::")]
    # Forward: three aten::linear; backward: one mm per weight gradient, one more for the
    # input gradient of down_proj (x needs none).
    assert m.op_counts["aten::silu_backward"] == 1 and m.op_counts["aten::mm"] == 4
    nodes = sum(1 for e in events if e.get("name", "").startswith(AUTOGRAD))
    assert nodes == 12 and m.ops == sum(expected.values())


def test_the_rocm_step_counts_backward_aten_ops_by_an_independent_loop() -> None:
    with gzip.open(ROCM, "rt") as fh:
        events = json.load(fh)["traceEvents"]
    [step] = [
        e for e in events if e.get("name") == "ProfilerStep#1" and e.get("cat") == "user_annotation"
    ]
    [region] = report_trace(ROCM).regions
    assert region.measurement.op_counts == dict(expected_ops(events, step))
