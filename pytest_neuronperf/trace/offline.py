"""The offline report: a saved Kineto chrome trace -> the same Measurements as a live run.

This is how a trace recorded on a Trainium or GPU runner is read anywhere: no torch, no
device, no pytest. Which regions a trace holds:

- ``--region NAME``: every ``record_function`` annotation called NAME, one round per
  occurrence; else the measurement NAME of a trace this plugin wrote (its markers carry
  the region name); else NAME as a glob (``ProfilerStep#*``) over annotation names.
- no region: this plugin's measurements if the trace has its markers; else one round per
  ``ProfilerStep#N`` (``torch.profiler.schedule`` steps); else the whole trace as one round.
  A trace with device events and no host op (GPU-only) is the whole trace, one per-op row
  a stream.

Mode: device when the trace holds device events (kernels, memcpy, memset), else host.
In device mode a region's device time is everything it launched (see device.py).
"""

from __future__ import annotations

import gc
import json
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from ..files import Refused, gunzip, read_bytes
from ..markers import parse_marker
from ..model import Measurement, Record, Status
from ..stats import Stats
from .analysis import Mode, RoundResult, TraceIndex, analyze_node, node_memory, region_ops
from .chrome import ChromeDoc, as_chrome, decode_chrome
from .collectives import (
    BACKEND_PREFIXES,
    PARAM_COMMS,
    Call,
    calls_from_chrome,
    calls_in,
    comm_time,
    count,
    round_comm,
)
from .collectives import worst_round as worst_collectives
from .events import ANNOTATION, DEVICE_KINDS, RUNTIME, Event, TraceError, events_from_chrome
from .memory import MEMORY_RECORD, MemoryRecord, records_from_chrome
from .summary import summarize

ModeChoice = Literal["auto", "host", "device"]
WHOLE_TRACE = "(whole trace)"
_STEP_PREFIX = "ProfilerStep#"
_GZIP_MAGIC = b"\x1f\x8b"
# The events the collectives and memory readers walk, kept whole by the decode.
READ_WHOLE = (*BACKEND_PREFIXES, PARAM_COMMS, MEMORY_RECORD)


@dataclass(frozen=True)
class RegionReport:
    measurement: Measurement

    @property
    def launch_gap_us(self) -> Stats:
        return self.measurement.launch_gap_us or Stats.of([])

    def to_dict(self) -> dict[str, Any]:
        out = self.measurement.to_dict()
        out["launches"] = self.launch_gap_us.n
        return out


@dataclass(frozen=True)
class TraceReport:
    source: str
    mode: Mode
    device_kind: str
    regions: tuple[RegionReport, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.source,
            "mode": self.mode,
            "device_kind": self.device_kind,
            "regions": [r.to_dict() for r in self.regions],
        }

    def records(self) -> list[Record]:
        """The regions as the run report's records (reports/json.py offline_document)."""
        return [Record(r.measurement, status=Status.TRACE) for r in self.regions]

    def extras(self) -> list[dict[str, Any]]:
        """Per record, what only a saved trace has: its kernel launches."""
        return [{"launches": r.launch_gap_us.n} for r in self.regions]

    def source_dict(self) -> dict[str, Any]:
        return {"kind": "kineto-trace", "path": self.source, "mode": self.mode}


def load_trace(path: Path) -> ChromeDoc:
    """The parsed ``.json`` or ``.json.gz`` trace; TraceError for anything else.
    Gzip is recognised by its magic bytes, so a misnamed file still reads."""
    name = str(path)
    try:
        data = read_bytes(path)
    except IsADirectoryError:
        raise TraceError(f"{name}: is a directory, not a trace file") from None
    except OSError as exc:
        raise TraceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gunzip(data)
        except Refused as exc:
            raise TraceError(f"{name}: {exc}") from None
        except EOFError:
            raise TraceError(f"{name}: truncated gzip (the file ends mid-stream)") from None
        except (OSError, zlib.error) as exc:
            raise TraceError(f"{name}: corrupt gzip: {exc}") from None
    elif name.endswith(".gz"):
        raise TraceError(f"{name}: named .gz but is not gzip-compressed")
    if not data or data.isspace():  # strip() would copy the whole file
        raise TraceError(f"{name}: empty file")
    try:
        with gc_paused():
            return decode_chrome(data, name, READ_WHOLE)
    except UnicodeDecodeError:
        raise TraceError(f"{name}: not a JSON text file (binary content)") from None
    except json.JSONDecodeError as exc:
        # A cut-off file fails at its very end, or inside its last string.
        at_end = exc.pos >= len(data.rstrip()) - 1
        cut_string = exc.msg.startswith("Unterminated string") and b'"' not in data[exc.pos + 1 :]
        hint = " (truncated?)" if at_end or cut_string else ""
        raise TraceError(
            f"{name}: not valid JSON{hint}: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise TraceError(f"{name}: JSON nested too deeply to be a chrome trace") from None
    except TraceError:  # a ValueError too, already worded: JSON that is no chrome trace
        raise
    except ValueError as exc:  # an integer beyond Python's 4,300-digit conversion limit
        raise TraceError(f"{name}: holds a number no profiler writes: {exc}") from None


def device_kind_of(doc: ChromeDoc, events: Sequence[Event]) -> str:
    """``cuda:<name>`` / ``rocm:<name>`` from the trace's deviceProperties, like the live
    backends' device kinds; ``cpu`` for a trace without device activity."""
    props = doc.device_properties
    name = ""
    if isinstance(props, list) and props and isinstance(props[0], dict):
        name = str(props[0].get("name", ""))
    has_runtime = any(e.kind is RUNTIME or e.kind in DEVICE_KINDS for e in events)
    if not name and not has_runtime:
        return "cpu"
    # A run is CUDA's or ROCm's throughout: its first runtime call named for one says which.
    first = next(
        (e for e in events if e.kind is RUNTIME and e.name.startswith(("hip", "cu"))), None
    )
    hip = first is not None and first.name.startswith("hip")
    return f"{'rocm' if hip else 'cuda'}:{name or 'unknown'}"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Garbage collection off while a trace becomes events and figures: the hundreds of
    thousands of dicts and Events a large trace makes are all alive, so each collection
    the allocations trigger scans them for nothing (docs/cost.md, "Parsing and analysis")."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def report_trace(path: Path, region: str | None = None, mode: ModeChoice = "auto") -> TraceReport:
    """Analyse one saved trace. Raises TraceError with a one-line message on bad input."""
    with gc_paused():
        return _report(path, region, mode)


def _report(path: Path, region: str | None, mode: ModeChoice) -> TraceReport:
    doc = load_trace(path)
    trace = prepare(doc, path, mode)
    del doc  # the parsed JSON is the largest thing alive: gone before the analysis
    groups = select_regions(trace.events, trace.index, region, str(path))
    regions = tuple(
        RegionReport(
            with_collectives(
                _region_report(
                    name, nodes, trace.mode, trace.index, trace.device_kind, path.name, trace.memory
                ).measurement,
                name,
                nodes,
                trace.mode,
                trace.index,
                trace.calls,
                trace.world_size,
            )
        )
        for name, nodes in groups
    )
    # Parent and child link each other: without this the events outlive the report as
    # cycles, and the first collection after the pause walks every one of them.
    for ev in trace.events:
        ev.parent = None
    return TraceReport(str(path), trace.mode, trace.device_kind, regions)


@dataclass(frozen=True)
class Prepared:
    """A parsed trace as events, indexed, with the mode it is analysed in."""

    events: list[Event]
    index: TraceIndex
    mode: Mode
    device_kind: str
    # The process group's size (distributedInfo) and the trace's collective calls.
    world_size: int
    calls: list[Call]
    # The profiler's memory records (profile_memory=True), by time.
    memory: list[MemoryRecord]


def prepare(doc: Any, path: Path, mode: ModeChoice = "auto") -> Prepared:
    """Events, index, mode and device kind of a parsed trace; TraceError (one line) when
    it has no events or none for the mode asked. ``doc``: what load_trace gives, or the
    dict ``json.load`` gives."""
    if not isinstance(doc, ChromeDoc):
        doc = as_chrome(doc, str(path), READ_WHOLE)
    events = events_from_chrome(doc, source=str(path))
    if not events:
        raise TraceError(f"{path}: no profiler events (no cpu_op, annotation or kernel events)")
    index = TraceIndex.build(events)
    # A trace with device runtime calls but no device events is a GPU run whose device
    # side was not recorded: host figures would pass for device time, so auto refuses it.
    gpu_run = index.has_device or bool(index.launches)
    chosen: Mode = mode if mode != "auto" else "device" if gpu_run else "host"
    if chosen == "device" and not index.has_device:
        launches = len(index.launches)
        why = (
            f"{launches} runtime calls but no device events: the device activity was not "
            "recorded (ProfilerActivity.CUDA missing, or a CUPTI range-profiler trace)"
            if launches
            else "no device events (a CPU-only trace)"
        )
        raise TraceError(f"{path}: {why}; use --mode host to analyse the host side")
    if chosen == "host" and not index.roots:
        raise TraceError(f"{path}: no host events to analyse in host mode; use --mode device")
    world = _world_size(doc)
    few = list(doc.whole)
    return Prepared(
        events,
        index,
        chosen,
        device_kind_of(doc, events),
        world,
        calls_from_chrome(few, world),
        records_from_chrome(few),
    )


def select_regions(
    events: Sequence[Event], index: TraceIndex, region: str | None, source: str
) -> list[tuple[str, list[Event]]]:
    """(region name, one node per round) in trace order; see the module docstring."""
    annotations = [e for e in events if e.kind is ANNOTATION]
    annotations.sort(key=lambda e: e.start_us)
    ours: dict[tuple[int, str], list[Event]] = {}
    for ev in annotations:
        marker = parse_marker(ev.name)
        if marker is not None and not marker.prime:
            ours.setdefault((marker.seq, marker.region), []).append(ev)
    if region is not None:
        exact = [e for e in annotations if e.name == region]
        if exact:
            return [(region, exact)]
        mine = [e for (_, name), nodes in sorted(ours.items()) if name == region for e in nodes]
        if mine:
            return [(region, mine)]
        if any(c in region for c in "*?["):
            matched = [e for e in annotations if fnmatchcase(e.name, region)]
            if matched:
                return [(region, matched)]
        names = sorted({m.region if (m := parse_marker(e.name)) else e.name for e in annotations})
        shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        raise TraceError(
            f"{source}: no region {region!r} in the trace (its regions: {shown or 'none'})"
        )
    if ours:
        return [(name, nodes) for (_, name), nodes in sorted(ours.items())]
    if index.gpu_only:
        return [(WHOLE_TRACE, [_whole(events, [])])]
    steps = [e for e in annotations if e.name.startswith(_STEP_PREFIX)]
    if len(steps) > 1 and not any(True for _ in region_ops(steps[-1], index)):
        # Stopping the profiler opens one more step and records it empty (the ROCm trace's
        # ProfilerStep#2): it is no round of the workload.
        steps.pop()
    if steps:
        return [(f"{_STEP_PREFIX}*", steps)]
    return [(WHOLE_TRACE, [_whole(events, sorted(index.roots, key=lambda e: e.start_us))])]


def _whole(events: Sequence[Event], roots: list[Event]) -> Event:
    """One node spanning the trace, holding every thread's roots."""
    spanned = roots or events
    start = min(e.start_us for e in spanned)
    end = max(e.end_us for e in spanned)
    whole = Event(WHOLE_TRACE, ANNOTATION, start, end - start, ("trace", "all"))
    whole.children = roots
    return whole


def region_rounds(
    name: str, nodes: Sequence[Event], mode: Mode, index: TraceIndex
) -> list[RoundResult]:
    """One RoundResult per node of a region ``select_regions`` gave."""
    # The whole-trace node already holds every thread's roots: adopting would count twice.
    whole = name == WHOLE_TRACE
    return [
        analyze_node(n, mode, index, adopt=not whole, whole=whole, by_stream=index.gpu_only)
        for n in nodes
    ]


def _region_report(
    name: str,
    nodes: list[Event],
    mode: Mode,
    index: TraceIndex,
    kind: str,
    test_id: str,
    memory: Sequence[MemoryRecord] = (),
) -> RegionReport:
    rounds = region_rounds(name, nodes, mode, index)
    if memory:
        # Recorded with profile_memory=True: the accelerator's memory where the trace has
        # its records, else the host's (trace/memory.py).
        device = next((r.device for r in memory if r.device != "cpu"), "cpu")
        for node, r in zip(nodes, rounds, strict=True):
            r.memory = node_memory(node, index, memory, device)
    measurement = summarize(
        rounds,
        test_id=test_id,
        region=name,
        backend="trace",
        device_kind=kind,
        # Saved traces hold only profiled time: the region's wall time under the profiler.
        host=[r.wall_us for r in rounds],
        environment={"backend": "trace", "device_kind": kind, "torch": "?"},
    )
    return RegionReport(measurement)


def _world_size(doc: ChromeDoc) -> int:
    """The process group's size Kineto wrote in ``distributedInfo``; 0 when absent."""
    info = doc.distributed_info
    size = info.get("world_size") if isinstance(info, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else 0


def with_collectives(
    m: Measurement,
    name: str,
    nodes: Sequence[Event],
    mode: Mode,
    index: TraceIndex,
    calls: Sequence[Call],
    world_size: int,
) -> Measurement:
    """``m`` with the collectives of its worst round and, in device mode, the
    communication kernels' time per round (trace/collectives.py)."""
    whole = name == WHOLE_TRACE
    per_round = [count(calls if whole else calls_in(n, calls)) for n in nodes]
    comm = None
    if mode == "device":
        comm = comm_time(
            [
                round_comm(
                    [
                        e
                        for g in (index.device.everything() if whole else index.device.in_span(n))
                        for e in g.events
                    ]
                )
                for n in nodes
            ]
        )
    collectives = worst_collectives(per_round)
    return replace(
        m,
        collectives=collectives,
        comm=comm,
        world_size=world_size if collectives or comm is not None else 0,
    )
