"""A region's memory over its ops: a step line of the bytes allocated above the region's
start, one stretch per op (or the time between ops) in the order they ran, rising to the
highest level reached in it and ending where it left the level; the peak as a dashed rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ...model import MemoryStep
from ...names import elide
from ...units import format_bytes
from . import svg

LINE = svg.VIOLET
PEAK = svg.WORSE
LEFT, TOP, PLOT_W, PLOT_H, BOTTOM = 78, 14, 380, 150, 74
# Widest op label under the axis, in characters.
LABEL_CHARS = 18


def step_points(steps: Sequence[MemoryStep]) -> list[tuple[int, int]]:
    """(stretch index, level) corners of the step line: each stretch starts at the level
    the one before it ended, rises to its high at once and ends at its end level."""
    points: list[tuple[int, int]] = [(0, 0)]
    level = 0
    for i, s in enumerate(steps):
        points += [(i, level), (i, s.high), (i + 1, s.high), (i + 1, s.end)]
        level = s.end
    return points


def chart(steps: Sequence[MemoryStep], peak: int) -> str:
    """The step line of one region's worst round; "" when it allocated nothing."""
    if not steps:
        return ""
    lows = [0, *(s.end for s in steps)]
    lo, hi = min(lows), max(peak, *(s.high for s in steps), 1)
    x = svg.LinearScale(0, len(steps), LEFT, LEFT + PLOT_W)
    y = svg.LinearScale(lo, hi, TOP + PLOT_H, TOP)
    body = [svg.frame(LEFT, TOP, PLOT_W, PLOT_H)]
    for tick in sorted({lo, 0, hi}):
        body.append(svg.text(LEFT - 4, y(tick) + 4, format_bytes(tick), text_anchor="end"))
    for i, s in enumerate(steps):
        mid = (x(i) + x(i + 1)) / 2
        label = elide(s.op, LABEL_CHARS)
        body.append(
            svg.el(
                "text",
                escape(label) + svg.title(s.op),
                x=mid,
                y=TOP + PLOT_H + 10,
                font_size=10,
                text_anchor="end",
                transform=f"rotate(-35 {mid:.1f} {TOP + PLOT_H + 10})",
            )
        )
    pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in step_points(steps))
    body.append(
        svg.el(
            "polyline",
            svg.title(f"allocated above the region's start; peak {format_bytes(peak)}"),
            points=pts,
            fill="none",
            stroke=LINE,
            stroke_width=2,
            class_="memory-steps",
        )
    )
    body.append(
        svg.el(
            "line",
            svg.title(f"peak {format_bytes(peak)}"),
            x1=LEFT,
            x2=LEFT + PLOT_W,
            y1=y(peak),
            y2=y(peak),
            stroke=PEAK,
            stroke_dasharray="5 3",
            class_="memory-peak",
        )
    )
    body.append(svg.text(LEFT + PLOT_W - 2, y(peak) - 4, f"peak {format_bytes(peak)}",
                         text_anchor="end", fill=PEAK))  # fmt: skip
    width, height = LEFT + PLOT_W + 12, TOP + PLOT_H + BOTTOM
    return svg.svg(width, height, body, "memory over the region's ops", class_="memory")
