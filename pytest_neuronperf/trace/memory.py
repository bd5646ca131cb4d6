"""A region's memory from the profiler's memory records (``profile_memory=True``).

With ``profile_memory=True`` torch records a ``[memory]`` instant for every allocation and
free an allocator reports: its size (negative for a free), time, thread and device. They
are not ops: torch's own parse folds them into the ops around them (``cpu_memory_usage``);
here they are read as they were recorded, from Kineto's results (live) or a saved chrome
trace (``cpu_instant_event`` with ``Bytes`` and ``Device Type`` in its args), and a region's
figures are a walk over those inside its span. On CPU they are exact for fixed shapes.
No torch import at module level: the offline report reads traces without it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Memory, MemoryStep
from .events import Event

MEMORY_RECORD = "[memory]"
OUTSIDE_OPS = "(outside any op)"
# c10::DeviceType numbers a chrome trace writes in ``Device Type``, and torch's names.
_DEVICE_TYPES = {
    0: "cpu",
    1: "cuda",
    12: "xpu",
    13: "mps",
    15: "hpu",
    19: "mtia",
    20: "privateuse1",
}


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One allocation (``nbytes`` > 0) or free (< 0); ``track`` as the host events' is."""

    ts_us: float
    nbytes: int
    track: tuple[Any, Any]
    device: str


@dataclass
class RoundMemory:
    """One execution's memory, in bytes above the level when the region began."""

    peak_bytes: int = 0
    allocated_bytes: int = 0
    retained_bytes: int = 0
    op_bytes: dict[str, int] = field(default_factory=dict)
    steps: list[MemoryStep] = field(default_factory=list)
    # What the three figures rest on (Memory.source) and the device they count.
    source: str = "profiler"
    device: str = "cpu"
    # The memory records counted: none on a device means the profiler saw none of its
    # allocations (a backend that reports none), which is no figure, never 0 bytes.
    records: int = 0


def device_name(device_type: Any) -> str:
    """``cpu``, ``cuda``, ``privateuse1``... from Kineto's enum or a trace's number."""
    if isinstance(device_type, int) and not isinstance(device_type, bool):
        return _DEVICE_TYPES.get(device_type, f"device{device_type}")
    return str(getattr(device_type, "name", device_type)).lower()


def records_from_kineto(result: Any) -> list[MemoryRecord]:
    """The memory records of a live profile, in the time base of its events (µs from the
    trace's start, as torch's parse and :func:`events.kineto_nodes` use), sorted."""
    events_of = getattr(result, "events", None)
    if events_of is None:
        return []
    start_ns = result.trace_start_ns()
    out = [
        MemoryRecord(
            (ke.start_ns() - start_ns) / 1000,
            int(ke.nbytes()),
            ("host", ke.start_thread_id()),
            device_name(ke.device_type()),
        )
        for ke in events_of()
        if ke.name() == MEMORY_RECORD
    ]
    out.sort(key=lambda r: r.ts_us)
    return out


def records_from_chrome(doc: Any) -> list[MemoryRecord]:
    """The memory records of a parsed chrome trace, sorted; records with a size or time
    that is not a number are skipped (they carry no figure)."""
    raw = doc.get("traceEvents") if isinstance(doc, dict) else doc
    out: list[MemoryRecord] = []
    for ev in raw if isinstance(raw, list) else ():
        if not isinstance(ev, dict) or ev.get("name") != MEMORY_RECORD:
            continue
        args = ev.get("args")
        ts = ev.get("ts")
        if not isinstance(args, dict) or not isinstance(ts, int | float):
            continue
        nbytes = args.get("Bytes")
        if not isinstance(nbytes, int) or isinstance(nbytes, bool):
            continue
        device = device_name(args.get("Device Type", 0))
        out.append(MemoryRecord(float(ts), nbytes, (ev.get("pid"), ev.get("tid")), device))
    out.sort(key=lambda r: r.ts_us)
    return out


def region_memory(
    records: Sequence[MemoryRecord], node: Event, ops: Sequence[Event], device: str
) -> RoundMemory:
    """The memory of one execution of a region: ``device``'s records inside ``node``'s span
    in its process (any thread), each charged to the top-level op (of ``ops``) running on
    its thread at that time."""
    starts = [r.ts_us for r in records]
    lo = bisect_left(starts, node.start_us)
    hi = bisect_right(starts, node.end_us)
    process = node.track[0]
    anywhere = process == "trace"  # the offline whole-trace node spans every process
    owner = _Owners(ops)
    out = RoundMemory(device=device)
    level = 0
    step: MemoryStep | None = None
    for rec in records[lo:hi]:
        if rec.device != device or not (anywhere or rec.track[0] == process):
            continue
        level += rec.nbytes
        out.records += 1
        out.peak_bytes = max(out.peak_bytes, level)
        name = owner.at(rec)
        if rec.nbytes > 0:
            out.allocated_bytes += rec.nbytes
            out.op_bytes[name] = out.op_bytes.get(name, 0) + rec.nbytes
        if step is None or step.op != name:
            step = MemoryStep(name, level, level)
            out.steps.append(step)
        else:
            step = out.steps[-1] = MemoryStep(name, max(step.high, level), level)
    out.retained_bytes = level
    return out


class _Owners:
    """The top-level op running on a thread at a time: per thread, ops by start."""

    def __init__(self, ops: Sequence[Event]) -> None:
        self._by_track: dict[tuple[Any, Any], tuple[list[float], list[Event]]] = {}
        for op in sorted(ops, key=lambda e: e.start_us):
            starts, events = self._by_track.setdefault(op.track, ([], []))
            starts.append(op.start_us)
            events.append(op)

    def at(self, rec: MemoryRecord) -> str:
        found = self._by_track.get(rec.track)
        if found is None:
            return OUTSIDE_OPS
        starts, events = found
        i = bisect_right(starts, rec.ts_us) - 1
        if i >= 0 and rec.ts_us <= events[i].end_us:
            return events[i].name
        return OUTSIDE_OPS


def summarize_memory(
    rounds: Sequence[RoundMemory | None],
) -> tuple[Memory, tuple[MemoryStep, ...]] | None:
    """The region's Memory from its rounds (the round with the highest peak; the worst
    retained of any round) and that round's steps; None when no round has a figure."""
    measured = [r for r in rounds if r is not None]
    if not measured:
        return None
    worst = max(measured, key=lambda r: (r.peak_bytes, r.allocated_bytes))
    memory = Memory(
        peak_bytes=worst.peak_bytes,
        allocated_bytes=max(r.allocated_bytes for r in measured),
        retained_bytes=max(r.retained_bytes for r in measured),
        op_bytes=dict(worst.op_bytes),
        source=worst.source,
        device=worst.device,
    )
    return memory, tuple(worst.steps)
