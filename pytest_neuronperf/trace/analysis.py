"""Events of a region -> ops, kernels, device time, one round at a time; summary.py makes
the rounds a Measurement. Pure functions; see docs/design.md for the definitions. No pytest,
no torch, no I/O."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import NeuronPerfError
from ..markers import COMPILED_PREFIX
from .device import DeviceIndex, Launched, busy_us, launcher_row, owning_op, stream_name
from .events import ANNOTATION, DEVICE_KINDS, KERNEL, OP, RUNTIME, Event, link_tracks
from .memory import MemoryRecord, RoundMemory, region_memory

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
    # Per-op rows: the region's ops, plus rows for device work launched under none of them
    # (device.launcher_row), so that the rows add up to device_us.
    op_device_us: dict[str, float] = field(default_factory=dict)
    op_kernels: dict[str, int] = field(default_factory=dict)
    # Device mode: the union of the device events' intervals (overlapping streams once);
    # device_us is their sum. None in host mode.
    device_busy_us: float | None = None
    launch_gaps_us: list[float] = field(default_factory=list)
    # torch.compile: compiled frames run (a graph break shows as a resume frame's compiled
    # region nested inside the frame that broke), and compilations inside the round.
    compiled_regions: list[str] = field(default_factory=list)
    graph_breaks: int = 0
    compiles: int = 0
    # Memory (trace/memory.py) when the profile recorded it, else None.
    memory: RoundMemory | None = None


class AnalysisError(NeuronPerfError, ValueError):
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
    # A stack, not recursion: a trace may nest annotations deeper than Python recurses.
    stack = [(node, iter(node.children))]
    while stack:
        parent, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif child.name == COMPILE_EVENT:
            continue
        elif child.kind is ANNOTATION or _autograd_span(child, parent):
            stack.append((child, iter(child.children)))
        elif child.kind is OP and child.name not in BOOKKEEPING:
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


def host_kernels(op: Event) -> list[Event]:
    """Leaf computations under a host op: ops with no computing op below them. Children
    that only allocate or alias (``aten::pow`` -> ``result_type``, ``to``) do not hide
    their parent's own work."""
    # Bottom-up over an explicit stack: ops may nest deeper than Python recurses.
    found: dict[int, list[Event]] = {}
    stack = [(op, False)]
    while stack:
        node, visited = stack.pop()
        kids = [c for c in node.children if c.kind in (OP, ANNOTATION)]
        if not visited:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(kids))
            continue
        below = [k for c in kids for k in found.pop(id(c))]
        found[id(node)] = below or ([node] if _computes(node) else [])
    return found[id(op)]


def _computes(op: Event) -> bool:
    # A compiled graph run with inductor's kernel profiling off has no children: it is
    # then one opaque kernel, rather than none.
    return (
        op.kind is OP
        and op.name not in NON_COMPUTE
        and op.name not in BOOKKEEPING
        and not is_compiled_region(op.name)
    )


@dataclass
class TraceIndex:
    """What analysing any region of one event list needs, built once.

    Device events are tied to the runtime call that launched them: the kernel's
    ``correlation`` names the launch (``cudaLaunchKernel``, ``hipExtModuleLaunchKernel``,
    ``cuLaunchKernel``, ``cudaGraphLaunch``), which sits on the host timeline, inside an op
    or not; ``device`` groups them by launch for region queries (device.py). That holds in
    every Kineto version seen; ``External id`` does not: older traces (the alexnet
    benchmark in tests/data) put the launch correlation there, which collides with
    unrelated ops' ids. ``External id`` is the fallback only for device events whose launch
    was not recorded, and only where it differs from the correlation.
    """

    roots: list[Event]
    by_launch: dict[int, list[Event]] = field(default_factory=dict)
    by_ext: dict[int, list[Event]] = field(default_factory=dict)
    launches: dict[int, Event] = field(default_factory=dict)
    has_device: bool = False
    # Whether any host event is a compilation or a compiled region: without one, no round
    # needs its subtree walked for them (compile_activity).
    compiles: bool = True
    op_processes: set[Any] = field(default_factory=set)
    device: DeviceIndex = field(default_factory=DeviceIndex)
    _track_roots: dict[tuple[Any, Any], tuple[list[float], list[Event]]] = field(
        default_factory=dict
    )

    @classmethod
    def build(cls, events: Sequence[Event]) -> TraceIndex:
        index = cls([])
        device: list[Event] = []
        host: list[Event] = []
        by_track: dict[tuple[Any, Any], list[Event]] = {}
        for ev in events:
            if ev.kind in DEVICE_KINDS:
                device.append(ev)
                continue
            host.append(ev)
            by_track.setdefault(ev.track, []).append(ev)
            if ev.kind is RUNTIME and ev.correlation:
                index.launches[ev.correlation] = ev
        index.op_processes = {
            track[0] for track, evs in by_track.items() if any(e.kind is OP for e in evs)
        }
        index.roots = link_tracks(by_track)
        index.has_device = bool(device)
        index.compiles = any(
            name == COMPILE_EVENT or is_compiled_region(name) for name in {e.name for e in host}
        )
        unlinked: list[Event] = []
        for ev in device:
            if ev.correlation and ev.correlation in index.launches:
                index.by_launch.setdefault(ev.correlation, []).append(ev)
            elif ev.ext_id and ev.ext_id != ev.correlation:
                index.by_ext.setdefault(ev.ext_id, []).append(ev)
            else:
                unlinked.append(ev)
        index.device = DeviceIndex.build(index.launches, index.by_launch, index.by_ext, host)
        index.device.unanchored.extend(unlinked)
        roots_by_track: dict[tuple[Any, Any], list[Event]] = {}
        for root in index.roots:
            roots_by_track.setdefault(root.track, []).append(root)
        for track, track_roots in roots_by_track.items():
            track_roots.sort(key=lambda e: e.start_us)
            index._track_roots[track] = ([e.start_us for e in track_roots], track_roots)
        return index

    @property
    def gpu_only(self) -> bool:
        """Device events but no host op: a trace of the device side alone."""
        return self.has_device and not self.op_processes

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
        """Device events linked to launches inside ``op`` (the op itself included): the
        Neuron backfill's kernel names (backends/neuron/events.py)."""
        out: list[Event] = []
        seen: set[int] = set()
        stack = [op]
        while stack:
            ev = stack.pop()
            stack.extend(ev.children)
            if ev.kind is RUNTIME and ev.correlation:
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
            holder = Event(node.name, ANNOTATION, node.start_us, node.dur_us, node.track)
            holder.children = extra
            ops.extend(top_level_ops(holder))
            ops.sort(key=lambda e: e.start_us)
    return ops


def analyze_node(
    node: Event,
    mode: Mode,
    index: TraceIndex | None = None,
    *,
    adopt: bool = True,
    whole: bool = False,
    by_stream: bool = False,
) -> RoundResult:
    """Ops, kernels and device time of one execution of a region. ``adopt``: count other
    threads' ops inside its time span (see TraceIndex.adopted). ``whole``: the node is the
    whole trace, which owns every device event, launched or not. ``by_stream``: per-op rows
    are the device's streams (a trace with no host ops).

    Host mode: each op costs its inclusive time; its kernels are its leaf computations.
    Device mode: the region's device events are all it launched (see device.py), whatever
    launched them; kernels are the ``kernel`` events among them, device time the sum of
    their durations with memcpy and memset, which occupy the device but are no kernels."""
    result = RoundResult(wall_us=node.dur_us)
    if index is None or index.compiles:
        result.compiled_regions, result.graph_breaks, result.compiles = compile_activity(node)
    ops = region_ops(node, index if adopt else None)
    result.ops = [op.name for op in ops]
    if mode == "host":
        for op in ops:
            kernels = host_kernels(op)
            result.kernels.extend(k.name for k in kernels)
            result.device_us += op.dur_us
            _add_row(result, op.name, op.dur_us, len(kernels))
        return result
    for op in ops:  # every op has its row, if only to show it launched nothing
        _add_row(result, op.name, 0.0, 0)
    if index is None:
        result.device_busy_us = 0.0
        return result
    groups = index.device.everything() if whole else index.device.in_span(node)
    _device_rows(result, groups, ops, by_stream)
    return result


def _device_rows(
    result: RoundResult, groups: Sequence[Launched], ops: Sequence[Event], by_stream: bool
) -> None:
    owners = {id(op): op for op in ops}
    launched: list[Event] = []
    devices = len({e.track[0] for g in groups for e in g.events}) if by_stream else 0
    # The rows' dicts and the gaps' list held locally: this loop runs per device event.
    row_us, row_kernels, gaps = result.op_device_us, result.op_kernels, result.launch_gaps_us
    for g in groups:
        anchor = g.anchor
        owner = None if by_stream else owning_op(anchor, owners)
        timed = anchor is not None and anchor.kind is RUNTIME
        launched.extend(g.events)
        for e in g.events:
            if by_stream:
                row = stream_name(e, devices)
            else:
                row = owner.name if owner is not None else launcher_row(anchor, e)
            is_kernel = e.kind is KERNEL
            row_us[row] = row_us.get(row, 0.0) + e.dur_us
            row_kernels[row] = row_kernels.get(row, 0) + is_kernel
            if is_kernel and timed and anchor is not None:
                gaps.append(max(0.0, e.start_us - anchor.start_us))
    launched.sort(key=lambda e: e.start_us)
    result.kernels = [e.name for e in launched if e.kind is KERNEL]
    result.device_us = sum(e.dur_us for e in launched)
    result.device_busy_us = busy_us(launched) if launched else 0.0


def _add_row(result: RoundResult, name: str, device_us: float, kernels: int) -> None:
    result.op_device_us[name] = result.op_device_us.get(name, 0.0) + device_us
    result.op_kernels[name] = result.op_kernels.get(name, 0) + kernels


def analyze_markers(
    events: Sequence[Event],
    markers: Sequence[str],
    mode: Mode,
    memory: Sequence[MemoryRecord] | None = None,
    memory_device: str = "cpu",
) -> list[RoundResult]:
    """One RoundResult per marker name, in the order given. Each marker must occur once.
    ``memory``: the profile's memory records (None: memory was not profiled), of which
    ``memory_device``'s are counted."""
    index = TraceIndex.build(events)
    found = find_markers(events, markers)
    results = [analyze_node(found[m], mode, index) for m in markers]
    if memory is not None:
        for m, result in zip(markers, results, strict=True):
            result.memory = node_memory(found[m], index, memory, memory_device)
    return results


def node_memory(
    node: Event, index: TraceIndex, memory: Sequence[MemoryRecord], device: str
) -> RoundMemory:
    """The memory of one execution of a region, charged to its top-level ops."""
    return region_memory(memory, node, region_ops(node, index), device)


def markers_memory(
    events: Sequence[Event], markers: Sequence[str], memory: Sequence[MemoryRecord], device: str
) -> list[RoundMemory]:
    """Each marker's memory, for a backend that analyses its rounds its own way."""
    index = TraceIndex.build(events)
    found = find_markers(events, markers)
    return [node_memory(found[m], index, memory, device) for m in markers]


def find_markers(events: Sequence[Event], markers: Sequence[str]) -> dict[str, Event]:
    """The first annotation of each marker name; AnalysisError naming any that is missing."""
    found: dict[str, Event] = {}
    wanted = set(markers)
    for ev in events:
        if ev.kind is ANNOTATION and ev.name in wanted and ev.name not in found:
            found[ev.name] = ev
    missing = [m for m in markers if m not in found]
    if missing:
        raise AnalysisError(f"profiler output lacks the region markers {missing}")
    return found
