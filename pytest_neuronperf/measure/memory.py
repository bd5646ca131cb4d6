"""A region's memory per round from what the backend has: the device allocator's counters
over the profiler's memory records where it has counters, the records alone elsewhere,
and a sentence instead of a figure where neither saw anything (never 0 bytes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..backends.memory import AllocatorFigures
from ..trace.analysis import Mode, RoundResult
from ..trace.memory import RoundMemory
from ..units import format_bytes


def settle_memory(
    rounds: Sequence[RoundResult],
    markers: Sequence[str],
    allocator: Mapping[str, AllocatorFigures],
    *,
    mode: Mode,
    device: str,
    why_no_counters: str = "",
) -> tuple[str, tuple[str, ...]]:
    """Puts each round's memory in place; returns (why there is no figure or "", notes on
    how the two sources agreed)."""
    notes: list[str] = []
    for marker, r in zip(markers, rounds, strict=True):
        counted = allocator.get(marker)
        if counted is not None:
            r.memory = _from_allocator(counted, r.memory, device, notes)
    if allocator or mode == "host":
        return "", tuple(dict.fromkeys(notes))
    if any(r.memory is not None and r.memory.records for r in rounds):
        return "", ()
    for r in rounds:
        r.memory = None
    return (
        f"no memory figure: {why_no_counters or 'no allocator counters'}, and the profiler "
        f"recorded no {device} memory event in the region",
        (),
    )


def _from_allocator(
    counted: AllocatorFigures, recorded: RoundMemory | None, device: str, notes: list[str]
) -> RoundMemory:
    """The allocator's figures, with the per-op bytes and steps of the profiler's records."""
    seen = recorded is not None and recorded.records > 0
    allocated = counted.allocated_bytes
    if allocated is None:
        if seen and recorded is not None:
            allocated = recorded.allocated_bytes
        else:
            allocated = counted.peak_bytes
            notes.append(
                "memory: the allocator keeps no running total and the profiler recorded no "
                "allocation, so allocated bytes show the peak (a lower bound)"
            )
    base = recorded if seen and recorded is not None else RoundMemory()
    if seen and recorded is not None and recorded.peak_bytes != counted.peak_bytes:
        notes.append(
            f"memory: the allocator's peak {format_bytes(counted.peak_bytes)}, the profiler's "
            f"memory records {format_bytes(recorded.peak_bytes)} (the allocator's is gated)"
        )
    return replace(
        base,
        peak_bytes=counted.peak_bytes,
        allocated_bytes=allocated,
        retained_bytes=counted.retained_bytes,
        source="allocator",
        device=device,
    )
