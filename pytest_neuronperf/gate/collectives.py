"""Collectives judged: the ``max_collectives`` / ``max_comm_bytes`` budgets and the exact
comparison with a baseline entry. Pure: no pytest, no I/O. Budget and compare call these
and wrap what they return in their own verdicts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from statistics import median
from typing import Any

from ..model import Collective, Measurement
from ..trace.collectives import describe, format_bytes, total_bytes, total_calls

# A per-kind budget as the marker keeps it: hashable, sorted by name.
PerKind = tuple[tuple[str, int], ...]


def parse_max_collectives(value: Any) -> int | PerKind | None:
    """A whole number >= 0 for every collective together, or {name: whole number >= 0};
    ValueError with the sentence to show otherwise."""
    if value is None:
        return None
    if _whole(value):
        return int(value)
    if isinstance(value, Mapping) and value:
        out = []
        for name, limit in value.items():
            if not isinstance(name, str) or not name or not _whole(limit):
                break
            out.append((name, int(limit)))
        else:
            return tuple(sorted(out))
    raise ValueError(
        f"max_collectives={value!r}: expected a whole number >= 0, or a dict of collective "
        "name -> whole number >= 0 (e.g. {'all_gather': 2})"
    )


def parse_max_comm_bytes(value: Any) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"max_comm_bytes={value!r}: expected a number of bytes >= 0, e.g. 4e6")
    return value


def describe_limit(limit: int | PerKind) -> str:
    return str(limit) if isinstance(limit, int) else repr(dict(limit))


def where(m: Measurement) -> str:
    """``region 'mlp'``, naming the rank of a distributed region's figures."""
    text = f"region {m.region!r}"
    if m.rank is not None and m.world_size:
        text += f" (rank {m.rank} of {m.world_size})"
    return text


@dataclass(frozen=True)
class Excess:
    metric: str
    limit: float | None
    value: float | None
    sentence: str


def budget_excess(
    max_collectives: int | PerKind | None, max_comm_bytes: float | None, m: Measurement
) -> list[Excess]:
    out: list[Excess] = []
    got = m.collectives
    head = f"neuron_budget: {where(m)}"
    if isinstance(max_collectives, int):
        calls = total_calls(got)
        if calls > max_collectives:
            out.append(
                Excess(
                    "max_collectives",
                    max_collectives,
                    calls,
                    f"{head} made {calls} collectives ({describe(got)}), "
                    f"budget max_collectives={max_collectives}",
                )
            )
    elif max_collectives is not None:
        for name, limit in max_collectives:
            calls = got[name].calls if name in got else 0
            if calls > limit:
                out.append(
                    Excess(
                        "max_collectives",
                        limit,
                        calls,
                        f"{head} made {calls} {name} calls, budget max_collectives="
                        f"{describe_limit(max_collectives)}",
                    )
                )
    if max_comm_bytes is None:
        return out
    unknown = sorted(n for n, c in got.items() if not c.bytes_from)
    if unknown:
        out.append(
            Excess(
                "max_comm_bytes",
                max_comm_bytes,
                None,
                f"{head} has budget max_comm_bytes={max_comm_bytes:g} but the sizes of its "
                f"{', '.join(unknown)} calls are not in the profile (recorded without shapes)",
            )
        )
        return out
    moved = total_bytes(got)
    if moved > max_comm_bytes:
        out.append(
            Excess(
                "max_comm_bytes",
                max_comm_bytes,
                moved,
                f"{head} sent {format_bytes(moved)} ({moved:,} bytes) in collectives "
                f"({describe(got)}), budget max_comm_bytes={max_comm_bytes:g}",
            )
        )
    return out


@dataclass(frozen=True)
class CollectiveDiff:
    """Against a baseline entry: sentences that fail the test, gains, and notes."""

    fails: tuple[str, ...] = ()
    gains: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    changed: bool = False


def diff_text(then: Mapping[str, Collective], now: Mapping[str, Collective]) -> str:
    """``+ all_gather ×1, 4.0 MiB; - broadcast ×1``: calls (and their bytes) per name."""
    parts = []
    for name in sorted(set(then) | set(now)):
        a, b = then.get(name), now.get(name)
        calls = (b.calls if b else 0) - (a.calls if a else 0)
        moved = (b.bytes if b else 0) - (a.bytes if a else 0)
        if calls:
            sign = "+" if calls > 0 else "-"
            size = f", {format_bytes(abs(moved))}" if moved and calls * moved > 0 else ""
            parts.append(f"{sign} {name} ×{abs(calls)}{size}")
        elif moved:
            sign = "+" if moved > 0 else "-"
            parts.append(f"{name} {sign}{format_bytes(abs(moved))}")
    return "; ".join(parts)


def compare_collectives(
    then: Mapping[str, Collective], then_world: int, m: Measurement
) -> CollectiveDiff:
    """Calls and bytes exactly. An entry recorded without a process group (``then_world``
    0: before collectives were counted, or a single-process run) judges none of them; an
    entry of another world size moves bytes by design: noted, not judged."""
    now = m.collectives
    prefix = f"neuronperf baseline: {where(m)}"
    if not m.world_size and not now:
        return CollectiveDiff()
    if not then_world:
        note = (
            f"{prefix} made {total_calls(now)} collectives; the baseline entry counted none "
            "(recorded without a process group): run --neuron-profile-update to judge them"
        )
        return CollectiveDiff(notes=(note,), changed=True)
    if then_world != m.world_size:
        note = (
            f"neuronperf baseline: not comparable: {where(m)} collectives recorded with "
            f"world size {then_world}, now {m.world_size}"
        )
        return CollectiveDiff(notes=(note,), changed=True)
    calls_then, calls_now = total_calls(then), total_calls(now)
    bytes_then, bytes_now = total_bytes(then), total_bytes(now)
    diff = diff_text(then, now)
    if {n: c.calls for n, c in now.items()} != {n: c.calls for n, c in then.items()}:
        sentence = f"{prefix} made {calls_now} collectives, baseline {calls_then} ({diff})"
    else:
        sentence = (
            f"{prefix} sent {format_bytes(bytes_now)} in collectives, baseline "
            f"{format_bytes(bytes_then)} ({diff or 'same calls'})"
        )
    more = calls_now > calls_then or (calls_now == calls_then and bytes_now > bytes_then)
    fewer = calls_now < calls_then or (calls_now == calls_then and bytes_now < bytes_then)
    if more or any(now[n].calls > then[n].calls for n in now if n in then) or set(now) - set(then):
        return CollectiveDiff(fails=(sentence,), changed=True)
    if fewer:
        return CollectiveDiff(
            gains=(sentence + ": improved, run --neuron-profile-update to keep it",), changed=True
        )
    if dict(now) != dict(then):
        return CollectiveDiff(notes=(sentence,), changed=True)
    return CollectiveDiff()


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def flag_stragglers(m: Measurement, tolerance: float) -> Measurement:
    """``m`` with its slowest rank flagged when its device time is beyond ``tolerance`` of
    the median rank's (at least two ranks); unchanged otherwise."""
    if len(m.ranks) < 2:
        return m
    middle = median(r.device_us for r in m.ranks)
    slowest = max(m.ranks, key=lambda r: r.device_us)
    if middle <= 0 or slowest.device_us <= middle * (1 + tolerance):
        return m
    return replace(
        m,
        ranks=tuple(replace(r, straggler=r.rank == slowest.rank) for r in m.ranks),
    )
