"""Profiler output -> one neutral event list, whatever produced it.

Two sources feed the same analysis: live ``torch.profiler`` results (``FunctionEvent``s) and
saved Kineto chrome traces (``export_chrome_trace`` / ``tensorboard_trace_handler``). Both
become :class:`Event`s; nesting is rebuilt from time containment per thread, which is what
chrome traces carry and what live events satisfy too. No pytest, no torch import at module
level: this runs in the offline ``report`` command as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..errors import NeuronPerfError


class Kind(StrEnum):
    OP = "op"  # a host-side dispatch: aten op, compiled region, inductor kernel on CPU
    ANNOTATION = "annotation"  # record_function markers: ours and the user's
    RUNTIME = "runtime"  # cudaLaunchKernel & co: host side of a device launch
    KERNEL = "kernel"  # device execution
    MEMCPY = "memcpy"
    MEMSET = "memset"


DEVICE_KINDS = frozenset({Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET})

# Chrome-trace categories -> kinds. Anything else (python_function, gpu_user_annotation,
# ac2g flows, Trace spans, overhead) carries no cost we attribute.
_CATEGORY_KIND = {
    "cpu_op": Kind.OP,
    "operator": Kind.OP,
    "user_annotation": Kind.ANNOTATION,
    "cuda_runtime": Kind.RUNTIME,
    "cuda_driver": Kind.RUNTIME,
    "runtime": Kind.RUNTIME,
    "privateuse1_runtime": Kind.RUNTIME,
    "privateuse1_driver": Kind.RUNTIME,
    "kernel": Kind.KERNEL,
    "gpu_memcpy": Kind.MEMCPY,
    "gpu_memset": Kind.MEMSET,
}


@dataclass(eq=False, slots=True)
class Event:
    """One profiler event. ``ext_id`` ties a device event to the host op that launched it:
    for host ops it is the op's own id, for runtime and device events the launching op's."""

    name: str
    kind: Kind
    start_us: float
    dur_us: float
    track: tuple[Any, Any]
    ext_id: int = 0
    correlation: int = 0
    children: list[Event] = field(default_factory=list)
    parent: Event | None = None

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


class TraceError(NeuronPerfError, ValueError):
    """A trace that cannot be read; the message names the file and what is wrong."""


# Kineto trace schema versions this code knows; newer ones may have moved fields.
KNOWN_SCHEMA_MAX = 1


def events_from_chrome(doc: Any, source: str = "trace") -> list[Event]:
    """Events of a parsed Kineto chrome trace (the dict ``json.load`` gives)."""
    if isinstance(doc, list):  # the bare-array form of the chrome trace format
        raw = doc
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        version = doc.get("schemaVersion")
        if isinstance(version, int) and version > KNOWN_SCHEMA_MAX:
            raise TraceError(
                f"{source}: Kineto schemaVersion {version} is newer than this version of "
                f"pytest-neuronperf understands (<= {KNOWN_SCHEMA_MAX}); upgrade pytest-neuronperf"
            )
        raw = doc["traceEvents"]
    else:
        raise TraceError(f"{source}: not a chrome trace (no 'traceEvents' list)")
    # The hot loop of the offline report (a 100 MB trace has ~400k events): categories
    # are looked up as written before lower-casing, and ids are usually ints already.
    out: list[Event] = []
    append = out.append
    kinds = _CATEGORY_KIND
    for ev in raw:
        if not isinstance(ev, dict):
            continue
        cat = ev.get("cat")
        if not isinstance(cat, str):
            continue
        kind = kinds.get(cat)
        if kind is None and (kind := kinds.get(cat.lower())) is None:
            continue
        if ev.get("ph") != "X":
            continue
        try:
            start = float(ev["ts"])
            dur = float(ev.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        args = ev.get("args")
        ext = corr = 0
        if isinstance(args, dict):
            ext = args.get("External id", 0)
            corr = args.get("correlation", 0)
            if type(ext) is not int:
                ext = _int(ext)
            if type(corr) is not int:
                corr = _int(corr)
        name = ev.get("name", "")
        append(
            Event(
                name if isinstance(name, str) else str(name),
                kind,
                start,
                dur,
                (ev.get("pid"), ev.get("tid")),
                ext,
                corr,
            )
        )
    return out


def events_from_function_events(function_events: Iterable[Any]) -> list[Event]:
    """Events of a live profile (``prof.events()``)."""
    out: list[Event] = []
    for fe in function_events:
        device = getattr(fe.device_type, "name", str(fe.device_type))
        linked = int(getattr(fe, "linked_correlation_id", 0) or 0)
        corr = 0
        if device != "CPU":
            kind = _device_kind(fe.name)
            ext, corr = linked, int(fe.id)
        elif getattr(fe, "is_user_annotation", False):
            kind, ext = Kind.ANNOTATION, int(fe.id)
        elif getattr(fe, "is_python_function", False) or getattr(fe, "is_async", False):
            continue
        elif linked > 0:
            # The runtime call's own id is the launch correlation its kernel also carries.
            kind, ext, corr = Kind.RUNTIME, linked, int(fe.id)
        else:
            kind, ext = Kind.OP, int(fe.id)
        start = float(fe.time_range.start)
        out.append(
            Event(
                name=fe.name,
                kind=kind,
                start_us=start,
                dur_us=float(fe.time_range.end) - start,
                track=("device", fe.device_index) if device != "CPU" else ("host", fe.thread),
                ext_id=ext,
                correlation=corr,
            )
        )
    return out


def _device_kind(name: str) -> Kind:
    low = name.lower()
    if low.startswith("memcpy"):
        return Kind.MEMCPY
    if low.startswith("memset"):
        return Kind.MEMSET
    return Kind.KERNEL


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def build_tree(events: Sequence[Event]) -> list[Event]:
    """Link host events (ops, annotations, runtime calls) into parent/child trees by time
    containment on each track; returns the roots. Device events stay flat: they are tied
    to host ops by ``ext_id``, not by time."""
    by_track: dict[tuple[Any, Any], list[Event]] = {}
    for ev in events:
        if ev.kind in DEVICE_KINDS:
            continue
        ev.children.clear()
        ev.parent = None
        by_track.setdefault(ev.track, []).append(ev)
    roots: list[Event] = []
    for track_events in by_track.values():
        # Outer events first when two start together, so they become the parent.
        track_events.sort(key=lambda e: (e.start_us, -e.dur_us))
        stack: list[Event] = []
        for ev in track_events:
            # A small tolerance: chrome traces round to the ns and children can appear to
            # end a hair after their parent.
            while stack and ev.start_us >= stack[-1].end_us - 1e-3:
                stack.pop()
            if stack:
                ev.parent = stack[-1]
                stack[-1].children.append(ev)
            else:
                roots.append(ev)
            stack.append(ev)
    return roots
