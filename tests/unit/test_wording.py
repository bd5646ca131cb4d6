"""Names and wording people read: torch builtins by their public
names, intervals too wide to judge, the Markdown verdict and code spans, what ``record``
says after a failing process, and what "ops" counts in a backward pass."""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.escape import md_code as code
from pytest_neuronperf.fixture import NeuronProfile
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import BaselineStatus, Measurement, Record, Status
from pytest_neuronperf.names import callable_name
from pytest_neuronperf.reports.markdown import render, verdict
from pytest_neuronperf.stats import Stats
from pytest_neuronperf.trace.offline import report_trace

DATA = Path(__file__).parent.parent / "data"
ROCM = DATA / "hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"


def cpu_runner(**kwargs: Any) -> Runner:
    return Runner(CpuBackend(), count_work=False, reference=False, **kwargs)


# --- names


def test_torch_builtins_are_named_as_they_are_called() -> None:
    assert callable_name(torch.exp) == "torch.exp"
    assert callable_name(torch.Tensor.add) == "torch.Tensor.add"
    assert callable_name(F.gelu) == "torch.nn.functional.gelu"
    assert callable_name(torch.linalg.norm) == "torch.linalg.norm"
    assert callable_name(torch.ops.aten.mul.Tensor) == "torch.ops.aten.mul.Tensor"
    assert callable_name(F.relu) == "relu", "a Python function keeps its qualified name"
    profile = NeuronProfile(
        test_id="t", enabled=True, runner=lambda: cpu_runner(), rounds=2, warmup=1
    )
    profile(torch.exp, torch.ones(1024))
    assert profile.last.region == "torch.exp"


# --- intervals too wide to judge


def measured(samples: list[float]) -> Measurement:
    return Measurement(
        test_id="t.py::t",
        region="r",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=1,
        kernels=1,
        op_counts={"aten::exp": 1},
        kernel_counts={"aten::exp": 1},
        device_us=Stats.of(samples),
        host_us=Stats.of(samples),
        per_op=(),
        rounds=len(samples),
    )


BASE = [100.0 + i for i in range(10)]


def test_an_interval_too_wide_to_judge_is_not_called_same() -> None:
    entry = Entry.of(measured(BASE))
    # Half the rounds hit by the scheduler: the median moves by hundreds of per cent and
    # the interval runs from no change to a thousandfold.
    hit = [100.0 + i for i in range(5)] + [100_000.0 + i for i in range(5)]
    c = compare(entry, measured(hit), tolerance=0.1, host_timed=True)
    assert c.status == "same" and c.host is not None and c.host.ratio > 100
    cell = c.cell()
    assert cell.startswith("not judged (interval ") and cell.endswith("%)"), cell
    assert "same" not in cell
    gone = [1.0 + i * 0.01 for i in range(5)] + [110.0 + i for i in range(5)]
    cell = compare(entry, measured(gone), tolerance=0.1, host_timed=True).cell()
    assert cell.startswith("not judged (interval -"), cell
    # A narrow interval inside the tolerance is "same" with its figure, as before; so is a
    # narrow one at the band's edge: it was judged, not credibly faster than 10%.
    assert compare(entry, measured(BASE), tolerance=0.1, host_timed=True).cell() == "same +0%"
    edge = compare(entry, measured([v * 0.88 for v in BASE]), tolerance=0.1, host_timed=True)
    assert edge.host is not None and edge.host.low < 1 / 1.1 < edge.host.high < 1
    assert edge.cell() == "same -12%"


# --- the Markdown report


def record(baseline: str, budget: str = "", test_id: str = "t.py::t") -> Record:
    m = measured(BASE)
    return Record(
        Measurement(**{**m.__dict__, "test_id": test_id}),
        budget=budget,
        status=Status.OK if budget else Status.MEASURED,
        baseline=BaselineStatus(baseline) if baseline else "",
        baseline_cell=baseline,
    )


def test_markdown_does_not_call_new_measurements_within_baseline() -> None:
    all_new = [record("new", "max_ops=6") for _ in range(5)]
    text = verdict(all_new)
    assert text == ("No failures in 5 measurements: all within budget; all new (no baseline yet).")
    assert text in render(all_new) and "baseline." not in render(all_new)
    mixed = [record("same"), record("new"), record("not comparable")]
    assert verdict(mixed) == (
        "No failures in 3 measurements: 1 within baseline; 1 new (no baseline yet); "
        "1 not comparable with the baseline."
    )
    assert verdict([record("")]) == "No failures: 1 measurement, none with a budget or a baseline."


def test_a_backtick_in_a_test_id_keeps_its_code_span() -> None:
    from markdown_it import MarkdownIt

    odd = "t.py::test[a`b``c|d]"
    assert code("plain") == "`plain`" and code("`x") == "`` `x ``"
    html_tokens = MarkdownIt("commonmark").enable("table").parse(render([record("new", "", odd)]))
    spans = [
        child.content
        for token in html_tokens
        if token.children
        for child in token.children
        if child.type == "code_inline"
    ]
    assert odd in spans, spans


# --- record after a failing process


@pytest.mark.slow
def test_record_says_what_the_failing_first_process_wrote(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_rec="""
import torch

def test_good(neuron_profile):
    neuron_profile(torch.exp, torch.ones(64))

def test_bad(neuron_profile):
    neuron_profile(torch.exp, torch.ones(64))
    assert False
"""
    )
    args = (
        "--",
        "-p",
        "no:cacheprovider",
        "--neuron-profile-rounds=2",
        "--neuron-profile-warmup=1",
    )
    result = pytester.run(
        sys.executable, "-m", "pytest_neuronperf", "record", "--processes", "3", *args
    )
    assert result.ret == 1
    written = json.loads(next((pytester.path / ".neuronperf").glob("*.json")).read_text())
    assert list(written["entries"]) == ["test_rec.py::test_good"]
    result.stderr.fnmatch_lines(
        [
            "neuronperf record: process 1 of 3 exited with status 1: it recorded the entries "
            "of the tests that passed, not of those that failed; processes 2-3 did not run"
        ]
    )
    # A run that wrote nothing says so.
    empty = pytester.run(
        sys.executable, "-m", "pytest_neuronperf", "record", "--processes", "2", *args, "-k", "none"
    )
    assert empty.ret == 5
    empty.stderr.fnmatch_lines(
        [
            "neuronperf record: process 1 of 2 exited with status 5: it wrote nothing "
            "(baselines are written only after exit status 0 or 1); process 2 did not run"
        ]
    )


# --- ops in a backward pass (docs/backward-ops.md)

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
    runner = cpu_runner(trace_dir=tmp_path)
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
