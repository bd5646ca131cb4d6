"""Reading a live CPU profile from Kineto's results directly: the same events torch's own
parse (``prof.events()``) leads to, on real profiles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.trace.analysis import analyze_markers
from pytest_neuronperf.trace.events import (
    Event,
    events_from_function_events,
    events_from_kineto,
    kineto_nodes,
)
from pytest_neuronperf.work.counting import count_work

X, W = torch.randn(16, 64), torch.randn(64)
MLP = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64))
A = torch.randn(8, 64, requires_grad=True)


def rmsnorm() -> None:
    (X * torch.rsqrt((X * X).mean(-1, keepdim=True) + 1e-6) * W).sum()


def backward() -> None:
    # No gradient left from an earlier call: the first backward assigns each .grad, later
    # ones add into it, so every call starts from none (an order-independent op count).
    A.grad = None
    MLP.zero_grad(set_to_none=True)
    MLP(A).sum().backward()  # the autograd engine's own thread


def nested_same_name() -> None:
    # An only child named as its parent: torch's tree drops it (EventList._remove_dup_nodes).
    with record_function("twice"), record_function("twice"):
        torch.relu(X)
    with record_function("once"):
        torch.relu(X)
        torch.neg(X)


def inplace_chain() -> None:
    y = X.clone()
    for _ in range(5):
        y.add_(1.0).mul_(0.5)


CASES: dict[str, Callable[[], None]] = {
    "rmsnorm": rmsnorm,
    "backward": backward,
    "nested_same_name": nested_same_name,
    "inplace_chain": inplace_chain,
}


def profiled(fn: Callable[[], None], **kwargs: Any) -> Any:
    with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
        for r in range(3):
            with record_function(f"neuronperf#0.{r} r"):
                fn()
        with record_function("ProfilerStep#7"):  # torch renames it ProfilerStep*
            fn()
    return prof


def key(e: Event) -> tuple[Any, ...]:
    return (e.name, e.kind, e.start_us, e.dur_us, e.track, e.ext_id, e.correlation)


@pytest.mark.parametrize("case", sorted(CASES))
def test_kineto_results_give_the_events_torchs_parse_gives(case: str) -> None:
    prof = profiled(CASES[case])
    fast = events_from_kineto(prof.profiler.kineto_results)
    assert fast is not None
    expected = events_from_function_events(prof.events())
    assert sorted(map(key, fast)) == sorted(map(key, expected))
    if case == "nested_same_name":
        names = [e.name for e in fast]
        assert names.count("twice") == 4, "one per execution: the inner one went"
        assert "ProfilerStep*" in names


def test_the_cpu_backend_analyses_a_profile_as_torchs_parse_would() -> None:
    prof = profiled(rmsnorm)
    markers = [f"neuronperf#0.{r} r" for r in range(3)]
    ours = analyze_markers(CpuBackend().collect(prof), markers, "host")
    theirs = analyze_markers(events_from_function_events(prof.events()), markers, "host")
    assert [(r.ops, r.kernels, r.op_device_us) for r in ours] == [
        (r.ops, r.kernels, r.op_device_us) for r in theirs
    ]
    assert ours[0].ops == ["aten::mul", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul",
                           "aten::mul", "aten::sum"]  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_memory_records_leave_the_events_as_torchs_parse_gives_them(case: str) -> None:
    # torch's parse folds memory records into the ops around them; here they are skipped
    # (trace/memory.py reads them), so a memory profile keeps the fast path.
    with_memory = profiled(CASES[case], profile_memory=True)
    fast = events_from_kineto(with_memory.profiler.kineto_results)
    assert fast is not None
    assert sorted(map(key, fast)) == sorted(
        map(key, events_from_function_events(with_memory.events()))
    )


def test_what_only_torchs_parse_links_up_is_left_to_it() -> None:
    assert events_from_kineto(None) is None, "no Kineto results: prof.events() is read"


def kineto_tree(prof: Any) -> Any:
    return kineto_nodes(prof.profiler.kineto_results)


@pytest.mark.parametrize("case", sorted(CASES))
def test_counting_reads_the_same_tree_from_kineto(case: str) -> None:
    """FLOPs and bytes are grouped by the top-level op each dispatch ran under: read from
    Kineto's results, the groups are those torch's tree gives."""
    _, fast = count_work(CASES[case], read_tree=kineto_tree)
    _, slow = count_work(CASES[case])
    assert fast == slow
    assert fast.per_op, "something was counted"


@pytest.mark.slow
def test_counting_a_compiled_region_reads_the_same_tree_from_kineto() -> None:
    compiled = torch.compile(rmsnorm)
    compiled()
    _, fast = count_work(compiled, read_tree=kineto_tree)
    _, slow = count_work(compiled)
    assert fast == slow
