"""The roofline picture: log-log, arithmetic intensity (FLOP/B) against FLOP/s, the
device's compute roof (flat) and memory roof (slope one), one point per region, and per op
on demand, coloured by status."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...model import Record
from ..status import ORDER, colour, status_of
from . import svg

ROOF = svg.INK
W, H = 820, 440
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 16, 46


@dataclass(frozen=True)
class Point:
    label: str
    intensity: float  # FLOP/B
    flops_per_s: float  # achieved
    status: str
    tip: str
    op: bool = False  # a per-op point: drawn hollow and small


@dataclass(frozen=True)
class Roof:
    flops_per_s: float
    bytes_per_s: float
    what: str  # device kind and dtype, for its label

    @property
    def ridge(self) -> float:
        """The intensity where the memory roof meets the compute roof."""
        return self.flops_per_s / self.bytes_per_s


def points(records: Sequence[Record], per_op: bool = False) -> tuple[list[Point], list[str]]:
    """The plottable points, and one line for each region that cannot be drawn."""
    out: list[Point] = []
    left_out: list[str] = []
    for r in records:
        m = r.measurement
        name = f"{m.test_id} [{m.region}]"
        w = m.work
        if w is None:
            left_out.append(f"{name}: FLOPs and bytes not counted (a with-region runs once)")
            continue
        seconds = m.device_us.median * 1e-6
        if w.flops <= 0 or w.bytes_moved <= 0 or not seconds > 0:
            left_out.append(
                f"{name}: {w.flops:,} FLOPs, {w.bytes_moved:,} bytes, "
                f"{m.device_us.median:,.1f} µs: no intensity on a log axis"
            )
            continue
        status = status_of(r)
        achieved = w.flops / seconds
        tip = f"{name}: {w.intensity:.3g} FLOP/B, {svg.si(achieved, 'FLOP/s')}"
        rl = m.roofline
        if rl is not None:
            tip += f" = {rl.fraction * 100:.1f}% of the {rl.bound} roof"
        out.append(Point(m.region, w.intensity, achieved, status, f"{tip} ({status})"))
        if not per_op:
            continue
        device = {row.name: row.device_us for row in m.per_op}
        for o in w.per_op:
            us = device.get(o.name, 0.0)
            if o.flops <= 0 or o.bytes_moved <= 0 or us <= 0:
                continue
            ai, fps = o.flops / o.bytes_moved, o.flops / (us * 1e-6)
            out.append(
                Point(
                    o.name.removeprefix("aten::"),
                    ai,
                    fps,
                    status,
                    f"{name} op {o.name}: {ai:.3g} FLOP/B, {svg.si(fps, 'FLOP/s')}",
                    op=True,
                )
            )
    return out, left_out


def roofs(records: Sequence[Record]) -> list[Roof]:
    seen: dict[tuple[float, float], Roof] = {}
    for r in records:
        m = r.measurement
        if m.peak_flops_per_s > 0 and m.peak_bytes_per_s > 0:
            key = (m.peak_flops_per_s, m.peak_bytes_per_s)
            dtype = m.work.dtype if m.work is not None and m.work.dtype else ""
            what = m.device_kind + (f", {dtype}" if dtype else "")
            seen.setdefault(key, Roof(*key, what))
    return sorted(seen.values(), key=lambda roof: -roof.flops_per_s)


def plot(pts: Sequence[Point], rfs: Sequence[Roof], label: str = "roofline") -> str:
    xs = [p.intensity for p in pts] + [roof.ridge for roof in rfs]
    ys = [p.flops_per_s for p in pts] + [roof.flops_per_s for roof in rfs]
    x_lo, x_hi = svg.decades(xs, pad=3.0)
    y_lo, y_hi = svg.decades(ys, pad=3.0)
    x = svg.LogScale(x_lo, x_hi, LEFT, W - RIGHT)
    y = svg.LogScale(y_lo, y_hi, H - BOTTOM, TOP)
    body = _axes(x, y)
    labels = svg.Labels(W - RIGHT, H - BOTTOM)
    for i, roof in enumerate(rfs):
        body += _roof(roof, x, y, labels, dashed=i > 0)
    # Ops first, then regions best to worst: a failed region is drawn on top of any other
    # at the same spot, and regions get the free label spots first.
    ordered = sorted(pts, key=lambda p: (not p.op, -ORDER.index(p.status)))
    for p in ordered:
        px, py = x(p.intensity), y(p.flops_per_s)
        fill = colour(p.status)
        body.append(
            svg.el(
                "circle",
                svg.title(p.tip),
                class_="op-point" if p.op else "point",
                data_status=p.status,
                data_label=p.label,
                cx=px,
                cy=py,
                r=3.5 if p.op else 6.0,
                fill=svg.PAPER if p.op else fill,
                stroke=fill,
                stroke_width=1.5 if p.op else 1.0,
            )
        )
        labels.reserve((px - 6, py - 6, px + 6, py + 6))
    for c in _clusters(ordered, x, y):
        lx, ly, anchor = labels.place(c.x, c.y, c.text)
        body.append(
            svg.text(
                lx,
                ly,
                c.text,
                text_anchor=anchor,
                fill=svg.MUTED if c.op else svg.INK,
                class_="point-label",
            )
        )
    return svg.svg(W, H, body, label, class_="roofline")


@dataclass
class _Cluster:
    label: str
    x: float
    y: float
    op: bool
    count: int = 1

    @property
    def text(self) -> str:
        return self.label + (f" ×{self.count}" if self.count > 1 else "")


def _clusters(pts: Sequence[Point], x: svg.LogScale, y: svg.LogScale) -> list[_Cluster]:
    """One label per name and spot: the same region from two tests, drawn within a few
    pixels of itself, reads ``rmsnorm_naive ×2`` rather than twice over itself."""
    found: list[_Cluster] = []
    for p in sorted(pts, key=lambda p: p.op):
        px, py = x(p.intensity), y(p.flops_per_s)
        for c in found:
            if c.label == p.label and abs(c.x - px) < 12 and abs(c.y - py) < 12:
                c.count += 1
                break
        else:
            found.append(_Cluster(p.label, px, py, p.op))
    return found


def _axes(x: svg.LogScale, y: svg.LogScale) -> list[str]:
    out = []
    for t in x.ticks():
        px = x(t)
        out.append(svg.el("line", x1=px, y1=TOP, x2=px, y2=H - BOTTOM, stroke=svg.GRID))
        out.append(
            svg.text(
                px,
                H - BOTTOM + 16,
                svg.si(t),
                text_anchor="middle",
                fill=svg.AXIS,
                class_="tick-x",
                data_value=f"{t:g}",
            )
        )
    out += svg.y_grid(y, y.ticks(), LEFT, W - RIGHT, svg.si)
    out.append(svg.frame(LEFT, TOP, W - RIGHT - LEFT, H - BOTTOM - TOP))
    out.append(
        svg.text(
            (LEFT + W - RIGHT) / 2,
            H - 8,
            "arithmetic intensity (FLOP/B, log)",
            text_anchor="middle",
            fill=svg.AXIS,
        )
    )
    mid = (TOP + H - BOTTOM) / 2
    out.append(
        svg.text(
            14,
            mid,
            "attainable FLOP/s (log)",
            text_anchor="middle",
            fill=svg.AXIS,
            transform=f"rotate(-90 14 {mid:.1f})",
        )
    )
    return out


def _roof(
    roof: Roof, x: svg.LogScale, y: svg.LogScale, labels: svg.Labels, dashed: bool
) -> list[str]:
    """Memory roof from the left edge (or the floor) up to the ridge, then the compute
    roof flat to the right edge."""
    start = max(x.lo, y.lo / roof.bytes_per_s)
    x0, y0 = x(start), y(start * roof.bytes_per_s)
    xr, yr = x(roof.ridge), y(roof.flops_per_s)
    x1 = x(x.hi)
    dash = "6 4" if dashed else None
    out = [
        svg.el(
            "line",
            svg.title(f"memory roof: {svg.si(roof.bytes_per_s, 'B/s')} ({roof.what})"),
            class_="roof roof-memory",
            x1=x0,
            y1=y0,
            x2=xr,
            y2=yr,
            stroke=ROOF,
            stroke_width=3,
            stroke_dasharray=dash,
        ),
        svg.el(
            "line",
            svg.title(f"compute roof: {svg.si(roof.flops_per_s, 'FLOP/s')} ({roof.what})"),
            class_="roof roof-compute",
            x1=xr,
            y1=yr,
            x2=x1,
            y2=yr,
            stroke=ROOF,
            stroke_width=3,
            stroke_dasharray=dash,
        ),
    ]
    compute = f"compute {svg.si(roof.flops_per_s, 'FLOP/s')} ({roof.what})"
    cx = x1 - 4
    out.append(svg.text(cx, yr - 7, compute, text_anchor="end", fill=ROOF, class_="roof-label"))
    labels.reserve((cx - len(compute) * svg.CHAR_W, yr - 20, cx, yr + 3))
    angle = math.degrees(math.atan2(yr - y0, xr - x0))
    mx, my = x0 + (xr - x0) * 0.06, y0 + (yr - y0) * 0.06
    memory = f"memory {svg.si(roof.bytes_per_s, 'B/s')}"
    out.append(
        svg.text(
            mx,
            my - 7,
            memory,
            fill=ROOF,
            class_="roof-label",
            transform=f"rotate({angle:.1f} {mx:.1f} {my:.1f})",
        )
    )
    return out
