"""Work of a region: FLOPs and bytes moved at its top-level dispatches, and its roofline.

Bytes are counted at the boundaries of the region's top-level dispatches (a lower bound on
memory traffic), FLOPs per aten op by fixed rules under a dispatch mode that leaves compiled
code alone, in calls that are never timed. The rules, and what torch 2.13 does under a
dispatch mode that shaped them: docs/design.md, "FLOPs and bytes".
"""

from __future__ import annotations

import contextlib
import math
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..markers import COMPILED_PREFIX
from ..model import OpWork, Work

COUNT_MARKER = "neuronperf.count"
_OP_MARK = "neuronperf.op#"
_GRAPH_MARK = "neuronperf.graph#"

# Pure data movement and bookkeeping: exact 0 FLOPs (their bytes still count).
ZERO_FLOP_OPS = frozenset(
    {
        "alias",
        "arange",
        "as_strided_scatter",
        "cat",
        "clone",
        "constant_pad_nd",
        "copy",
        "copy_",
        "detach",
        "embedding",
        "empty",
        "empty_like",
        "empty_strided",
        "fill",
        "fill_",
        "flip",
        "full",
        "full_like",
        "gather",
        "index",
        "index_select",
        "lift_fresh",
        "lift_fresh_copy",
        "new_empty",
        "new_empty_strided",
        "new_ones",
        "new_zeros",
        "ones",
        "ones_like",
        "repeat",
        "roll",
        "scalar_tensor",
        "select_scatter",
        "slice_scatter",
        "stack",
        "_local_scalar_dense",
        "_to_copy",
        "_unsafe_view",
        "zero_",
        "zeros",
        "zeros_like",
    }
)
# FLOPs per input element of fused kernels that carry neither tag (docs/design.md).
PER_ELEMENT_OPS: dict[str, int] = {"_softmax": 5, "_log_softmax": 5, "native_layer_norm": 8}

# --------------------------------------------------------------------------- counting


@dataclass
class _Write:
    group: int
    nbytes: int
    ref: Callable[[], object | None]
    escaped: bool = False


@dataclass
class _Call:
    """One op the mode saw, or one compiled graph call, in execution order."""

    mark: str
    name: str
    flops: int
    counted: bool
    dtype: str
    inputs: list[tuple[int, int, int]]  # (storage key, view key, nbytes)
    outputs: list[tuple[int, int, Any]]  # (storage key, nbytes, weakref)
    writes_outputs: bool = True
    beyond: int = 0  # of ``flops``, what our rules counted and torch's registry does not


@dataclass
class _Recorder:
    calls: list[_Call] = field(default_factory=list)
    views: list[tuple[int, Any]] = field(default_factory=list)
    graphs: int = 0
    count_flops_only: bool = False
    flops: int = 0
    uncounted: set[str] = field(default_factory=set)
    beyond: dict[str, int] = field(default_factory=dict)  # count_flops_only's, by op name


def _tensors(tree: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


def _nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


def _keys(t: Any) -> tuple[int, int]:
    """(storage, view): the storage says who produced the memory, the view which part is
    read (q, k and v split from one buffer are three reads)."""
    try:
        storage = int(t.untyped_storage().data_ptr())
        view = int(t.data_ptr())
    except (RuntimeError, NotImplementedError):
        # Sparse, nested or functional tensors have no plain storage: one key per object.
        storage = view = id(t)
    return storage, view


def _weak(t: Any) -> Any:
    try:
        return weakref.ref(t)
    except TypeError:  # pragma: no cover - every torch.Tensor supports weakrefs
        return lambda: t


def in_torch_registry(func: Any) -> bool:
    """Whether torch's flop_registry, the one FlopCounterMode counts by, covers ``func``."""
    from torch.utils.flop_counter import flop_registry

    return func.overloadpacket in flop_registry


def beyond_torch(func: Any, flops: int | None) -> int:
    """The FLOPs of one call that our own rules counted: 0 where torch's registry did (or
    no rule did), so that the rest is what FlopCounterMode counts."""
    return 0 if flops is None or in_torch_registry(func) else flops


def _add_to(totals: dict[str, int], name: str, flops: int) -> None:
    if flops:
        totals[name] = totals.get(name, 0) + flops


def op_flops(func: Any, args: Sequence[Any], kwargs: dict[str, Any], out: Any) -> int | None:
    """FLOPs of one aten op by the rules in docs/design.md; None when no rule covers it."""
    import torch
    from torch.utils.flop_counter import flop_registry

    packet = func.overloadpacket
    if in_torch_registry(func):
        return int(flop_registry[packet](*args, **kwargs, out_val=out))
    base = packet.__name__
    if getattr(func, "is_view", False) or base in ZERO_FLOP_OPS:
        return 0
    tags = set(func.tags)
    ins = _tensors((args, kwargs))
    outs = _tensors(out)
    if torch.Tag.reduction in tags:
        return int(ins[0].numel()) if ins else 0
    if torch.Tag.pointwise in tags:
        return int(outs[0].numel()) if outs else 0
    if base in ("mv", "dot", "vdot") and ins:
        return 2 * int(ins[0].numel())  # one multiply-add per matrix (or vector) element
    if base == "addmv" and len(ins) > 1:
        return 2 * int(ins[1].numel())
    if base in PER_ELEMENT_OPS and ins:
        return PER_ELEMENT_OPS[base] * int(ins[0].numel())
    if base in _ATTENTION and len(ins) >= 3:
        return _attention_flops(base, ins)
    if base == "_fused_rms_norm" and ins:
        shape = args[1] if len(args) > 1 else kwargs.get("normalized_shape", ())
        row = math.prod(int(s) for s in shape) or 1
        n = int(ins[0].numel())
        return 4 * n + 2 * (n // row)
    return None


# Fused attention that torch's flop_registry leaves out (CPU's flash kernel, the
# privateuse/Neuron "overrideable" one, MPS's math one): the two matmuls, as its
# sdpa_flop_count counts them. Backward ops take grad_out first.
_ATTENTION = frozenset(
    {
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_fused_attention_overrideable",
        "_scaled_dot_product_attention_math_for_mps",
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        "_scaled_dot_product_fused_attention_overrideable_backward",
    }
)


def _attention_flops(base: str, ins: list[Any]) -> int:
    from torch.utils import flop_counter

    counter: Any = flop_counter  # its functions are untyped
    if base.endswith("_backward"):
        grad, q, k, v = (t.shape for t in ins[:4])
        return int(counter.sdpa_backward_flop_count(grad, q, k, v))
    q, k, v = (t.shape for t in ins[:3])
    return int(counter.sdpa_flop_count(q, k, v))


def _op_name(func: Any) -> str:
    return f"{func.namespace}::{func.overloadpacket.__name__}"


def _make_mode(rec: _Recorder, *, ignore_compiled: bool) -> Any:
    from torch.profiler import record_function
    from torch.utils._python_dispatch import TorchDispatchMode

    class _CountMode(TorchDispatchMode):  # type: ignore[no-untyped-call]
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]

        @classmethod
        def ignore_compile_internals(cls) -> bool:
            # False would make dynamo skip, and remember to skip, the measured code.
            return ignore_compiled

        def __torch_dispatch__(
            self,
            func: Any,
            types: Any,
            args: Sequence[Any] = (),
            kwargs: dict[str, Any] | None = None,
        ) -> Any:
            kwargs = kwargs or {}
            if func.namespace == "profiler":  # our own markers
                return func(*args, **kwargs)
            if rec.count_flops_only:
                out = func(*args, **kwargs)
                flops = op_flops(func, args, kwargs, out)
                if flops is None:
                    rec.uncounted.add(_op_name(func))
                rec.flops += flops or 0
                _add_to(rec.beyond, _op_name(func), beyond_torch(func, flops))
                return out
            mark = f"{_OP_MARK}{len(rec.calls)}"
            ins = [
                (*_keys(t), _nbytes(t))
                for t in _tensors((args, {k: v for k, v in kwargs.items() if k != "out"}))
            ]
            with record_function(mark):
                out = func(*args, **kwargs)
            flops = op_flops(func, args, kwargs, out)
            outs = _tensors(out)
            is_view = bool(getattr(func, "is_view", False))
            first = _tensors(args)
            dtype = str(first[0].dtype) if first else ""
            rec.calls.append(
                _Call(
                    mark=mark,
                    name=_op_name(func),
                    flops=flops or 0,
                    counted=flops is not None,
                    dtype=dtype.removeprefix("torch."),
                    inputs=[] if is_view else ins,
                    outputs=[(_keys(t)[0], _nbytes(t), _weak(t)) for t in outs],
                    writes_outputs=not is_view,
                    beyond=beyond_torch(func, flops),
                )
            )
            return out

    return _CountMode()


@contextlib.contextmanager
def _graph_hook(rec: _Recorder) -> Iterator[None]:
    """Record each inductor graph call's tensor inputs and outputs (the compiled region's
    memory boundary) with a marker the profiler places under its compiled region."""
    module = sys.modules.get("torch._inductor.output_code")
    if module is None:
        # No inductor graph can exist in a process that never loaded it; importing it here
        # would cost seconds, and re-importing it (pytester drops modules first imported
        # inside a run) trips its registries.
        yield
        return
    CompiledFxGraph: Any = module.CompiledFxGraph
    from torch.profiler import record_function

    original = CompiledFxGraph.__call__

    def call(self: Any, inputs: Sequence[Any]) -> Any:
        mutated = set(getattr(self, "mutated_input_idxs", ()) or ())
        # The boxed calling convention clears ``inputs``: read them first.
        ins = [(*_keys(t), _nbytes(t)) for t in _tensors(list(inputs))]
        written = [
            (_keys(t)[0], _nbytes(t), _weak(t))
            for i, t in enumerate(inputs)
            if i in mutated and _tensors(t)
        ]
        mark = f"{_GRAPH_MARK}{len(rec.calls)}"
        rec.graphs += 1
        with record_function(mark):
            out = original(self, inputs)
        outs = [(_keys(t)[0], _nbytes(t), _weak(t)) for t in _tensors(out)]
        rec.calls.append(
            _Call(mark, "compiled graph", 0, True, "", ins, outs + written, writes_outputs=True)
        )
        return out

    CompiledFxGraph.__call__ = call
    try:
        yield
    finally:
        CompiledFxGraph.__call__ = original


def _top_level(events: Sequence[Any]) -> dict[str, tuple[int, str]]:
    """For each of our per-op markers: (id of its top-level event, that event's name)."""
    out: dict[str, tuple[int, str]] = {}
    for e in events:
        if not (e.name.startswith(_OP_MARK) or e.name.startswith(_GRAPH_MARK)):
            continue
        node = e
        while node.cpu_parent is not None and node.cpu_parent.name != COUNT_MARKER:
            node = node.cpu_parent
        if node.cpu_parent is None:
            continue  # not inside the counting marker (another thread's work)
        out[e.name] = (id(node), node.name)
    return out


def count_work(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    read_tree: Callable[[Any], Sequence[Any] | None] | None = None,
) -> tuple[Any, Work]:
    """Call ``fn`` once (twice with compiled graphs inside) and count its work.

    Runs its own profiler session: never call it inside another one. ``read_tree`` reads
    the finished profile's events with their ``name`` and ``cpu_parent`` faster than
    ``prof.events()`` (trace.events.kineto_nodes), or None to leave it to that.
    """
    from torch.profiler import ProfilerActivity, profile, record_function

    kwargs = kwargs or {}
    rec = _Recorder()
    with (
        profile(activities=[ProfilerActivity.CPU]) as prof,
        record_function(COUNT_MARKER),
        _graph_hook(rec),
        _make_mode(rec, ignore_compiled=True),
    ):
        result = fn(*args, **kwargs)
    tree = read_tree(prof) if read_tree is not None else None
    groups = _top_level(tree if tree is not None else prof.events())
    work = _tally(rec, groups)
    if rec.graphs:
        work = _add_compiled_flops(work, rec, fn, args, kwargs)
    del rec
    return result, work


def _tally(rec: _Recorder, groups: dict[str, tuple[int, str]]) -> Work:
    provenance: dict[int, _Write] = {}
    writes: list[tuple[str, _Write]] = []
    reads: dict[int, set[tuple[int, int]]] = {}
    per_name: dict[str, dict[str, int]] = {}
    instances: dict[str, set[int]] = {}
    group_name: dict[int, str] = {}
    uncounted: set[str] = set()
    flops_by_dtype: dict[str, int] = {}
    for n, call in enumerate(rec.calls):
        # A marker the profiler did not place (another thread's op) is its own dispatch.
        gid, gname = groups.get(call.mark, (-n - 1, call.name))
        group_name[gid] = gname
        instances.setdefault(gname, set()).add(gid)
        row = per_name.setdefault(gname, {"flops": 0, "read": 0, "written": 0})
        row["flops"] += call.flops
        if call.flops:
            flops_by_dtype[call.dtype] = flops_by_dtype.get(call.dtype, 0) + call.flops
        if not call.counted:
            uncounted.add(call.name)
        if gname.startswith(COMPILED_PREFIX) and call.mark.startswith(_OP_MARK):
            # An aten op a compiled graph calls (an extern mm): its FLOPs are the graph's,
            # its bytes are inside the graph's boundary, which the graph call records.
            continue
        seen = reads.setdefault(gid, set())
        for storage, view, nbytes in call.inputs:
            origin = provenance.get(storage)
            if origin is not None and origin.group == gid:
                continue  # produced inside this dispatch: fused away
            if origin is not None:
                origin.escaped = True
            if (view, nbytes) not in seen:
                seen.add((view, nbytes))
                row["read"] += nbytes
        for storage, nbytes, ref in call.outputs:
            if not call.writes_outputs:
                rec.views.append((storage, ref))
                continue
            w = _Write(gid, nbytes, ref)
            provenance[storage] = w
            writes.append((gname, w))
    alive = {storage for storage, ref in rec.views if ref() is not None}
    for storage, w in provenance.items():
        if storage in alive:
            w.escaped = True
    for gname, w in writes:
        if w.escaped or w.ref() is not None:
            per_name[gname]["written"] += w.nbytes
    per_op = tuple(
        OpWork(name, len(instances[name]), r["flops"], r["read"], r["written"])
        for name, r in per_name.items()
    )
    dtype = max(flops_by_dtype, key=lambda k: flops_by_dtype[k]) if flops_by_dtype else ""
    return Work(
        flops=sum(o.flops for o in per_op),
        bytes_read=sum(o.bytes_read for o in per_op),
        bytes_written=sum(o.bytes_written for o in per_op),
        uncounted=tuple(sorted(uncounted)),
        per_op=per_op,
        dtype=dtype,
        flops_beyond_torch=_beyond_by_op(rec.calls),
    )


def _beyond_by_op(calls: Sequence[_Call]) -> dict[str, int]:
    """Per aten op, the FLOPs of these calls that our rules counted beyond torch's."""
    totals: dict[str, int] = {}
    for call in calls:
        _add_to(totals, call.name, call.beyond)
    return totals


def _add_compiled_flops(
    work: Work,
    rec: _Recorder,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Work:
    """Pass B: the whole region eagerly (force_eager leaves dynamo's caches alone); what it
    counts beyond pass A's eager ops is the compiled regions' FLOPs, shared among them by
    bytes moved when there are several (the eager pass cannot tell them apart)."""
    import torch

    flops_rec = _Recorder(count_flops_only=True)
    with torch.compiler.set_stance("force_eager"), _make_mode(flops_rec, ignore_compiled=False):
        fn(*args, **kwargs)
    extra = max(0, flops_rec.flops - work.flops)
    compiled = [o for o in work.per_op if o.name.startswith(COMPILED_PREFIX)]
    total_bytes = sum(o.bytes_moved for o in compiled)
    per_op = []
    for o in work.per_op:
        if o in compiled and extra:
            share = o.bytes_moved / total_bytes if total_bytes else 1 / len(compiled)
            o = OpWork(
                o.name, o.calls, o.flops + round(extra * share), o.bytes_read, o.bytes_written
            )
        per_op.append(o)
    flops = sum(o.flops for o in per_op)
    uncounted = set(work.uncounted) | flops_rec.uncounted
    return Work(
        flops=flops,
        bytes_read=work.bytes_read,
        bytes_written=work.bytes_written,
        uncounted=tuple(sorted(uncounted)),
        per_op=tuple(per_op),
        dtype=work.dtype or _first_dtype(args),
        # Pass B saw every op, the compiled regions' too; pass A's eager ones only.
        flops_beyond_torch=dict(flops_rec.beyond),
    )


def _first_dtype(args: tuple[Any, ...]) -> str:
    ts = _tensors(args)
    return str(ts[0].dtype).removeprefix("torch.") if ts else ""
