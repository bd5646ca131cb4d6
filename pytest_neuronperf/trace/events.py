"""Profiler output -> one neutral event list, whatever produced it.

Two sources feed the same analysis: live ``torch.profiler`` results (``FunctionEvent``s) and
saved Kineto chrome traces (``export_chrome_trace`` / ``tensorboard_trace_handler``). Both
become :class:`Event`s; nesting is rebuilt from time containment per thread, which is what
chrome traces carry and what live events satisfy too. No pytest, no torch import at module
level: this runs in the offline ``report`` command as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from typing import Any

import msgspec
from msgspec import UNSET

from .chrome import ChromeDoc, ChromeEvent, as_chrome
from .chrome import TraceError as TraceError  # raised here too; callers import it from here

_INF = float("inf")


class Kind(StrEnum):
    OP = "op"  # a host-side dispatch: aten op, compiled region, inductor kernel on CPU
    ANNOTATION = "annotation"  # record_function markers: ours and the user's
    RUNTIME = "runtime"  # cudaLaunchKernel & co: host side of a device launch
    KERNEL = "kernel"  # device execution
    MEMCPY = "memcpy"
    MEMSET = "memset"


# The members as plain names: on Python 3.11 each ``Kind.X`` runs the enum's descriptor,
# ten times a global's cost, and a large trace's analysis makes ~10^6 such lookups.
OP, ANNOTATION, RUNTIME = Kind.OP, Kind.ANNOTATION, Kind.RUNTIME
KERNEL, MEMCPY, MEMSET = Kind.KERNEL, Kind.MEMCPY, Kind.MEMSET

DEVICE_KINDS = frozenset({KERNEL, MEMCPY, MEMSET})

# Kineto's flows from a launch to what it launched; a device event whose args lack the
# correlation still has the flow's end bound to it (same pid, tid and ts).
_FLOW_CATEGORIES = frozenset({"ac2g", "async_cpu_to_gpu"})

# Chrome-trace categories -> kinds. Anything else (python_function, gpu_user_annotation,
# ac2g flows, Trace spans, overhead) carries no cost we attribute.
_CATEGORY_KIND = {
    "cpu_op": OP,
    "operator": OP,
    "user_annotation": ANNOTATION,
    "cuda_runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "runtime": RUNTIME,
    "privateuse1_runtime": RUNTIME,
    "privateuse1_driver": RUNTIME,
    "kernel": KERNEL,
    "gpu_memcpy": MEMCPY,
    "gpu_memset": MEMSET,
}


class Event(msgspec.Struct, eq=False):
    """One profiler event (a Struct: built in C, a large trace's hot loop makes 10^5 of
    them). ``ext_id`` ties a device event to the host op that launched it:
    for host ops it is the op's own id, for runtime and device events the launching op's.
    ``correlation`` ties a device event to its runtime launch call. ``track`` is (process,
    thread) for host events and (device, stream) for device events."""

    name: str
    kind: Kind
    start_us: float
    dur_us: float
    track: tuple[Any, Any]
    ext_id: int = 0
    correlation: int = 0
    # A leaf shares the empty tuple: most events have no child, and a list each costs.
    children: Sequence[Event] = ()
    parent: Event | None = None

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


# Kineto trace schema versions this code knows; newer ones may have moved fields.
KNOWN_SCHEMA_MAX = 1


def events_from_chrome(doc: Any, source: str = "trace") -> list[Event]:
    """Events of a chrome trace: a :class:`~.chrome.ChromeDoc`, or the dict or bare event
    array ``json.load`` gives."""
    chrome = doc if isinstance(doc, ChromeDoc) else as_chrome(doc, source)
    version = chrome.schema_version
    # Any number form: 99.0 or "99" is no older than 99.
    known = version is None or (type(version) in (int, float) and version <= KNOWN_SCHEMA_MAX)
    if not known:
        what = "newer than" if type(version) in (int, float) else "not a version number"
        raise TraceError(
            f"{source}: Kineto schemaVersion {version!r} is {what} this version of "
            f"pytest-neuronperf understands (<= {KNOWN_SCHEMA_MAX}); upgrade pytest-neuronperf"
        )
    raw = chrome.events
    # The hot loop of the offline report (a 100 MB trace has ~400k events): categories
    # are looked up as written before lower-casing, and ids are usually ints already.
    out: list[Event] = []
    append = out.append
    kinds = _CATEGORY_KIND
    device_kinds = DEVICE_KINDS
    uncorrelated = False
    for ev in raw:
        cat = ev.cat
        if cat.__class__ is not str:
            continue
        kind = kinds.get(cat)
        if kind is None and (kind := kinds.get(cat.lower())) is None:
            continue
        if ev.ph != "X":
            continue
        try:
            start = float(ev.ts)
            dur = float(0.0 if ev.dur is UNSET else ev.dur)
        except (TypeError, ValueError):  # no ts (UNSET), or one that is no number
            continue
        except OverflowError:  # an integer past float's range: refused below, as inf is
            start = dur = _INF
        name = ev.name
        pid = ev.pid
        tid = ev.tid
        # One chained test each catches NaN, infinities and negative durations.
        if (
            not (0.0 <= dur < _INF and -_INF < start < _INF)
            or name.__class__ is not str
            or (pid.__class__ is not int and not isinstance(pid, _TRACK_ID))
            or (tid.__class__ is not int and not isinstance(tid, _TRACK_ID))
        ):
            raise TraceError(f"{source}: {_bad_event(ev, cat, start, dur)}")
        args = ev.args
        ext = corr = 0
        if args:
            ext = args.ext
            corr = args.corr
            if ext.__class__ is not int:
                ext = _int(ext)
            if corr.__class__ is not int:
                corr = _int(corr)
        if not corr and kind in device_kinds:
            uncorrelated = True
        append(Event(name, kind, start, dur, (pid, tid), ext, corr))
    if uncorrelated:
        _correlate_by_flow(raw, out)
    return out


# Track ids besides ints: Kineto writes strings for some (``"stream 7"``, thread names).
_TRACK_ID = (str, float, type(None))


def _bad_event(ev: ChromeEvent, cat: str, start: float, dur: float) -> str:
    """What is wrong with one event, for a one-line error."""
    name, ts, dur_field = ev.name, _given(ev.ts), _given(ev.dur)
    where = f"{cat} event {name!r} at ts {ts!r}"
    if not (-_INF < start < _INF and dur == dur and dur != _INF):
        problem = f"a time that is not a finite number (ts {ts!r}, dur {dur_field!r})"
    elif dur < 0:
        problem = f"a negative duration (dur {dur_field!r})"
    elif not isinstance(name, str):
        where = f"{cat} event at ts {ts!r}"
        problem = f"no name (name {name!r})"
    else:
        problem = f"a pid or tid that is not a number or string ({ev.pid!r}, {ev.tid!r})"
    return f"{where} has {problem}: not a trace the profiler wrote; re-record it or fix the file"


def _given(value: Any) -> Any:
    """A field as the trace gave it; None where it has none."""
    return None if value is UNSET else value


def _correlate_by_flow(raw: Sequence[ChromeEvent], events: list[Event]) -> None:
    """Give device events that carry no correlation in their args the id of the launch
    flow whose end is bound to them: a second pass, only for traces that need it."""
    ends: dict[tuple[Any, Any, float], int] = {}
    for ev in raw:
        if ev.ph == "f" and ev.cat in _FLOW_CATEGORIES and isinstance(ev.ts, int | float):
            flow = _int(_given(ev.id))
            if flow:
                try:
                    ends[(ev.pid, ev.tid, float(ev.ts))] = flow
                except TypeError:  # an unhashable pid or tid: no flow to bind
                    continue
    for e in events:
        if not e.correlation and e.kind in DEVICE_KINDS:
            e.correlation = ends.get((e.track[0], e.track[1], e.start_us), 0)


# Kineto activity types of device-side spans that are no device work: the GPU timeline's
# copy of a record_function, synchronisation waits, profiler overhead.
_DEVICE_NOT_WORK = frozenset(
    {"gpu_user_annotation", "cuda_sync", "overhead", "cuda_profiler_range"}
)


def events_from_function_events(function_events: Iterable[Any]) -> list[Event]:
    """Events of a live profile (``prof.events()``). Each event's Kineto activity type
    (``fe.activity_type``: the category a saved trace writes) decides its kind, as in
    :func:`events_from_chrome`; without one (older torch), the device type and whether the
    event is linked to an op do."""
    out: list[Event] = []
    for fe in function_events:
        device = getattr(fe.device_type, "name", str(fe.device_type))
        linked = int(getattr(fe, "linked_correlation_id", 0) or 0)
        activity = getattr(fe, "activity_type", None)
        known = _CATEGORY_KIND.get(activity) if isinstance(activity, str) else None
        corr = 0
        if device != "CPU":
            if activity in _DEVICE_NOT_WORK:
                continue
            kind = known if known is not None and known in DEVICE_KINDS else _device_kind(fe.name)
            ext, corr = linked, int(fe.id)
        elif getattr(fe, "is_user_annotation", False):
            kind, ext = ANNOTATION, int(fe.id)
        elif getattr(fe, "is_python_function", False) or getattr(fe, "is_async", False):
            continue
        elif known is RUNTIME or (known is None and linked > 0):
            # The runtime call's own id is the launch correlation its kernels also carry;
            # a launch under no op (Triton, a graph replay) has no linked op but is one.
            kind, ext, corr = RUNTIME, linked, int(fe.id)
        else:
            kind, ext = OP, int(fe.id)
        start = float(fe.time_range.start)
        if device != "CPU":
            stream = int(getattr(fe, "device_resource_id", 0) or 0)
            track: tuple[Any, Any] = (("device", fe.device_index), stream)
        else:
            track = ("host", fe.thread)
        out.append(
            Event(
                name=fe.name,
                kind=kind,
                start_us=start,
                dur_us=float(fe.time_range.end) - start,
                track=track,
                ext_id=ext,
                correlation=corr,
            )
        )
    return out


def events_from_kineto(result: Any) -> list[Event] | None:
    """Events of a host-only live profile read from Kineto's results directly: the events,
    names, times and ids :func:`events_from_function_events` gets from torch's
    ``FunctionEvent``s of the same profile, without building those (most of the time a
    profile took to read back). None where :func:`kineto_nodes` is: read
    ``prof.events()`` then."""
    nodes = kineto_nodes(result)
    if nodes is None:
        return None
    return [
        Event(n.name, n.kind, n.start, n.end - n.start, ("host", n.thread), n.ext_id)
        for n in nodes
        if not n.is_async
    ]


def kineto_nodes(result: Any) -> list[KinetoNode] | None:
    """The events of a host-only profile as torch's parse leaves them (its
    ``EventList``: names it drops, times in µs from the trace's start, parents by time
    containment per thread, an only child named as its parent removed), followed step by
    step from Kineto's results. None where the profile holds what only torch's parse links
    up (device events, events linked to others, Python functions) or this
    torch has no such results."""
    events_of = getattr(result, "events", None)
    if events_of is None:
        return None
    from torch.autograd import profiler_util

    # torch's own renaming (demangling, ProfilerStep#N -> ProfilerStep*), untyped there.
    rewrite: Callable[..., str] = profiler_util._rewrite_name
    start_ns = result.trace_start_ns()
    nodes: list[KinetoNode] = []
    names: dict[str, str] = {}  # torch's rewrite of each name (a demangling), once per name
    for ke in events_of():
        name = ke.name()
        # Memory records are instants, no ops: trace/memory.py reads them on their own.
        if (
            name in _TORCH_FILTERED
            or name in _MEMORY_RECORDS
            or getattr(ke, "is_hidden_event", _no)()
        ):
            continue
        if getattr(ke.device_type(), "name", "") != "CPU" or ke.linked_correlation_id() > 0:
            return None
        activity = getattr(ke, "activity_type", str)()
        if ke.is_python_function() or _CATEGORY_KIND.get(activity) is RUNTIME:
            return None
        thread = ke.start_thread_id()
        shown = names.get(name)
        if shown is None:
            shown = names[name] = rewrite(name=name, with_wildcard=True)
        nodes.append(
            KinetoNode(
                shown,
                (ke.start_ns() - start_ns) / 1000,
                (ke.end_ns() - start_ns) / 1000,
                thread,
                ke.correlation_id(),
                ANNOTATION if ke.is_user_annotation() else OP,
                ke.is_async() or thread != ke.end_thread_id(),
            )
        )
    nodes.sort(key=lambda n: (n.start, -n.end))
    _link(nodes)
    return _without_only_children_named_as_parent(nodes)


# Names torch's parse (autograd.profiler._parse_kineto_results) drops, and the memory
# records it folds into the ops around them (skipped here as well).
_TORCH_FILTERED = frozenset(
    {
        "profiler::_record_function_enter",
        "profiler::_record_function_enter_new",
        "profiler::_record_function_exit",
        "aten::is_leaf",
        "aten::output_nr",
        "aten::_version",
    }
)
_MEMORY_RECORDS = frozenset({"[memory]", "[OutOfMemory]"})
_SKIPPED = _TORCH_FILTERED | _MEMORY_RECORDS


def _no() -> bool:
    return False


@dataclass(eq=False, slots=True)
class KinetoNode:
    """One event of :func:`kineto_nodes`, as much of a ``FunctionEvent`` as is read."""

    name: str
    start: float
    end: float
    thread: int
    ext_id: int
    kind: Kind
    is_async: bool
    parent: KinetoNode | None = None
    children: list[KinetoNode] = field(default_factory=list)

    @property
    def cpu_parent(self) -> KinetoNode | None:
        """``FunctionEvent.cpu_parent``'s name for it (work/counting.py walks it)."""
        return self.parent


def _link(nodes: list[KinetoNode]) -> None:
    """Parents and children as torch's EventList._populate_cpu_children links them: per
    thread, by start and then longest first, a child inside its parent's [start, end)."""
    by_thread: dict[int, list[KinetoNode]] = {}
    for n in nodes:
        if not n.is_async:
            by_thread.setdefault(n.thread, []).append(n)
    for thread_nodes in by_thread.values():
        stack: list[KinetoNode] = []
        for n in thread_nodes:  # already in (start, -end) order
            while stack:
                parent = stack[-1]
                if n.start >= parent.end or n.end > parent.end:
                    stack.pop()
                else:
                    parent.children.append(n)
                    n.parent = parent
                    break
            stack.append(n)


def _without_only_children_named_as_parent(nodes: list[KinetoNode]) -> list[KinetoNode]:
    """torch's EventList._remove_dup_nodes: a node that is its parent's only child and has
    its name goes, its children moving up; repeated until none is left."""
    while True:
        gone: set[int] = set()
        for i, n in enumerate(nodes):
            p = n.parent
            if p is not None and p.name == n.name and len(p.children) == 1:
                p.children = n.children
                for child in n.children:
                    child.parent = p
                gone.add(i)
        if not gone:
            return nodes
        nodes = [n for i, n in enumerate(nodes) if i not in gone]


def _device_kind(name: str) -> Kind:
    low = name.lower()
    if low.startswith("memcpy"):
        return MEMCPY
    if low.startswith("memset"):
        return MEMSET
    return KERNEL


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999, Infinity
        return 0


_START = attrgetter("start_us")
_DUR = attrgetter("dur_us")


def build_tree(events: Sequence[Event]) -> list[Event]:
    """Link host events (ops, annotations, runtime calls) into parent/child trees by time
    containment on each track; returns the roots. Device events stay flat: they are tied
    to host ops by ``ext_id``, not by time."""
    by_track: dict[tuple[Any, Any], list[Event]] = {}
    for ev in events:
        if ev.kind not in DEVICE_KINDS:
            by_track.setdefault(ev.track, []).append(ev)
    return link_tracks(by_track)


def link_tracks(by_track: dict[tuple[Any, Any], list[Event]]) -> list[Event]:
    """:func:`build_tree` of host events already grouped by track (each list is sorted in
    place); links made by an earlier call are replaced."""
    roots: list[Event] = []
    for track_events in by_track.values():
        # Outer events first when two start together, so they become the parent.
        # Two stable sorts (reverse keeps stability) order as the key (start, -dur) would,
        # without a tuple per event.
        track_events.sort(key=_DUR, reverse=True)
        track_events.sort(key=_START)
        stack: list[Event] = []
        # Each open event's end less the tolerance, beside it: computed once, not per child.
        ends: list[float] = []
        for ev in track_events:
            start = ev.start_us
            # A small tolerance: chrome traces round to the ns and children can appear to
            # end a hair after their parent.
            while ends and start >= ends[-1]:
                stack.pop()
                ends.pop()
            if ev.children:  # linked before: a parent precedes its children, so reset here
                ev.children = ()
            if stack:
                parent = ev.parent = stack[-1]
                kids = parent.children
                if isinstance(kids, list):
                    kids.append(ev)
                else:
                    parent.children = [ev]
            else:
                ev.parent = None
                roots.append(ev)
            stack.append(ev)
            ends.append(start + ev.dur_us - 1e-3)
    return roots
