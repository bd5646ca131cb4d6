"""One self-contained HTML file: the session table and, per region, a bar chart of device
time per op (current beside baseline) and the op diff. Inline CSS and SVG only: it opens
from a CI artifact store with no network and no scripts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ..model import OpRow, Record
from ..trace.analysis import op_diff
from .columns import HTML_COLUMNS
from .markdown import is_problem, ordered
from .terminal import device_cell, header_line

CURRENT = "#2563eb"
BASELINE = "#9ca3af"
BAR_H, GAP, LABEL_W, CHART_W = 14, 8, 260, 420

_CSS = f"""
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #111827; }}
table {{ border-collapse: collapse; margin: 12px 0; }}
th, td {{ border: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr.problem td {{ background: #fef2f2; }}
section {{ border-top: 1px solid #e5e7eb; margin-top: 20px; padding-top: 8px; }}
.legend span {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }}
.current {{ background: {CURRENT}; }} .baseline {{ background: {BASELINE}; }}
.added {{ color: #b91c1c; }} .removed {{ color: #047857; }}
code {{ font-size: 13px; }}
"""


def chart(current: Sequence[OpRow], baseline: Sequence[OpRow] | None) -> str:
    """Horizontal bars, two per op when a baseline exists: current on top, baseline below."""
    cur = {r.name: r.device_us for r in current}
    base = {r.name: r.device_us for r in baseline} if baseline is not None else {}
    names = sorted(set(cur) | set(base), key=lambda n: (-max(cur.get(n, 0.0), base.get(n, 0.0)), n))
    if not names:
        return "<p>No ops were dispatched.</p>"
    peak = max([*cur.values(), *base.values(), 1e-9])
    per_op = BAR_H * (2 if baseline is not None else 1) + GAP
    height = per_op * len(names) + GAP
    width = LABEL_W + CHART_W + 90
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="device time per op">'
    ]
    for i, name in enumerate(names):
        y = GAP + i * per_op
        label = name if len(name) <= 38 else name[:35] + "..."
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + BAR_H - 3}" text-anchor="end" '
            f'font-size="12">{escape(label)}</text>'
        )
        bars = [(cur.get(name), CURRENT, "current")]
        if baseline is not None:
            bars.append((base.get(name), BASELINE, "baseline"))
        for j, (value, colour, what) in enumerate(bars):
            by = y + j * BAR_H
            if value is None:
                parts.append(
                    f'<text x="{LABEL_W + 4}" y="{by + BAR_H - 3}" font-size="11" '
                    f'fill="#6b7280">absent in {what}</text>'
                )
                continue
            w = max(1.0, CHART_W * value / peak)
            parts.append(
                f'<rect class="bar-{what}" x="{LABEL_W}" y="{by}" width="{w:.1f}" '
                f'height="{BAR_H - 2}" fill="{colour}"><title>{escape(name)}: '
                f"{value:,.1f} µs ({what})</title></rect>"
            )
            parts.append(
                f'<text x="{LABEL_W + w + 4:.1f}" y="{by + BAR_H - 3}" '
                f'font-size="11">{value:,.1f} µs</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def render(
    records: Sequence[Record],
    note: str = "",
    baselines: Mapping[tuple[str, str], tuple[Sequence[OpRow], Mapping[str, int]]] | None = None,
) -> str:
    """``baselines`` maps (test id, region) to the stored per-op rows and op counts."""
    baselines = baselines or {}
    rows = []
    for r in ordered(records):
        m = r.measurement
        cls = ' class="problem"' if is_problem(r) else ""
        cells = [escape(m.test_id), escape(m.region), escape(m.device_kind)]
        nums = [str(m.ops), str(m.kernels), escape(device_cell(m)), f"{m.host_us.median:,.1f}"]
        rest = [
            escape(r.baseline_cell or r.baseline or "-"),
            escape(r.budget or "-"),
            escape(r.status),
        ]
        rows.append(
            f"<tr{cls}>"
            + "".join(f"<td>{c}</td>" for c in cells)
            + "".join(f'<td class="num">{c}</td>' for c in nums)
            + "".join(f"<td>{c}</td>" for c in rest)
            + "</tr>"
        )
    sections = []
    for r in ordered(records):
        m = r.measurement
        stored = baselines.get((m.test_id, m.region))
        diff = op_diff(stored[1], m.op_counts) if stored else []
        diff_html = "".join(
            f'<li class="{"added" if d > 0 else "removed"}"><code>{"+" if d > 0 else "-"} '
            f"{escape(n)} ×{abs(d)}</code></li>"
            for n, d in diff
        )
        problems = "".join(f"<li>{escape(s)}</li>" for s in (*r.violations, *r.baseline_notes))
        sections.append(
            f'<section id="{escape(m.test_id)}::{escape(m.region)}">'
            f"<h2><code>{escape(m.test_id)}</code> region <code>{escape(m.region)}</code></h2>"
            f"<p>{m.ops} ops, {m.kernels} kernels, device {escape(device_cell(m))} µs, "
            f"host {m.host_us.median:,.1f} µs, median of {m.rounds} rounds, status "
            f"<b>{escape(r.status)}</b></p>"
            + (f"<ul>{problems}</ul>" if problems else "")
            + '<p class="legend">device µs per op:<span class="current"></span>current'
            + ('<span class="baseline"></span>baseline' if stored else "")
            + "</p>"
            + chart(m.per_op, stored[0] if stored else None)
            + (f"<p>Op diff against the baseline:</p><ul>{diff_html}</ul>" if diff else "")
            + "</section>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>neuronperf report</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(header_line(records, note))}</h1>"
        "<table><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in HTML_COLUMNS)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + "".join(sections)
        + "</body></html>\n"
    )
