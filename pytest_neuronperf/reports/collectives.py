"""A distributed region's collectives as text: the table the terminal detail and
``neuronperf report`` show, and the per-rank lines."""

from __future__ import annotations

from ..model import Measurement
from ..trace.collectives import format_bytes
from .terminal import tabulate

_FROM = {"message": "message sizes", "shapes": "input shapes", "": "unknown"}


def collective_lines(m: Measurement) -> list[str]:
    """Nothing for a region that made no collective and ran no communication kernel."""
    if not m.collectives and m.comm is None:
        return []
    world = f", world size {m.world_size}" if m.world_size else ""
    rank = f", figures of rank {m.rank}" if m.rank is not None else ""
    lines = [f"collectives a round (the worst of {m.rounds}{world}{rank}):"]
    rows = [
        [
            _shown(name),
            c.calls,
            format_bytes(c.bytes) if c.bytes_from else "?",
            c.group_size or "?",
            _FROM.get(c.bytes_from, c.bytes_from),
        ]
        for name, c in sorted(m.collectives.items())
    ]
    if rows:
        lines.append(
            tabulate(rows, headers=["collective", "calls", "bytes", "group", "bytes from"])
        )
    comm = m.comm
    if comm is not None:
        lines += [
            f"communication kernels: {comm.kernels} a round, {comm.kernel_us.median:,.1f} µs "
            f"(busy {comm.busy_us.median:,.1f} µs);",
            f"  compute busy {comm.compute_us.median:,.1f} µs, exposed communication "
            f"{comm.exposed_us.median:,.1f} µs (medians)",
        ]
    for r in m.ranks:
        lines.append(
            f"rank {r.rank}: {r.ops} ops, {r.collectives} collectives, "
            f"{format_bytes(r.comm_bytes)}, device {r.device_us:,.1f} µs, "
            f"host {r.host_us:,.1f} µs (medians)"
        )
    return lines


def _shown(name: str) -> str:
    # Names come from the trace: control characters never reach the terminal.
    return name if name.isprintable() else ascii(name)
