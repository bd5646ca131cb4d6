"""Regions across many stored reports (``neuronperf history``): device µs, host µs and ops
per report, in the order of the commits (or times) the reports record, as one HTML page
with a small line chart per region. A slow creep that no single merge shows, each step
inside the tolerance, is what this page is for: the summary ranks regions by their change
from the first report to the last and flags the ones that crept."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

from ...model import Record
from ...names import elide_test_id
from ...units import format_bytes
from ...words import counted
from ..json import Report
from ..status import colour, gated_metric, status_of
from . import svg

OPS_CHANGED = svg.WORSE
W, H = 580, 170
LEFT, RIGHT, TOP, BOTTOM = 56, 46, 14, 34


def when(report: Report) -> tuple[datetime, datetime]:
    """The commit's time where the report records one, else the time it was written; the
    second is the tie-break (two runs of one commit)."""
    written = _parse(report.generated_at)
    g = report.provenance.git
    return (_parse(g.commit_time) if g and g.commit_time else written), written


def _parse(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def ordered(reports: Sequence[Report]) -> list[Report]:
    return sorted(reports, key=lambda r: (*when(r), str(r.path)))


def tick_label(report: Report) -> str:
    g = report.provenance.git
    if g is not None:
        return g.commit[:7] + ("*" if g.dirty else "")
    return report.generated_at[:16].replace("T", " ") or report.path.name


@dataclass(frozen=True)
class Series:
    device_kind: str
    test_id: str
    region: str
    # One per report, in order; None where the report did not measure the region.
    points: tuple[Record | None, ...]

    @property
    def present(self) -> list[tuple[int, Record]]:
        return [(i, r) for i, r in enumerate(self.points) if r is not None]

    def gated(self) -> str:
        return gated_metric(self.present[0][1])

    def values(self, metric: str) -> list[tuple[int, float]]:
        out = []
        for i, r in self.present:
            m = r.measurement
            out.append((i, m.host_us.median if metric == "host_us" else m.device_us.median))
        return out

    def ops_changes(self) -> list[tuple[int, int, int]]:
        """(index, ops before, ops after) wherever the op counts differ from the previous
        report that measured the region."""
        out = []
        prev: Record | None = None
        for i, r in self.present:
            if prev is not None and prev.measurement.op_counts != r.measurement.op_counts:
                out.append((i, prev.measurement.ops, r.measurement.ops))
            prev = r
        return out

    def change(self, metric: str) -> float:
        """Last over first, minus one (0.30: +30%); NaN with fewer than two points."""
        v = self.values(metric)
        if len(v) < 2 or v[0][1] <= 0:
            return math.nan
        return v[-1][1] / v[0][1] - 1

    def largest_step(self, metric: str) -> float:
        """The largest change between two neighbouring reports, up or down, with its sign
        (a -79% step is not "+79%")."""
        v = [x for _, x in self.values(metric)]
        steps = [b / a - 1 for a, b in itertools.pairwise(v) if a > 0]
        return max(steps, key=abs, default=math.nan)

    def memory(self) -> str:
        """Peak memory, first report that profiled it → last; "-" when none did."""
        peaks = [r.measurement.memory.peak_bytes for _, r in self.present if r.measurement.memory]
        if not peaks:
            return "-"
        first, last = format_bytes(peaks[0]), format_bytes(peaks[-1])
        return first if peaks[0] == peaks[-1] else f"{first} → {last}"

    def crept(self, tolerance: float) -> bool:
        """Slower than the tolerance first to last, though no single step was."""
        metric = self.gated()
        total, step = self.change(metric), self.largest_step(metric)
        return total > tolerance and abs(step) <= tolerance


def series(reports: Sequence[Report]) -> list[Series]:
    keys: dict[tuple[str, str, str], list[Record | None]] = {}
    for i, report in enumerate(reports):
        for r in report.records:
            m = r.measurement
            slots = keys.setdefault((m.device_kind, m.test_id, m.region), [None] * len(reports))
            slots[i] = r
    return [Series(*key, tuple(points)) for key, points in keys.items()]


def _pct(v: float) -> str:
    return "-" if math.isnan(v) else f"{v * 100:+.0f}%"


def chart(s: Series, reports: Sequence[Report]) -> str:
    n = len(reports)
    x = svg.LinearScale(0, max(1, n - 1), LEFT + 8, W - RIGHT - 8)
    dev, host = s.values("device_us"), s.values("host_us")
    lo, hi = svg.nice_range([v for _, v in dev + host], include_zero=True)
    y = svg.LinearScale(lo, hi, H - BOTTOM, TOP)
    body = svg.y_grid(y, svg.nice_ticks(lo, hi, 3), LEFT, W - RIGHT, "{:,.4g}".format, gap=5)
    body.append(svg.text(12, (TOP + H - BOTTOM) / 2, "µs", fill=svg.AXIS, text_anchor="middle"))
    body += _x_ticks(reports, x)
    body += _ops_change_lines(s, x)
    body += _trend_start(s, y)
    body += _trends(s, reports, x, y)
    body += _end_changes(s, x, y)
    body.append(svg.frame(LEFT, TOP, W - RIGHT - LEFT, H - BOTTOM - TOP))
    return svg.svg(W, H, body, f"trend of {s.region}", class_="trend")


def _lines(s: Series) -> list[tuple[list[tuple[int, float]], str, str]]:
    """(values, colour, metric) of the two trend lines, host first (device drawn on top)."""
    return [
        (s.values("host_us"), svg.HOST, "host_us"),
        (s.values("device_us"), svg.DEVICE, "device_us"),
    ]


def _x_ticks(reports: Sequence[Report], x: svg.LinearScale) -> list[str]:
    """A label under every report, thinned to about ten."""
    n = len(reports)
    every = max(1, math.ceil(n / 10))
    return [
        svg.text(
            x(i),
            H - BOTTOM + 14,
            tick_label(report),
            text_anchor="middle",
            fill=svg.AXIS,
            font_size=10,
            class_="tick-x",
        )
        for i, report in enumerate(reports)
        if i % every == 0 or i == n - 1
    ]


def _ops_change_lines(s: Series, x: svg.LinearScale) -> list[str]:
    """A dashed line and its label at each report whose op counts moved."""
    body: list[str] = []
    for i, before, after in s.ops_changes():
        px = x(i)
        body.append(
            svg.el(
                "line",
                x1=px,
                y1=TOP,
                x2=px,
                y2=H - BOTTOM,
                stroke=OPS_CHANGED,
                stroke_dasharray="4 3",
                class_="ops-change-line",
            )
        )
        body.append(
            svg.text(
                px + 4,
                TOP + 10,
                f"ops {before}→{after}",
                fill=OPS_CHANGED,
                font_weight="bold",
                class_="ops-change-label",
            )
        )
    return body


def _trend_start(s: Series, y: svg.LinearScale) -> list[str]:
    """The gated time's first value, flat across: a creep pulls away from it."""
    metric = s.gated()
    gated = s.values(metric)
    if not gated:
        return []
    start = y(gated[0][1])
    return [
        svg.el(
            "line",
            svg.title(f"first report's {metric}: {gated[0][1]:,.1f} µs"),
            class_="trend-start",
            x1=LEFT,
            y1=start,
            x2=W - RIGHT,
            y2=start,
            stroke=svg.HOST if metric == "host_us" else svg.DEVICE,
            stroke_dasharray="2 3",
            stroke_opacity=0.7,
        )
    ]


def _trends(
    s: Series, reports: Sequence[Report], x: svg.LinearScale, y: svg.LinearScale
) -> list[str]:
    """Each time as a line with a dot per report, ringed where the op counts moved."""
    body: list[str] = []
    changed = {i for i, _, _ in s.ops_changes()}
    for values, stroke, metric in _lines(s):
        if not values:
            continue
        cls = "trend-" + metric.removesuffix("_us")
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in values)
        body.append(
            svg.el("polyline", class_=cls, points=pts, fill="none", stroke=stroke, stroke_width=2.5)
        )
        for i, v in values:
            r = s.points[i]
            assert r is not None
            tip = (
                f"{tick_label(reports[i])}: {cls.removeprefix('trend-')} {v:,.1f} µs, "
                f"{counted(r.measurement.ops, 'op')} ({status_of(r)})"
            )
            dot = svg.el(
                "circle",
                svg.title(tip),
                class_=f"{cls}-point",
                cx=x(i),
                cy=y(v),
                r=3.5,
                fill=stroke,
            )
            body.append(dot)
            if i in changed and metric == "device_us":
                body.append(_ring(x(i), y(v), f"ops changed here: {tip}"))
    return body


def _ring(cx: float, cy: float, tip: str) -> str:
    return svg.el(
        "circle",
        svg.title(tip),
        class_="ops-change",
        cx=cx,
        cy=cy,
        r=8,
        fill="none",
        stroke=OPS_CHANGED,
        stroke_width=2.5,
    )


def _end_changes(s: Series, x: svg.LinearScale, y: svg.LinearScale) -> list[str]:
    """First to last, at each line's end: the creep in one number; the second label steps
    aside when the two lines end together."""
    body: list[str] = []
    ends: list[float] = []
    for values, stroke, metric in _lines(s):
        if len(values) < 2:
            continue
        i, v = values[-1]
        ly = y(v) + 4
        if ends and abs(ly - ends[0]) < svg.FONT + 1:
            ly = ends[0] + (svg.FONT + 1) * (1 if ly >= ends[0] else -1)
        ends.append(ly)
        body.append(
            svg.text(
                x(i) + 8,
                ly,
                _pct(s.change(metric)),
                fill=stroke,
                font_weight="bold",
                class_="trend-change",
            )
        )
    return body


_CSS = """
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; padding: 16px 20px;
  max-width: 1260px; color: #111827; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 18px 0 8px; }
.note { color: #4b5563; font-size: 12px; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; font-size: 13px; }
th, td { border: 1px solid #e5e7eb; padding: 3px 6px; text-align: left;
  overflow-wrap: anywhere; vertical-align: top; }
th { background: #f9fafb; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.crept td { background: #fef2f2; }
.badge { color: #fff; background: #dc2626; border-radius: 3px; padding: 0 5px; font-size: 12px; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 12px 20px; }
.card h3 { font-size: 13px; margin: 0 0 2px; overflow-wrap: anywhere; }
svg { max-width: 100%; height: auto; display: block; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  vertical-align: -1px; }
"""


def render(reports: Sequence[Report], tolerance: float) -> str:
    """``reports`` in order (see ordered())."""
    found = series(reports)
    ranked = sorted(found, key=lambda s: -_or_zero(s.change(s.gated())))
    crept = [s for s in found if s.crept(tolerance)]
    # A peak memory column where some report profiled memory.
    memory = any(s.memory() != "-" for s in found)
    rows = [_row(i, s, tolerance, memory) for i, s in enumerate(ranked)]
    cards = [_card(i, s, reports) for i, s in enumerate(ranked)]
    first, last = reports[0], reports[-1]
    headline = (
        f"{len(crept)} of {len(found)} regions crept: slower by more than "
        f"{tolerance * 100:g}% from first to last, though no single step was"
        if crept
        else f"No region crept by more than {tolerance * 100:g}% over these reports"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>neuronperf history — {len(found)} regions, {len(reports)} reports, "
        f"{len(crept)} crept</title><style>{_CSS}</style></head><body>"
        f"<h1>neuronperf history</h1><p class=note>{len(reports)} reports, from "
        f"{escape(first.name())} to {escape(last.name())}, in commit order (the time a "
        "report was written where it records no commit).</p>"
        f"<p><b>{escape(headline)}.</b></p>"
        "<table><colgroup><col><col style='width:70px'><col style='width:110px'>"
        "<col style='width:110px'><col style='width:130px'><col style='width:90px'>"
        + ("<col style='width:150px'>" if memory else "")
        + "<col style='width:100px'></colgroup><thead><tr><th>region</th><th>reports</th>"
        "<th>device first→last</th><th>host first→last</th><th>largest step (gated)</th>"
        "<th>ops</th>"
        + ("<th>peak memory</th>" if memory else "")
        + "<th>gated time</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table><h2>Per region</h2>"
        f'<p class="legend note"><span style="background:{svg.DEVICE}"></span>device µs'
        f'<span style="background:{svg.HOST}"></span>host µs'
        f'<span style="background:{OPS_CHANGED}"></span>ops changed (dashed line, ring)'
        " · dotted: the gated time's first value · x: reports in commit order (short commit, "
        "* dirty)</p>"
        f'<div class="grid">{"".join(cards)}</div></body></html>\n'
    )


def _row(i: int, s: Series, tolerance: float, memory: bool) -> str:
    """The summary table's row of one region, linking to its card."""
    metric = s.gated()
    flag = ' <span class="badge">crept</span>' if s.crept(tolerance) else ""
    ops = [r.measurement.ops for _, r in s.present]
    return (
        f'<tr{" class=crept" if flag else ""}><td><a href="#trend-{i}">'
        f"<code>{escape(s.region)}</code></a>{flag}<br><span class=note>"
        f"{escape(elide_test_id(s.test_id, 60))}</span></td>"
        f"<td class=num>{len(s.present)}</td>"
        f"<td class=num>{_pct(s.change('device_us'))}</td>"
        f"<td class=num>{_pct(s.change('host_us'))}</td>"
        f"<td class=num>{_pct(s.largest_step(metric))}</td>"
        f"<td class=num>{ops[0]} → {ops[-1]}</td>"
        + (f"<td class=num>{escape(s.memory())}</td>" if memory else "")
        + f"<td>{'host' if metric == 'host_us' else 'device'} µs</td></tr>"
    )


def _card(i: int, s: Series, reports: Sequence[Report]) -> str:
    """One region's card: its latest status, names and trend chart."""
    latest = s.present[-1][1]
    return (
        f'<div class="card" id="trend-{i}"><h3><span style="color:'
        f'{colour(status_of(latest))}">●</span> <code>{escape(s.region)}</code> '
        f'<span class="note" title="{escape(s.test_id)}">'
        f"{escape(elide_test_id(s.test_id, 64))} · {escape(s.device_kind)}</span></h3>"
        + chart(s, reports)
        + "</div>"
    )


def _or_zero(v: float) -> float:
    return 0.0 if math.isnan(v) else v


def text(reports: Sequence[Report], tolerance: float) -> str:
    """The terminal's summary: regions that crept, then every region's first → last."""
    from ..terminal import tabulate

    found = series(reports)
    ranked = sorted(found, key=lambda s: -_or_zero(s.change(s.gated())))
    memory = any(s.memory() != "-" for s in found)
    rows = [
        [
            s.test_id,
            s.region,
            len(s.present),
            _pct(s.change("device_us")),
            _pct(s.change("host_us")),
            _pct(s.largest_step(s.gated())),
            *([s.memory()] if memory else []),
            "crept" if s.crept(tolerance) else "-",
        ]
        for s in ranked
    ]
    extra = ["peak memory"] if memory else []
    return tabulate(
        rows,
        headers=["test", "region", "reports", "device", "host", "largest step", *extra, "creep"],
        tablefmt="simple",
        disable_numparse=True,
    )
