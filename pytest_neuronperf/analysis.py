"""Events of a region -> ops, kernels, device time. Pure functions; see DESIGN.md for the
definitions. No pytest, no torch, no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .model import OpRow
from .stats import median
from .trace import DEVICE_KINDS, Event, Kind, build_tree

Mode = Literal["host", "device"]

# Events Dynamo and AOTAutograd emit around a compiled region: the cost of dispatch, not
# work the model asked for, so never counted as ops or kernels.
BOOKKEEPING = frozenset(
    {
        "TorchDynamo Cache Lookup",
        "Pregraph bytecode",
        "AOTDispatcher Runtime Wrapper Prologue",
        "AOTDispatcher Runtime Wrapper Epilogue",
        "Torch-Compiled Region Epilogue",
    }
)

# Leaf ops that allocate, alias or reinterpret without computing. As leaves they do no
# work (a copying ``aten::to`` has a ``copy_`` child, which is counted instead).
NON_COMPUTE = frozenset(
    {
        "aten::empty",
        "aten::empty_strided",
        "aten::empty_like",
        "aten::new_empty",
        "aten::new_empty_strided",
        "aten::result_type",
        "aten::to",
        "aten::_to_copy",
        "aten::type_as",
        "aten::contiguous",
        "aten::view",
        "aten::_unsafe_view",
        "aten::reshape",
        "aten::_reshape_alias",
        "aten::as_strided",
        "aten::expand",
        "aten::expand_as",
        "aten::broadcast_to",
        "aten::t",
        "aten::transpose",
        "aten::permute",
        "aten::unsqueeze",
        "aten::squeeze",
        "aten::flatten",
        "aten::select",
        "aten::slice",
        "aten::narrow",
        "aten::unbind",
        "aten::split",
        "aten::chunk",
        "aten::detach",
        "detach",
        "aten::detach_",
        "aten::alias",
        "aten::lift_fresh",
        "aten::resolve_conj",
        "aten::resolve_neg",
        "aten::resize_",
        "aten::set_",
        "aten::numpy_T",
        "aten::is_nonzero",
    }
)


def is_compiled_region(name: str) -> bool:
    return name.startswith("Torch-Compiled Region")


@dataclass
class RoundResult:
    """What one execution of a region did."""

    ops: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    device_us: float = 0.0
    wall_us: float = 0.0
    op_device_us: dict[str, float] = field(default_factory=dict)
    op_kernels: dict[str, int] = field(default_factory=dict)
    launch_gaps_us: list[float] = field(default_factory=list)


class AnalysisError(ValueError):
    pass


def top_level_ops(node: Event) -> Iterator[Event]:
    """Ops dispatched directly by the region. Annotations (nested regions, the user's own
    ``record_function`` blocks) are transparent; runtime calls and bookkeeping are not ops."""
    for child in node.children:
        if child.kind is Kind.ANNOTATION:
            yield from top_level_ops(child)
        elif child.kind is Kind.OP and child.name not in BOOKKEEPING:
            yield child


def _subtree(node: Event) -> Iterator[Event]:
    stack = [node]
    while stack:
        ev = stack.pop()
        yield ev
        stack.extend(ev.children)


def host_kernels(op: Event) -> list[Event]:
    """Leaf computations under a host op: ops with no computing op below them. Children
    that only allocate or alias (``aten::pow`` -> ``result_type``, ``to``) do not hide
    their parent's own work."""
    below = [
        k for c in op.children if c.kind in (Kind.OP, Kind.ANNOTATION) for k in host_kernels(c)
    ]
    if below:
        return below
    if (
        op.kind is Kind.OP
        and op.name not in NON_COMPUTE
        and op.name not in BOOKKEEPING
        and not is_compiled_region(op.name)
    ):
        # A compiled graph run with inductor's kernel profiling off has no children:
        # it is then one opaque kernel, rather than none.
        return [op]
    return []


def index_device_events(events: Sequence[Event]) -> tuple[dict[int, list[Event]], dict[int, Event]]:
    """Device events by launching op id, and runtime launches by correlation id."""
    by_ext: dict[int, list[Event]] = {}
    launches: dict[int, Event] = {}
    for ev in events:
        if ev.kind in DEVICE_KINDS:
            by_ext.setdefault(ev.ext_id, []).append(ev)
        elif ev.kind is Kind.RUNTIME and ev.correlation:
            launches[ev.correlation] = ev
    return by_ext, launches


def analyze_node(
    node: Event,
    mode: Mode,
    by_ext: dict[int, list[Event]] | None = None,
    launches: dict[int, Event] | None = None,
) -> RoundResult:
    result = RoundResult(wall_us=node.dur_us)
    for op in top_level_ops(node):
        result.ops.append(op.name)
        if mode == "host":
            kernels = host_kernels(op)
            cost = op.dur_us
        else:
            kernels = _device_kernels(op, by_ext or {})
            cost = sum(k.dur_us for k in kernels)
            for k in kernels:
                launch = (launches or {}).get(k.correlation)
                if launch is not None and k.kind is Kind.KERNEL:
                    result.launch_gaps_us.append(max(0.0, k.start_us - launch.start_us))
        result.kernels.extend(k.name for k in kernels)
        result.device_us += cost
        result.op_device_us[op.name] = result.op_device_us.get(op.name, 0.0) + cost
        result.op_kernels[op.name] = result.op_kernels.get(op.name, 0) + len(kernels)
    return result


def _device_kernels(op: Event, by_ext: dict[int, list[Event]]) -> list[Event]:
    seen: set[int] = set()
    out: list[Event] = []
    for ev in _subtree(op):
        if ev.ext_id and ev.ext_id not in seen:
            seen.add(ev.ext_id)
            out.extend(by_ext.get(ev.ext_id, ()))
    out.sort(key=lambda e: e.start_us)
    return out


def analyze_markers(
    events: Sequence[Event], markers: Sequence[str], mode: Mode
) -> list[RoundResult]:
    """One RoundResult per marker name, in the order given. Each marker must occur once."""
    build_tree(events)
    by_ext, launches = index_device_events(events) if mode == "device" else ({}, {})
    found: dict[str, Event] = {}
    wanted = set(markers)
    for ev in events:
        if ev.kind is Kind.ANNOTATION and ev.name in wanted and ev.name not in found:
            found[ev.name] = ev
    missing = [m for m in markers if m not in found]
    if missing:
        raise AnalysisError(f"profiler output lacks the region markers {missing}")
    return [analyze_node(found[m], mode, by_ext, launches) for m in markers]


def per_op_rows(rounds: Sequence[RoundResult]) -> tuple[OpRow, ...]:
    """Per-round figures by op name, costliest first: calls and kernels as the mean over
    rounds, device time as the median over rounds (like the region's own figure)."""
    n = max(len(rounds), 1)
    calls: Counter[str] = Counter()
    kernels: Counter[str] = Counter()
    for r in rounds:
        calls.update(r.ops)
        kernels.update(r.op_kernels)
    device = {name: median([r.op_device_us.get(name, 0.0) for r in rounds]) for name in calls}
    total = sum(device.values())
    rows = [
        OpRow(
            name=name,
            calls=calls[name] / n,
            device_us=device[name],
            share=(device[name] / total) if total else 0.0,
            kernels=kernels[name] / n,
        )
        for name in calls
    ]
    rows.sort(key=lambda r: (-r.device_us, r.name))
    return tuple(rows)


def round_variants(rounds: Sequence[RoundResult]) -> tuple[str, ...]:
    """Describe rounds whose op sequence differs from the most common one."""
    seqs = [tuple(r.ops) for r in rounds]
    if len(set(seqs)) <= 1:
        return ()
    common = Counter(seqs).most_common(1)[0][0]
    out = []
    for i, seq in enumerate(seqs):
        if seq != common:
            diff = op_diff_text(Counter(common), Counter(seq))
            out.append(f"round {i}: {len(seq)} ops vs {len(common)} ({diff})")
    return tuple(out)


def op_diff(
    before: Counter[str] | dict[str, int], after: Counter[str] | dict[str, int]
) -> list[tuple[str, int]]:
    """(name, change) for every op whose count changed, appeared ones first."""
    names = set(before) | set(after)
    diff = [(n, after.get(n, 0) - before.get(n, 0)) for n in names]
    return sorted((d for d in diff if d[1]), key=lambda d: (-d[1], d[0]))


def op_diff_text(
    before: Counter[str] | dict[str, int], after: Counter[str] | dict[str, int]
) -> str:
    parts = [f"{'+' if d > 0 else '-'} {n} ×{abs(d)}" for n, d in op_diff(before, after)]
    return ", ".join(parts) if parts else "same ops, different order"
