"""What a baseline keeps of one measurement, and its strict codec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import Measurement, OpRow
from ..stats import Stats


@dataclass(frozen=True)
class Entry:
    """What a baseline keeps of one measurement."""

    ops: int
    kernels: int
    op_counts: dict[str, int]
    kernel_counts: dict[str, int]
    device_us: Stats
    host_us: Stats
    rounds: int
    environment: dict[str, str] = field(default_factory=dict)
    # Per-op device time, for the HTML report's current-beside-baseline chart. Never
    # compared: the op multiset and the region's samples are what the gate judges.
    per_op: tuple[OpRow, ...] = ()
    # FLOPs and bytes moved of one execution (roofline.py); None when not counted. Compared
    # exactly, like ops: they are deterministic, so any increase is real.
    flops: int | None = None
    bytes_moved: int | None = None
    # The reference workload timed beside each round (reference.py), paired with host_us
    # and device_us samples; None when not timed.
    reference_us: Stats | None = None
    device_reference_us: Stats | None = None
    # Per round, the low decile of the calls' times in reference units (window.py): what the
    # cpu gate judges. None for entries recorded before it existed or without a reference.
    host_relative: Stats | None = None
    # The same two against the dispatch-bound tick (reference.py).
    dispatch_reference_us: Stats | None = None
    host_relative_dispatch: Stats | None = None
    # Recording processes whose rounds the samples hold, oldest first, ``rounds`` each
    # (--neuron-profile-pool, see pooled_with).
    processes: int = 1

    @classmethod
    def of(cls, m: Measurement) -> Entry:
        return cls(
            ops=m.ops,
            kernels=m.kernels,
            op_counts=dict(m.op_counts),
            kernel_counts=dict(m.kernel_counts),
            device_us=m.device_us,
            host_us=m.host_us,
            rounds=m.rounds,
            environment=dict(m.environment),
            per_op=m.per_op,
            flops=m.work.flops if m.work is not None else None,
            bytes_moved=m.work.bytes_moved if m.work is not None else None,
            reference_us=m.reference_us,
            device_reference_us=m.device_reference_us,
            host_relative=m.host_relative,
            dispatch_reference_us=m.dispatch_reference_us,
            host_relative_dispatch=m.host_relative_dispatch,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ops": self.ops,
            "kernels": self.kernels,
            "op_counts": dict(sorted(self.op_counts.items())),
            "kernel_counts": dict(sorted(self.kernel_counts.items())),
            "device_us": self.device_us.to_dict(),
            "host_us": self.host_us.to_dict(),
            "rounds": self.rounds,
            "environment": dict(sorted(self.environment.items())),
            **({"flops": self.flops} if self.flops is not None else {}),
            **({"bytes_moved": self.bytes_moved} if self.bytes_moved is not None else {}),
            **_optional_stats("reference_us", self.reference_us),
            **_optional_stats("device_reference_us", self.device_reference_us),
            **_optional_stats("host_relative", self.host_relative),
            **_optional_stats("dispatch_reference_us", self.dispatch_reference_us),
            **_optional_stats("host_relative_dispatch", self.host_relative_dispatch),
            # Left out for one process, so that entries from before pooling keep their bytes.
            **({"processes": self.processes} if self.processes != 1 else {}),
            "per_op": {
                r.name: {"calls": r.calls, "device_us": round(r.device_us, 3)} for r in self.per_op
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Entry:
        if not isinstance(d, Mapping):
            raise ValueError("expected an object")
        return cls(
            ops=_count(d, "ops"),
            kernels=_count(d, "kernels"),
            op_counts=_counts(d, "op_counts"),
            kernel_counts=_counts(d, "kernel_counts"),
            device_us=_stats(d, "device_us"),
            host_us=_stats(d, "host_us"),
            rounds=_count(d, "rounds"),
            environment={str(k): str(v) for k, v in _mapping(d, "environment").items()},
            per_op=_per_op(d.get("per_op", {})),
            flops=_count(d, "flops") if "flops" in d else None,
            bytes_moved=_count(d, "bytes_moved") if "bytes_moved" in d else None,
            reference_us=_reference(d, "reference_us"),
            device_reference_us=_reference(d, "device_reference_us"),
            host_relative=_reference(d, "host_relative"),
            dispatch_reference_us=_reference(d, "dispatch_reference_us"),
            host_relative_dispatch=_reference(d, "host_relative_dispatch"),
            processes=_processes(d),
        )

    def pooled_with(self, new: Entry, cap: int) -> Entry | None:
        """This entry's rounds and ``new``'s as one baseline spanning their recording
        processes, keeping the newest ``cap`` processes; None when the two do not measure
        the same thing (counts, work, environment, rounds or the figures kept differ), so
        that ``new`` replaces this one instead.

        Why: a process keeps an offset of its own, measured here at up to ±10% for one
        region, so a baseline from one process is one draw of it, and every later verdict
        moves by as much. The rounds are concatenated, not averaged: the median then sits
        among the processes, and the bootstrap interval of the baseline widens by how far
        they disagree."""
        if (
            self.ops != new.ops
            or self.kernels != new.kernels
            or self.op_counts != new.op_counts
            or self.kernel_counts != new.kernel_counts
            or self.rounds != new.rounds
            or self.environment != new.environment
            or (self.flops, self.bytes_moved) != (new.flops, new.bytes_moved)
            or new.processes != 1
            or cap < 2
        ):
            return None
        keep = min(self.processes, cap - 1)
        merged: dict[str, Stats | None] = {}
        for name in SAMPLED:
            old, now = getattr(self, name), getattr(new, name)
            if (old is None) != (now is None):
                return None
            if old is None or now is None:
                merged[name] = None
                continue
            if old.n != self.processes * self.rounds or now.n != new.rounds:
                # Rounds that do not split into processes cannot be dropped oldest first.
                return None
            merged[name] = Stats(old.samples[(self.processes - keep) * self.rounds :] + now.samples)
        return replace(new, processes=keep + 1, **merged)  # type: ignore[arg-type]


def _mapping(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = d.get(key, {})
    if not isinstance(value, Mapping):
        raise ValueError(f"{key} must be an object")
    return value


def _count(d: Mapping[str, Any], key: str) -> int:
    return _whole(d[key], key)


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    return value


def _counts(d: Mapping[str, Any], key: str) -> dict[str, int]:
    return {str(k): _whole(v, f"{key}[{k!r}]") for k, v in _mapping(d, key).items()}


def _stats(d: Mapping[str, Any], key: str) -> Stats:
    value = _mapping(d, key)
    samples = value.get("samples")
    if not isinstance(samples, list) or not all(
        isinstance(s, int | float) and not isinstance(s, bool) for s in samples
    ):
        raise ValueError(f"{key}.samples must be a list of numbers")
    return Stats.of(samples)


def _per_op(d: Any) -> tuple[OpRow, ...]:
    if not isinstance(d, Mapping):
        raise ValueError("'per_op' must be an object of op name -> {calls, device_us}")
    rows = []
    for name, row in d.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"'per_op' entry {name!r} must be an object")
        rows.append(
            OpRow(str(name), float(row.get("calls", 0)), float(row.get("device_us", 0)), 0.0)
        )
    return tuple(rows)


# The Entry fields that hold one sample per round, pooled by Entry.pooled_with.
SAMPLED = (
    "device_us",
    "host_us",
    "reference_us",
    "device_reference_us",
    "host_relative",
    "dispatch_reference_us",
    "host_relative_dispatch",
)


def _processes(d: Mapping[str, Any]) -> int:
    value = d.get("processes", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"processes must be a whole number >= 1, got {value!r}")
    return value


def _optional_stats(key: str, stats: Stats | None) -> dict[str, Any]:
    return {key: stats.to_dict()} if stats is not None else {}


def _reference(d: Mapping[str, Any], key: str) -> Stats | None:
    if key not in d:
        return None
    stats = _stats(d, key)
    # Rounds are divided by these: a zero or negative one is a damaged file.
    if not stats.samples or any(not v > 0 for v in stats.samples):
        raise ValueError(f"{key} samples must all be > 0")
    return stats
