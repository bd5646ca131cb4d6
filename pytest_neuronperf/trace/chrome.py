"""A Kineto chrome trace as typed records holding only the fields the analysis reads.

msgspec decodes a trace's bytes straight into these, skipping every other field: less
than half the time of a parse into dicts and a fraction of the memory (docs/cost.md,
"Parsing and analysis"). The few events read in full (collectives, memory records) are
kept whole, as json parses them. A document msgspec refuses (NaN literals, numbers past
a double, events or args that are not objects, a bare event array) is parsed by json as
before and converted, so every trace reads the same either way and json words the errors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..errors import NeuronPerfError


class TraceError(NeuronPerfError, ValueError):
    """A trace that cannot be read; the message names the file and what is wrong."""


class ChromeArgs(msgspec.Struct, gc=False):
    """An event's ``args``: the ids tying launches, kernels and ops together."""

    ext: Any = msgspec.field(default=0, name="External id")
    corr: Any = msgspec.field(default=0, name="correlation")


class ChromeEvent(msgspec.Struct, gc=False):
    """One entry of ``traceEvents``; a field the event lacks is UNSET, or None for the
    name, pid and tid, which the readers treat as null when absent."""

    ph: Any = UNSET
    cat: Any = UNSET
    name: Any = None
    ts: Any = UNSET
    dur: Any = UNSET
    pid: Any = None
    tid: Any = None
    id: Any = UNSET
    args: ChromeArgs | UnsetType | None = UNSET


@dataclass(frozen=True, eq=False)
class ChromeDoc:
    events: list[ChromeEvent]
    schema_version: Any = None
    device_properties: Any = None
    distributed_info: Any = None
    # The events named with one of the prefixes asked for, in trace order, whole.
    whole: tuple[dict[str, Any], ...] = ()


class _Wire(msgspec.Struct):
    traceEvents: list[ChromeEvent]
    schemaVersion: Any = None
    deviceProperties: Any = None
    distributedInfo: Any = None


class _Entries(msgspec.Struct):
    traceEvents: list[msgspec.Raw]


_DECODER = msgspec.json.Decoder(_Wire)
_ENTRIES = msgspec.json.Decoder(_Entries)


def decode_chrome(data: bytes, source: str, whole: tuple[str, ...] = ()) -> ChromeDoc:
    """The trace in ``data``, its events named with a prefix in ``whole`` also kept whole.
    json.JSONDecodeError and the like as ``json.loads`` raises them for what is not JSON,
    TraceError for JSON that is no chrome trace."""
    try:
        wire = _DECODER.decode(data)
    except msgspec.DecodeError:
        return as_chrome(json.loads(data), source, whole)
    positions = _named(wire.traceEvents, whole)
    # A second, shallow pass over the bytes only when some event is wanted whole.
    entries = _ENTRIES.decode(data).traceEvents if positions else []
    return ChromeDoc(
        wire.traceEvents,
        wire.schemaVersion,
        wire.deviceProperties,
        wire.distributedInfo,
        tuple(msgspec.json.decode(entries[i]) for i in positions),
    )


def as_chrome(doc: Any, source: str, whole: tuple[str, ...] = ()) -> ChromeDoc:
    """A parsed chrome trace (the dict or bare event array ``json.load`` gives) as records.
    Entries that are not objects are dropped and ``args`` that are not objects read as
    absent, as the readers treated them when they walked the dicts."""
    if isinstance(doc, list):
        raw, top = doc, {}
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        raw, top = doc["traceEvents"], doc
    else:
        raise TraceError(f"{source}: not a chrome trace (no 'traceEvents' list)")
    entries = [ev for ev in raw if isinstance(ev, dict)]
    events = [_as_event(ev) for ev in entries]
    return ChromeDoc(
        events,
        top.get("schemaVersion"),
        top.get("deviceProperties"),
        top.get("distributedInfo"),
        tuple(entries[i] for i in _named(events, whole)),
    )


def _named(events: Sequence[ChromeEvent], prefixes: tuple[str, ...]) -> list[int]:
    """Positions of the events whose name starts with one of ``prefixes``."""
    if not prefixes:
        return []
    first = frozenset(p[:1] for p in prefixes)  # rules out nearly every name in one lookup
    return [
        i
        for i, ev in enumerate(events)
        if (name := ev.name).__class__ is str and name[:1] in first and name.startswith(prefixes)
    ]


def _as_event(ev: dict[str, Any]) -> ChromeEvent:
    args = ev.get("args", UNSET)
    return ChromeEvent(
        ph=ev.get("ph", UNSET),
        cat=ev.get("cat", UNSET),
        name=ev.get("name"),
        ts=ev.get("ts", UNSET),
        dur=ev.get("dur", UNSET),
        pid=ev.get("pid"),
        tid=ev.get("tid"),
        id=ev.get("id", UNSET),
        args=(
            ChromeArgs(args.get("External id", 0), args.get("correlation", 0))
            if isinstance(args, dict)
            else UNSET
        ),
    )
