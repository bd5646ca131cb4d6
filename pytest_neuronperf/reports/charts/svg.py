"""Inline-SVG building blocks: elements, linear and log scales, ticks, label placement.

Plain strings, no library: the report must open from an artifact store with no network,
and a few hundred lines of SVG need no more than this."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

FONT = 11
# Width of one character of the 11 px system sans, on average: for label boxes only.
CHAR_W = 6.2
# The palette, written once: charts and the HTML report's own marks use these.
AXIS = "#374151"
GRID = "#e5e7eb"
MUTED = "#6b7280"
INK = "#111827"
PAPER = "#ffffff"
DEVICE = "#2563eb"  # device time, and the current run against its baseline
HOST = "#0d9488"
FAINT = "#9ca3af"  # the baseline
SLATE = "#475569"  # op counts
BETTER = "#15803d"
WORSE = "#dc2626"
VIOLET = "#7c3aed"  # memory
AMBER = "#f59e0b"  # communication


def attrs(**kv: object) -> str:
    """``fill_opacity=0.5`` -> ``fill-opacity="0.5"``; None values are left out."""
    out = []
    for k, v in kv.items():
        if v is None:
            continue
        name = k.rstrip("_").replace("_", "-")
        text = f"{v:.1f}" if isinstance(v, float) else str(v)
        out.append(f'{name}="{escape(text)}"')
    return " ".join(out)


def el(tag: str, content: str = "", **kv: object) -> str:
    a = attrs(**kv)
    head = f"<{tag} {a}" if a else f"<{tag}"
    return f"{head}>{content}</{tag}>" if content else f"{head}/>"


def frame(left: float, top: float, width: float, height: float) -> str:
    """The outline of a chart's plotting area."""
    return el("rect", x=left, y=top, width=width, height=height, fill="none", stroke=AXIS)


def text(x: float, y: float, label: str, **kv: object) -> str:
    kv.setdefault("font_size", FONT)
    return el("text", escape(label), x=x, y=y, **kv)


def title(label: str) -> str:
    """A tooltip: the browser shows it on hover, no script needed."""
    return f"<title>{escape(label)}</title>"


def svg(width: float, height: float, body: Sequence[str], label: str, **kv: object) -> str:
    head = attrs(
        xmlns="http://www.w3.org/2000/svg",
        width=math.ceil(width),
        height=math.ceil(height),
        viewBox=f"0 0 {math.ceil(width)} {math.ceil(height)}",
        role="img",
        aria_label=label,
        **kv,
    )
    return f"<svg {head}>" + "".join(body) + "</svg>"


@dataclass(frozen=True)
class LinearScale:
    lo: float
    hi: float
    a: float  # pixel of lo
    b: float  # pixel of hi

    def __call__(self, v: float) -> float:
        if self.hi == self.lo:
            return (self.a + self.b) / 2
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)

    def ticks(self, wanted: int = 4) -> list[float]:
        return nice_ticks(self.lo, self.hi, wanted)


@dataclass(frozen=True)
class LogScale:
    """Decades: ``lo`` and ``hi`` are powers of ten (see decades())."""

    lo: float
    hi: float
    a: float
    b: float

    def __call__(self, v: float) -> float:
        span = math.log10(self.hi) - math.log10(self.lo)
        return self.a + (math.log10(v) - math.log10(self.lo)) / span * (self.b - self.a)

    def ticks(self) -> list[float]:
        first, last = round(math.log10(self.lo)), round(math.log10(self.hi))
        step = max(1, math.ceil((last - first) / 8))
        return [10.0**e for e in range(first, last + 1, step)]


def decades(values: Sequence[float], pad: float = 2.0) -> tuple[float, float]:
    """The powers of ten around positive ``values``, with room ``pad``× on either side."""
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    if not pos:
        return 1.0, 10.0
    lo = 10.0 ** math.floor(math.log10(min(pos) / pad))
    hi = 10.0 ** math.ceil(math.log10(max(pos) * pad))
    return lo, hi if hi > lo else lo * 10


def nice_ticks(lo: float, hi: float, wanted: int = 4) -> list[float]:
    """Round numbers (1, 2 or 5 × 10^k apart) from lo to hi."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, wanted)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    v = first
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    return out


def nice_range(values: Sequence[float], include_zero: bool = False) -> tuple[float, float]:
    """A y range around ``values`` on round numbers; zero included when asked."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    if include_zero:
        lo = min(lo, 0.0)
    if hi == lo:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    ticks = nice_ticks(lo, hi, 4)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else (hi - lo)
    nlo = math.floor(lo / step + 1e-9) * step
    nhi = math.ceil(hi / step - 1e-9) * step
    if include_zero:
        nlo = max(nlo, 0.0) if lo >= 0 else nlo
    return nlo, nhi if nhi > nlo else nlo + step


def y_grid(
    y: LinearScale | LogScale,
    ticks: Sequence[float],
    left: float,
    right: float,
    label: Callable[[float], str],
    gap: float = 6,
) -> list[str]:
    """Horizontal grid lines across the plot at ``ticks``, each labelled left of it."""
    out = []
    for t in ticks:
        py = y(t)
        out.append(el("line", x1=left, y1=py, x2=right, y2=py, stroke=GRID))
        out.append(
            text(
                left - gap,
                py + 4,
                label(t),
                text_anchor="end",
                fill=AXIS,
                class_="tick-y",
                data_value=f"{t:g}",
            )
        )
    return out


def si(v: float, unit: str = "") -> str:
    """1.5e9 -> '1.5 G' + unit; for axis ticks and labels."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g} {unit}".strip()
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    if abs(v) >= 1:
        return f"{v:.3g} {unit}".strip()
    for scale, prefix in ((1e-3, "m"), (1e-6, "µ")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.1e} {unit}".strip()


@dataclass
class Labels:
    """Places text labels next to points without overlapping one another: each tries
    right, left, above and below its point, then steps down, and takes the first free box."""

    width: float
    height: float
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)

    def place(self, x: float, y: float, label: str, gap: float = 7.0) -> tuple[float, float, str]:
        """(x, y, text-anchor) of the label's baseline for a point at (x, y)."""
        w, h = len(label) * CHAR_W, FONT + 2.0
        candidates: list[tuple[float, float, str]] = []
        for k in range(9):
            dy = h * ((k + 1) // 2) * (1 if k % 2 else -1)
            candidates.append((x + gap, y + 4 + dy, "start"))
            candidates.append((x - gap, y + 4 + dy, "end"))
        for lx, ly, anchor in candidates:
            left = lx if anchor == "start" else lx - w
            box = (left, ly - h + 2, left + w, ly + 2)
            inside = box[0] >= 0 and box[2] <= self.width and box[1] >= 0 and box[3] <= self.height
            if inside and not any(_overlap(box, b) for b in self.boxes):
                self.boxes.append(box)
                return lx, ly, anchor
        lx, ly, anchor = candidates[0]
        if lx + w > self.width:
            lx, anchor = x - gap, "end"
        return lx, ly, anchor

    def reserve(self, box: tuple[float, float, float, float]) -> None:
        self.boxes.append(box)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
