"""Which device work a region launched, and who launched it. Pure functions, no I/O.

A region's device events are every kernel, memcpy and memset whose launching host call
starts inside the region's time span, in the region's process, on any thread: launches
under an aten op, graph replays (one ``cudaGraphLaunch`` / ``hipGraphLaunch`` carries every
device event sharing its correlation), Triton's and extensions' direct launches, and the
autograd thread's. See docs/device-time.md for the rule and the traces that set it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .events import ANNOTATION, DEVICE_KINDS, OP, RUNTIME, Event

# Driver-API launches of a loaded module: how Triton's launcher (and JIT extensions) start
# a kernel, so a row for one under no op is named for its kernel.
MODULE_LAUNCHES = frozenset(
    {
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel",
        "hipModuleLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipModuleLaunchCooperativeKernel",
    }
)
GRAPH_LAUNCH = "GraphLaunch"
OUTSIDE_ANY_OP = "(launched outside any op)"
NOT_RECORDED = "(launch not recorded)"
# A region's end is recorded to the ns; a launch at its very end still belongs to it.
_END_TOLERANCE_US = 1e-3


@dataclass(eq=False, slots=True)
class Launched:
    """Device events and the host event they are tied to: their runtime launch call, or
    (when the launch was not recorded) the op whose External id they carry; None when
    neither is in the trace."""

    anchor: Event | None
    events: list[Event]


@dataclass
class DeviceIndex:
    """Device events grouped by anchor, the anchors sorted by start in each process."""

    by_process: dict[Any, tuple[list[float], list[Launched]]] = field(default_factory=dict)
    unanchored: list[Event] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        launches: dict[int, Event],
        by_launch: dict[int, list[Event]],
        by_ext: dict[int, list[Event]],
        host: Iterable[Event],
    ) -> DeviceIndex:
        index = cls()
        groups = [(launches[c], evs) for c, evs in by_launch.items()]
        if by_ext:
            owners: dict[int, Event] = {}
            for ev in host:
                if ev.kind in (OP, ANNOTATION) and ev.ext_id:
                    owners.setdefault(ev.ext_id, ev)
            for ext, evs in by_ext.items():
                owner = owners.get(ext)
                if owner is None:
                    index.unanchored.extend(evs)
                else:
                    groups.append((owner, evs))
        per: dict[Any, list[tuple[Event, list[Event]]]] = {}
        for anchor, evs in groups:
            per.setdefault(anchor.track[0], []).append((anchor, evs))
        for process, gs in per.items():
            gs.sort(key=lambda g: g[0].start_us)
            index.by_process[process] = (
                [a.start_us for a, _ in gs],
                [Launched(a, evs) for a, evs in gs],
            )
        return index

    def in_span(self, node: Event) -> list[Launched]:
        """What ``node``'s process launched during ``node``. A region whose process launched
        nothing at all takes every process's launches: Kineto writes some ``ProfilerStep``
        annotations under a pid of their own (the Triton example in tests/data)."""
        lo, hi = node.start_us, node.end_us + _END_TOLERANCE_US
        process = node.track[0]
        processes = [process] if process in self.by_process else list(self.by_process)
        out: list[Launched] = []
        for p in processes:
            starts, groups = self.by_process[p]
            out.extend(groups[bisect_left(starts, lo) : bisect_right(starts, hi)])
        return out

    def everything(self) -> list[Launched]:
        """Every device event of the trace, launches not recorded included."""
        out = [g for _, groups in self.by_process.values() for g in groups]
        if self.unanchored:
            out.append(Launched(None, self.unanchored))
        return out


def launcher_row(anchor: Event | None, device_event: Event) -> str:
    """The per-op row of device work launched under none of the region's ops."""
    if anchor is None:
        return NOT_RECORDED
    if GRAPH_LAUNCH in anchor.name:
        return f"{anchor.name} (graph replay)"
    if anchor.kind is RUNTIME and anchor.name in MODULE_LAUNCHES:
        return device_event.name
    outer = None
    ev: Event | None = anchor
    while ev is not None:
        if ev.kind is OP:
            outer = ev
        ev = ev.parent
    if outer is not None:  # bookkeeping, a compilation, another thread's op not inside it
        return f"{outer.name} (not one of the region's ops)"
    return OUTSIDE_ANY_OP


def owning_op(anchor: Event | None, ops: dict[int, Event]) -> Event | None:
    """The region op (``ops``, keyed by ``id``) whose subtree holds ``anchor``."""
    ev = anchor
    while ev is not None:
        op = ops.get(id(ev))
        if op is not None:
            return op
        ev = ev.parent
    return None


def busy_us(events: Sequence[Event]) -> float:
    """Time the device was busy: the union of the events' intervals on each device (streams
    that overlap count once), summed over devices. A disjoint interval adds its duration
    as recorded, not end - start: timestamps near 1e12 µs would round it."""
    by_device: dict[Any, list[tuple[float, float, float]]] = {}
    for e in events:
        if e.kind in DEVICE_KINDS:
            start, dur = e.start_us, e.dur_us
            by_device.setdefault(e.track[0], []).append((start, start + dur, dur))
    total = 0.0
    for intervals in by_device.values():
        intervals.sort()
        hi = -float("inf")
        for start, end, dur in intervals:
            if start >= hi:
                total += dur
                hi = end
            elif end > hi:
                total += end - hi
                hi = end
    return total


def stream_name(event: Event, devices: int) -> str:
    """A per-stream row: ``stream 7``, or ``device 1 stream 7`` when several devices ran."""
    device, stream = event.track
    if isinstance(device, tuple):  # live events: ("device", index)
        device = device[-1]
    return f"stream {stream}" if devices <= 1 else f"device {device} stream {stream}"
