"""A distributed region's collectives as text: the table the terminal detail and
``neuronperf report`` show, and the per-rank lines."""

from __future__ import annotations

from html import escape
from statistics import median

from ..model import Measurement
from ..trace.collectives import format_bytes
from ..words import counted
from .charts import svg
from .terminal import tabulate

COMPUTE = svg.DEVICE
COMM = svg.AMBER

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
            f"rank {r.rank}: {counted(r.ops, 'op')}, {counted(r.collectives, 'collective')}, "
            f"{format_bytes(r.comm_bytes)}, device {r.device_us:,.1f} µs, "
            f"host {r.host_us:,.1f} µs (medians)"
        )
    if straggler_text(m):
        lines.append(straggler_text(m))
    return lines


def rank_view_html(m: Measurement) -> str:
    """Each rank's device time as compute and exposed communication, one bar a rank on
    a common scale, the straggler flagged; "" for a region of one process."""
    if not m.ranks:
        return ""
    widest = max((r.compute_us + r.comm_us for r in m.ranks), default=0.0) or 1.0
    rows = []
    for r in m.ranks:
        compute = 100 * r.compute_us / widest
        comm = 100 * r.comm_us / widest
        flag = ' <b class="added">straggler</b>' if r.straggler else ""
        row_class = ' class="problem"' if r.straggler else ""
        rows.append(
            f"<tr{row_class}><td>rank {r.rank}{flag}</td>"
            f'<td class="num">{r.compute_us:,.1f}</td><td class="num">{r.comm_us:,.1f}</td>'
            f'<td class="num">{r.collectives}</td><td class="num">'
            f"{escape(format_bytes(r.comm_bytes))}</td>"
            f'<td><div style="display:flex;height:12px">'
            f'<div class="rank-compute" title="compute" '
            f'style="width:{compute:.2f}%;background:{COMPUTE}"></div>'
            f'<div class="rank-comm" title="exposed communication" style="width:{comm:.2f}%;'
            f'background:{COMM}"></div></div></td></tr>'
        )
    note = straggler_text(m)
    return (
        f'<p class="legend">per rank (world size {m.world_size}): device time as'
        f'<span style="background:{COMPUTE}"></span>compute'
        f'<span style="background:{COMM}"></span>exposed communication</p>'
        '<table class="ranks"><tr><th>rank</th><th class="num">compute µs</th>'
        '<th class="num">exposed comm µs</th><th class="num">collectives</th>'
        '<th class="num">bytes</th><th></th></tr>'
        + "".join(rows)
        + "</table>"
        + (f'<p class="note">{escape(note)}</p>' if note else "")
    )


def _shown(name: str) -> str:
    # Names come from the trace: control characters never reach the terminal.
    return name if name.isprintable() else ascii(name)


def straggler_text(m: Measurement) -> str:
    """A rank gate/collectives.py flagged, in words:
    ``rank 1 is a straggler: 812.0 µs of device time, +95% over the median rank``."""
    flagged = [r for r in m.ranks if r.straggler]
    if not flagged:
        return ""
    middle = median(r.device_us for r in m.ranks)
    r = flagged[0]
    return (
        f"rank {r.rank} is a straggler: {r.device_us:,.1f} µs of device time, "
        f"{(r.device_us / middle - 1) * 100:+.0f}% over the median rank ({middle:,.1f} µs)"
    )
