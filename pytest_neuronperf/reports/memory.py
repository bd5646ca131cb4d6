"""How a region's memory reads in every report: the session table's cell, the detail
section's line and the per-op column. Rendering only: the figures are judged in gate/."""

from __future__ import annotations

from ..model import Measurement
from ..units import format_bytes

# Where the figures rest, as a reader sees it.
_SOURCES = {
    "profiler": "the profiler's memory records",
    "allocator": "the device allocator's counters",
}


def memory_cell(m: Measurement) -> str:
    """The peak, ``-`` when memory was not profiled, ``no figure`` when it was asked for
    and could not be had (never 0: the detail says why)."""
    if m.memory is not None:
        return format_bytes(m.memory.peak_bytes)
    return "no figure" if m.memory_note else "-"


def memory_line(m: Measurement) -> str:
    """The detail section's sentence ("" when memory was not profiled)."""
    mem = m.memory
    if mem is None:
        return f"memory: {m.memory_note}" if m.memory_note else ""
    source = _SOURCES.get(mem.source, mem.source)
    return (
        f"memory ({mem.device}, from {source}): peak {format_bytes(mem.peak_bytes)}, "
        f"allocated {format_bytes(mem.allocated_bytes)}, retained "
        f"{format_bytes(mem.retained_bytes)} above the region's start (worst of "
        f"{m.rounds} rounds)"
    )


def op_allocated(m: Measurement, op: str) -> str:
    """The per-op table's cell: bytes the op allocated in the worst round."""
    if m.memory is None:
        return "-"
    return format_bytes(m.memory.op_bytes.get(op, 0))


def extra_rows(m: Measurement, shown: set[str]) -> list[str]:
    """Ops that allocated but have no per-op row (allocations between ops)."""
    if m.memory is None:
        return []
    return [name for name in m.memory.op_bytes if name not in shown]
