"""Memory budgets: peak and retained bytes of a region against ``max_peak_memory`` and
``max_retained_memory``. Exact on CPU (the profiler's records); on devices the allocator's
counters. A region asked for a figure it does not have fails: a limit never passes on
nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import format_bytes, parse_bytes

if TYPE_CHECKING:
    from ..model import Measurement, Memory

# (metric, limit, value or None, sentence): budget.py makes them Violations.
Breach = tuple[str, int, int | None, str]

MEMORY_LIMITS = ("max_peak_memory", "max_retained_memory")


def memory_limit(name: str, value: object) -> int | None:
    """A marker's byte limit; ValueError with the forms accepted."""
    if value is None:
        return None
    try:
        return parse_bytes(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def shown(n: int) -> str:
    """``4.0 MiB (4194304 bytes)``: readable, and exact where a limit is one byte off."""
    return f"{format_bytes(n)} ({n} bytes)" if n >= 1024 else f"{n} bytes"


def memory_breaches(m: Measurement, max_peak: int | None, max_retained: int | None) -> list[Breach]:
    out: list[Breach] = []
    for metric, limit in (("max_peak_memory", max_peak), ("max_retained_memory", max_retained)):
        if limit is None:
            continue
        mem = m.memory
        if mem is None:
            why = m.memory_note or "its memory was not profiled"
            out.append(
                (
                    metric,
                    limit,
                    None,
                    f"neuron_budget: region {m.region!r} has budget {metric}={shown(limit)} "
                    f"but {why}",
                )
            )
            continue
        if metric == "max_peak_memory" and mem.peak_bytes > limit:
            out.append(
                (
                    metric,
                    limit,
                    mem.peak_bytes,
                    f"neuron_budget: region {m.region!r} peaked at {shown(mem.peak_bytes)} "
                    f"allocated above its start, budget {metric}={shown(limit)}",
                )
            )
        if metric == "max_retained_memory" and mem.retained_bytes > limit:
            out.append(
                (
                    metric,
                    limit,
                    mem.retained_bytes,
                    f"neuron_budget: region {m.region!r} left {shown(mem.retained_bytes)} "
                    f"allocated at its end (a leak or a cache), budget {metric}={shown(limit)}",
                )
            )
    return out


# Device allocators round sizes (CUDA: to 512 B) and libraries allocate workspaces as they
# please: a device figure regresses past this share of its baseline (docs/memory.md).
DEVICE_TOLERANCE = 0.01
_PREFIX = "neuronperf baseline"
_KEEP = ": improved, run --neuron-profile-update to keep it"


def op_bytes_diff(before: dict[str, int], after: dict[str, int]) -> str:
    """``+ aten::mul 4.0 MiB, - aten::add 1.0 KiB``: each op whose allocations changed."""
    diff = [(n, after.get(n, 0) - before.get(n, 0)) for n in set(before) | set(after)]
    diff = sorted((d for d in diff if d[1]), key=lambda d: (-d[1], d[0]))
    return ", ".join(f"{'+' if d > 0 else '-'} {n} {format_bytes(abs(d))}" for n, d in diff)


def compare_memory(then: Memory | None, m: Measurement) -> tuple[list[str], list[str], list[str]]:
    """(failures, gains, notes) of a measurement's memory against its baseline entry's.
    Exact where the figures are the profiler's (CPU); on a device allocator's within
    DEVICE_TOLERANCE. Peak and retained bytes are judged; allocated bytes are shown."""
    if then is None:
        return [], [], []
    region = repr(m.region)
    now = m.memory
    if now is None:
        why = m.memory_note or "memory was not profiled"
        return [], [], [f"{_PREFIX}: region {region} memory not compared: {why}"]
    slack = DEVICE_TOLERANCE if "allocator" in (now.source, then.source) else 0.0
    ops = op_bytes_diff(then.op_bytes, now.op_bytes)
    detail = f" ({ops})" if ops else ""
    fails: list[str] = []
    gains: list[str] = []
    for what, a, b in (
        ("peak", now.peak_bytes, then.peak_bytes),
        ("retained", now.retained_bytes, then.retained_bytes),
    ):
        sentence = (
            f"{_PREFIX}: region {region} {what} {format_bytes(a)}, baseline "
            f"{format_bytes(b)}{detail}"
        )
        if a > b + abs(b) * slack:
            fails.append(sentence)
        elif a < b - abs(b) * slack:
            gains.append(sentence + _KEEP)
    return fails, gains, []
