"""Collectives of a region: calls, bytes and communication-kernel time. Pure, no torch.

A collective is the process-group backend's own annotation (``nccl:all_reduce``,
``gloo:all_gather``, ``nccl:_all_gather_base``): one per call, also where no ``c10d::`` op
wraps it (HTA's all_to_all calls). Its name is the annotation's without the backend prefix.
Its bytes are the rank's input message: ``In msg nelems`` times the ``dtype`` size of the
``record_param_comms`` op around it where the trace has them ("message"), else the
annotation's own input shapes and types ("shapes"; gloo records only these, and only with
``record_shapes``). A region holds the calls that start inside its time span in its
process, on any thread (gloo runs its calls on worker threads). Communication kernels are
the device kernels named ``nccl*`` (NCCL and RCCL) the region launched; the rest of its
device work is compute, and exposed communication is the time only communication ran.
See docs/distributed.md.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Collective, CommTime
from ..stats import Stats
from .device import busy_us
from .events import KERNEL, Event

BACKEND_PREFIXES = ("nccl:", "gloo:", "ucc:", "mpi:", "xccl:")
PARAM_COMMS = "record_param_comms"
COMM_KERNEL_PREFIX = "nccl"

# Bytes per element of the dtype names Kineto writes: c10 names in record_param_comms
# (``BFloat16``), C++ names in Input type (``c10::BFloat16``, ``float``, ``long int``).
DTYPE_BYTES: dict[str, int] = {
    "float": 4, "Float": 4, "double": 8, "Double": 8,
    "c10::Half": 2, "Half": 2, "c10::BFloat16": 2, "BFloat16": 2,
    "long int": 8, "long": 8, "Long": 8, "int64_t": 8, "int": 4, "Int": 4,
    "short int": 2, "short": 2, "Short": 2,
    "signed char": 1, "Char": 1, "unsigned char": 1, "Byte": 1, "bool": 1, "Bool": 1,
    "c10::Float8_e4m3fn": 1, "Float8_e4m3fn": 1, "c10::Float8_e5m2": 1, "Float8_e5m2": 1,
    "c10::complex<float>": 8, "ComplexFloat": 8, "c10::complex<double>": 16,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Call:
    """One collective call as the trace shows it."""

    name: str
    start_us: float
    end_us: float
    process: Any
    bytes: int | None
    bytes_from: str  # "message", "shapes" or "" (unknown)
    group_size: int


def collective_name(annotation: str) -> str | None:
    """``all_reduce`` for ``nccl:all_reduce``; None for any other annotation."""
    for prefix in BACKEND_PREFIXES:
        if annotation.startswith(prefix) and len(annotation) > len(prefix):
            return annotation[len(prefix) :]
    return None


def calls_from_chrome(doc: Any, group_size: int = 0) -> list[Call]:
    """Every collective call of a parsed chrome trace, by start time. ``group_size``: the
    process group's size where the trace does not say (a live run knows it)."""
    raw = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(raw, list):
        return []
    annotations: list[dict[str, Any]] = []
    params: dict[tuple[Any, Any], list[tuple[float, float, dict[str, Any]]]] = {}
    for ev in raw:
        if not isinstance(ev, dict):
            continue
        # The name first: it rules out nearly every event of a trace for one lookup.
        name = ev.get("name")
        if not isinstance(name, str) or (
            name != PARAM_COMMS and not name.startswith(BACKEND_PREFIXES)
        ):
            continue
        cat = ev.get("cat")
        if ev.get("ph") != "X" or not isinstance(cat, str) or not _timed(ev):
            continue
        if cat.lower() == "user_annotation" and collective_name(name) is not None:
            annotations.append(ev)
        elif name == PARAM_COMMS and isinstance(ev.get("args"), dict):
            start = float(ev["ts"])
            params.setdefault(_track(ev), []).append(
                (start, start + float(ev.get("dur", 0.0)), ev["args"])
            )
    for spans in params.values():
        spans.sort(key=lambda s: s[0])
    calls = [_call(ev, params.get(_track(ev), []), group_size) for ev in annotations]
    calls.sort(key=lambda c: c.start_us)
    return calls


def _timed(ev: Mapping[str, Any]) -> bool:
    ts, dur = ev.get("ts"), ev.get("dur", 0.0)
    return (
        isinstance(ts, int | float)
        and not isinstance(ts, bool)
        and isinstance(dur, int | float)
        and not isinstance(dur, bool)
        and dur >= 0
    )


def _track(ev: Mapping[str, Any]) -> tuple[Any, Any]:
    pid, tid = ev.get("pid"), ev.get("tid")
    return (
        pid if isinstance(pid, int | str) else None,
        tid if isinstance(tid, int | str) else None,
    )


def _call(
    ev: dict[str, Any], spans: Sequence[tuple[float, float, dict[str, Any]]], group_size: int
) -> Call:
    start = float(ev["ts"])
    args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
    assert isinstance(args, dict)
    size, source = None, ""
    param = _enclosing(spans, start)
    if param is not None:
        size = _message_bytes(param)
        group = param.get("Group size")
        if isinstance(group, int) and not isinstance(group, bool) and group > 0:
            group_size = group
    if size is not None:
        source = "message"
    else:
        size = _shape_bytes(args)
        source = "shapes" if size is not None else ""
    name = collective_name(str(ev["name"]))
    assert name is not None
    return Call(
        name, start, start + float(ev.get("dur", 0.0)), _track(ev)[0], size, source, group_size
    )


def _enclosing(
    spans: Sequence[tuple[float, float, dict[str, Any]]], start: float
) -> dict[str, Any] | None:
    """The innermost record_param_comms on the annotation's thread around its start."""
    i = bisect_right([s[0] for s in spans], start)
    for lo, hi, args in reversed(spans[:i]):
        if lo <= start <= hi:
            found: dict[str, Any] = args
            return found
    return None


def _message_bytes(args: Mapping[str, Any]) -> int | None:
    nelems, dtype = args.get("In msg nelems"), args.get("dtype")
    if not isinstance(nelems, int) or isinstance(nelems, bool) or not isinstance(dtype, str):
        return None
    width = DTYPE_BYTES.get(dtype)
    return None if width is None else nelems * width


def _shape_bytes(args: Mapping[str, Any]) -> int | None:
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or not dims:
        return None
    total = 0
    for shape, dtype in zip(dims, types, strict=False):
        width = DTYPE_BYTES.get(dtype) if isinstance(dtype, str) else None
        n = _numel(shape)
        if width is None or n is None:
            return None
        total += n * width
    return total


def _numel(shape: Any) -> int | None:
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


def calls_in(node: Event, calls: Sequence[Call]) -> list[Call]:
    """The calls starting inside ``node``'s span, in its process, on any thread."""
    lo, hi = node.start_us, node.end_us + 1e-3
    pid = node.track[0]
    starts = [c.start_us for c in calls]
    i = bisect_right(starts, lo - 1e-9)
    out = []
    for c in calls[i:]:
        if c.start_us > hi:
            break
        if c.process == pid:
            out.append(c)
    return out


def count(calls: Iterable[Call]) -> dict[str, Collective]:
    """Calls, bytes and group size per collective name; bytes 0 where any call's is unknown."""
    out: dict[str, Collective] = {}
    for c in calls:
        had = out.get(c.name)
        if had is None:
            out[c.name] = Collective(1, c.bytes or 0, c.group_size, c.bytes_from)
            continue
        known = had.bytes_from != "" and c.bytes_from != ""
        out[c.name] = Collective(
            had.calls + 1,
            had.bytes + (c.bytes or 0) if known else 0,
            max(had.group_size, c.group_size),
            (had.bytes_from if had.bytes_from == c.bytes_from else "message+shapes")
            if known
            else "",
        )
    return out


def worst_round(rounds: Sequence[Mapping[str, Collective]]) -> dict[str, Collective]:
    """The round with the most calls (then bytes): budgets see the worst, as for ops."""
    if not rounds:
        return {}
    worst: Mapping[str, Collective] = max(rounds, key=lambda r: (total_calls(r), total_bytes(r)))
    return dict(worst)


def total_calls(collectives: Mapping[str, Collective]) -> int:
    return sum(c.calls for c in collectives.values())


def total_bytes(collectives: Mapping[str, Collective]) -> int:
    return sum(c.bytes for c in collectives.values())


def is_comm_kernel(e: Event) -> bool:
    return e.kind is KERNEL and e.name.startswith(COMM_KERNEL_PREFIX)


@dataclass(frozen=True, slots=True)
class RoundComm:
    kernel_us: float
    busy_us: float
    compute_us: float
    exposed_us: float
    kernels: int


def round_comm(device_events: Sequence[Event]) -> RoundComm:
    """Communication kernels' time (sum and busy) beside the compute's busy time, and the
    exposed communication: the time the device ran communication and nothing else."""
    comm = [e for e in device_events if is_comm_kernel(e)]
    if not comm:  # nothing communicated: all of it is compute, none exposed
        return RoundComm(0.0, 0.0, busy_us(device_events), 0.0, 0)
    compute = [e for e in device_events if not is_comm_kernel(e)]
    compute_busy = busy_us(compute)
    return RoundComm(
        kernel_us=sum(e.dur_us for e in comm),
        busy_us=busy_us(comm),
        compute_us=compute_busy,
        exposed_us=max(0.0, busy_us(device_events) - compute_busy),
        kernels=len(comm),
    )


def comm_time(rounds: Sequence[RoundComm]) -> CommTime | None:
    """Over rounds; None when no round ran a communication kernel (host-only traces)."""
    if not any(r.kernels for r in rounds):
        return None
    return CommTime(
        kernels=max(r.kernels for r in rounds),
        kernel_us=Stats.of([r.kernel_us for r in rounds]),
        busy_us=Stats.of([r.busy_us for r in rounds]),
        compute_us=Stats.of([r.compute_us for r in rounds]),
        exposed_us=Stats.of([r.exposed_us for r in rounds]),
    )


def describe(collectives: Mapping[str, Collective]) -> str:
    """``all_reduce ×2 (16.0 KiB), all_gather ×1 (8.0 KiB)``."""
    return ", ".join(
        f"{name} ×{c.calls}" + (f" ({format_bytes(c.bytes)})" if c.bytes_from else "")
        for name, c in sorted(collectives.items())
    )


def format_bytes(n: float) -> str:
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"
