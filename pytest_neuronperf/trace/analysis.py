"""Events of a region -> ops, kernels, device time. Pure functions; see DESIGN.md for the
definitions. No pytest, no torch, no I/O."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..markers import COMPILED_PREFIX
from ..model import Measurement, OpRow
from ..stats import Stats, median
from .events import DEVICE_KINDS, Event, Kind, build_tree

Mode = Literal["host", "device"]

# Events Dynamo and AOTAutograd emit around a compiled region: the cost of dispatch, not
# work the model asked for, so never counted as ops or kernels.
BOOKKEEPING = frozenset(
    {
        "TorchDynamo Cache Lookup",
        "Pregraph bytecode",
        "AOTDispatcher Runtime Wrapper Prologue",
        "AOTDispatcher Runtime Wrapper Epilogue",
        f"{COMPILED_PREFIX} Epilogue",
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
    return name.startswith(COMPILED_PREFIX)


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
    # torch.compile: compiled frames run (a graph break shows as a resume frame's compiled
    # region nested inside the frame that broke), and compilations inside the round.
    compiled_regions: list[str] = field(default_factory=list)
    graph_breaks: int = 0
    compiles: int = 0


class AnalysisError(ValueError):
    pass


# Dynamo's span around a compilation; the aten ops under it trace fake tensors.
COMPILE_EVENT = "dynamo"


# The autograd engine's span around one backward node, ``<prefix>MulBackward0``, holding
# the node's own span (``MulBackward0``) and the aten ops its formula dispatches.
AUTOGRAD_NODE = "autograd::engine::evaluate_function: "


def top_level_ops(node: Event) -> Iterator[Event]:
    """Ops dispatched directly by the region. Annotations (nested regions, the user's own
    ``record_function`` blocks) are transparent, and so are the autograd engine's spans
    around backward nodes: a backward pass counts the aten ops it dispatches, like a
    forward one (docs/backward-ops.md). Runtime calls, bookkeeping and compilation are not
    ops."""
    for child in node.children:
        if child.name == COMPILE_EVENT:
            continue
        if child.kind is Kind.ANNOTATION or _autograd_span(child, node):
            yield from top_level_ops(child)
        elif child.kind is Kind.OP and child.name not in BOOKKEEPING:
            yield child


def _autograd_span(ev: Event, parent: Event) -> bool:
    """The engine's span around a backward node, or the node's own span inside it."""
    if ev.name.startswith(AUTOGRAD_NODE):
        return True
    return parent.name.startswith(AUTOGRAD_NODE) and ev.name == parent.name.removeprefix(
        AUTOGRAD_NODE
    )


def compile_activity(node: Event) -> tuple[list[str], int, int]:
    """(compiled regions run, graph breaks, compilations) under ``node``. A compiled region
    inside another one is the resume frame after a graph break."""
    regions: list[str] = []
    breaks = compiles = 0
    stack: list[tuple[Event, bool]] = [(node, False)]
    while stack:
        ev, inside = stack.pop()
        if ev.name == COMPILE_EVENT:
            compiles += 1
            continue
        compiled = is_compiled_region(ev.name)
        if compiled:
            regions.append(ev.name)
            breaks += inside
        stack.extend((c, inside or compiled) for c in ev.children)
    return regions, breaks, compiles


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


@dataclass
class TraceIndex:
    """What analysing any region of one event list needs, built once.

    Device events are tied to their launching op through the runtime call that launched
    them: the kernel's ``correlation`` names the launch (``cudaLaunchKernel``,
    ``hipExtModuleLaunchKernel``, ``cuLaunchKernel``), and the launch sits inside the op on
    the host timeline. That holds in every Kineto version seen; ``External id`` does not:
    older traces (the alexnet benchmark in tests/data) put the launch correlation there,
    which collides with unrelated ops' ids. ``External id`` is the fallback only for device
    events whose launch was not recorded, and only where it differs from the correlation.
    """

    roots: list[Event]
    by_launch: dict[int, list[Event]] = field(default_factory=dict)
    by_ext: dict[int, list[Event]] = field(default_factory=dict)
    launches: dict[int, Event] = field(default_factory=dict)
    has_device: bool = False
    op_processes: set[Any] = field(default_factory=set)
    _track_roots: dict[tuple[Any, Any], tuple[list[float], list[Event]]] = field(
        default_factory=dict
    )

    @classmethod
    def build(cls, events: Sequence[Event]) -> TraceIndex:
        roots = build_tree(events)
        index = cls(roots)
        device: list[Event] = []
        for ev in events:
            if ev.kind in DEVICE_KINDS:
                device.append(ev)
            elif ev.kind is Kind.RUNTIME and ev.correlation:
                index.launches[ev.correlation] = ev
            elif ev.kind is Kind.OP:
                index.op_processes.add(ev.track[0])
        index.has_device = bool(device)
        for ev in device:
            if ev.correlation and ev.correlation in index.launches:
                index.by_launch.setdefault(ev.correlation, []).append(ev)
            elif ev.ext_id and ev.ext_id != ev.correlation:
                index.by_ext.setdefault(ev.ext_id, []).append(ev)
        by_track: dict[tuple[Any, Any], list[Event]] = {}
        for root in roots:
            by_track.setdefault(root.track, []).append(root)
        for track, track_roots in by_track.items():
            track_roots.sort(key=lambda e: e.start_us)
            index._track_roots[track] = ([e.start_us for e in track_roots], track_roots)
        return index

    def adopted(self, node: Event) -> list[Event]:
        """Roots on the process's other threads that run inside ``node``'s time span.

        The autograd engine runs CUDA backward passes on its own thread, so a
        ``ProfilerStep`` (or a measured round that calls ``backward()``) holds only the
        forward ops by containment on its own thread; the backward ops are the other
        thread's roots inside the step's time span (the ROCm trace in tests/data).

        Other processes' threads count only when the region's own process recorded no op
        at all: Kineto wrote the Triton example's ``ProfilerStep#1`` under a pid of its
        own, apart from the ops it contains."""
        out: list[Event] = []
        lo, hi = node.start_us, node.end_us + 1e-3
        any_process = node.track[0] not in self.op_processes
        for track, (starts, track_roots) in self._track_roots.items():
            if track == node.track or (track[0] != node.track[0] and not any_process):
                continue
            for ev in track_roots[bisect_left(starts, lo) :]:
                if ev.start_us > hi:
                    break
                if ev.end_us <= hi:
                    out.append(ev)
        return out

    def device_events(self, op: Event) -> list[Event]:
        """Device events launched from inside ``op`` (the op itself included)."""
        out: list[Event] = []
        seen: set[int] = set()
        for ev in _subtree(op):
            if ev.kind is Kind.RUNTIME and ev.correlation:
                out.extend(self.by_launch.get(ev.correlation, ()))
            if ev.ext_id and ev.ext_id not in seen and self.by_ext:
                seen.add(ev.ext_id)
                out.extend(self.by_ext.get(ev.ext_id, ()))
        out.sort(key=lambda e: e.start_us)
        return out


def region_ops(node: Event, index: TraceIndex | None = None) -> list[Event]:
    """Top-level ops of a region: its own thread's, then (by start time) those of other
    threads running inside it."""
    ops = list(top_level_ops(node))
    if index is not None:
        extra = index.adopted(node)
        if extra:
            holder = Event(node.name, Kind.ANNOTATION, node.start_us, node.dur_us, node.track)
            holder.children = extra
            ops.extend(top_level_ops(holder))
            ops.sort(key=lambda e: e.start_us)
    return ops


def analyze_node(
    node: Event, mode: Mode, index: TraceIndex | None = None, *, adopt: bool = True
) -> RoundResult:
    """Ops, kernels and device time of one execution of a region. ``adopt``: count other
    threads' ops inside its time span (see TraceIndex.adopted).

    Device mode: kernels are device ``kernel`` events; device time also counts the op's
    memcpy and memset, which occupy the device but are not kernel launches."""
    result = RoundResult(wall_us=node.dur_us)
    result.compiled_regions, result.graph_breaks, result.compiles = compile_activity(node)
    for op in region_ops(node, index if adopt else None):
        result.ops.append(op.name)
        if mode == "host":
            kernels = host_kernels(op)
            cost = op.dur_us
        else:
            device = index.device_events(op) if index is not None else []
            kernels = [k for k in device if k.kind is Kind.KERNEL]
            cost = sum(k.dur_us for k in device)
            launches = index.launches if index is not None else {}
            for k in kernels:
                launch = launches.get(k.correlation)
                if launch is not None:
                    result.launch_gaps_us.append(max(0.0, k.start_us - launch.start_us))
        result.kernels.extend(k.name for k in kernels)
        result.device_us += cost
        result.op_device_us[op.name] = result.op_device_us.get(op.name, 0.0) + cost
        result.op_kernels[op.name] = result.op_kernels.get(op.name, 0) + len(kernels)
    return result


def analyze_markers(
    events: Sequence[Event], markers: Sequence[str], mode: Mode
) -> list[RoundResult]:
    """One RoundResult per marker name, in the order given. Each marker must occur once."""
    index = TraceIndex.build(events)
    found: dict[str, Event] = {}
    wanted = set(markers)
    for ev in events:
        if ev.kind is Kind.ANNOTATION and ev.name in wanted and ev.name not in found:
            found[ev.name] = ev
    missing = [m for m in markers if m not in found]
    if missing:
        raise AnalysisError(f"profiler output lacks the region markers {missing}")
    return [analyze_node(found[m], mode, index) for m in markers]


def summarize(
    rounds: Sequence[RoundResult],
    *,
    test_id: str,
    region: str,
    backend: str,
    device_kind: str,
    host: Sequence[float],
    environment: dict[str, str],
    warmup_rounds: int = 0,
    warmup_us: float = 0.0,
    first_call_us: float = 0.0,
) -> Measurement:
    """The Measurement of a region's rounds, live or from a saved trace."""
    # Budgets see the worst round: a recompile or a data-dependent path in any round
    # counts, and round_variants says which round it was.
    worst = max(rounds, key=lambda r: (len(r.ops), len(r.kernels)))
    gaps = launch_gaps(rounds)
    return Measurement(
        test_id=test_id,
        region=region,
        backend=backend,
        device_kind=device_kind,
        ops=len(worst.ops),
        kernels=max(len(r.kernels) for r in rounds),
        op_counts=dict(Counter(worst.ops)),
        kernel_counts=dict(Counter(worst.kernels)),
        device_us=Stats.of([r.device_us for r in rounds]),
        host_us=Stats.of(host),
        per_op=per_op_rows(rounds),
        rounds=len(rounds),
        warmup_rounds=warmup_rounds,
        warmup_us=warmup_us,
        first_call_us=first_call_us,
        round_variants=round_variants(rounds),
        environment=environment,
        graph_breaks=max(r.graph_breaks for r in rounds),
        recompiles=recompiles_seen(rounds),
        launch_gap_us=gaps if gaps.n else None,
    )


def recompiles_seen(rounds: Sequence[RoundResult]) -> int:
    """Compilations inside measured rounds, plus extra compiled versions of one frame
    (``Torch-Compiled Region: 2/0`` in one round, ``2/1`` in another)."""
    versions: dict[str, set[str]] = {}
    for r in rounds:
        for name in r.compiled_regions:
            frame, _, version = name.rpartition(":")[2].strip().partition("/")
            versions.setdefault(frame, set()).add(version)
    drift = sum(len(v) - 1 for v in versions.values())
    return sum(r.compiles for r in rounds) + drift


def launch_gaps(rounds: Sequence[RoundResult]) -> Stats:
    """Every kernel's wait between its launch call starting and the kernel starting."""
    return Stats.of([g for r in rounds for g in r.launch_gaps_us])


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


def op_diff(before: Mapping[str, int], after: Mapping[str, int]) -> list[tuple[str, int]]:
    """(name, change) for every op whose count changed, appeared ones first."""
    names = set(before) | set(after)
    diff = [(n, after.get(n, 0) - before.get(n, 0)) for n in names]
    return sorted((d for d in diff if d[1]), key=lambda d: (-d[1], d[0]))


def op_diff_text(before: Mapping[str, int], after: Mapping[str, int]) -> str:
    parts = [f"{'+' if d > 0 else '-'} {n} ×{abs(d)}" for n, d in op_diff(before, after)]
    return ", ".join(parts) if parts else "same ops, different order"
