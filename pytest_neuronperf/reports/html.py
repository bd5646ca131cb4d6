"""One self-contained HTML file a reviewer reads in ten seconds: what failed (summary),
every region (a table that fits 1280 px), where each sits under the device's roofline,
whether fusion won (variants side by side), and per region the device time per op,
current beside baseline, with the op diff. Inline CSS and SVG only: it opens from a CI
artifact store with no network and no scripts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ..model import OpRow, Record
from ..names import elide, elide_test_id
from ..trace.summary import op_diff
from ..words import counted
from .change import baseline_text
from .charts import fusion, roofline, svg
from .charts import memory as memory_chart
from .collectives import rank_view_html
from .columns import Column
from .memory import memory_cell, memory_line
from .provenance import Provenance
from .status import (
    ALWAYS_COUNTED,
    FAILED,
    ORDER,
    by_status,
    colour,
    conditions,
    counts,
    failed,
    in_failed_tests,
    status_of,
)
from .terminal import device_cell, header_line, work_cells

# (test id, region) -> the stored per-op rows and op counts.
_Baselines = Mapping[tuple[str, str], tuple[Sequence[OpRow], Mapping[str, int]]]

CURRENT = svg.DEVICE
BASELINE = svg.FAINT
BAR_H, GAP, LABEL_W, CHART_W = 14, 8, 260, 420
# Characters of a test id the table shows; the middle goes, the full id is on hover.
TEST_ID_CHARS = 42

_CSS = f"""
* {{ box-sizing: border-box; }}
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; padding: 16px 20px;
  max-width: 1260px; color: #111827; }}
h1 {{ font-size: 22px; margin: 0 0 2px; }} h2 {{ font-size: 18px; margin: 0 0 8px; }}
h3 {{ font-size: 15px; margin: 14px 0 4px; }}
.env {{ color: #4b5563; font-size: 12px; margin: 0 0 12px; overflow-wrap: anywhere; }}
.counts {{ display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0 12px; }}
.count {{ border: 1px solid #e5e7eb; border-left: 6px solid; border-radius: 4px;
  padding: 4px 12px; min-width: 110px; }}
.count b {{ font-size: 22px; display: block; }} .count.zero {{ opacity: .55; }}
.failed li {{ margin: 4px 0; }} .failed ul {{ margin: 2px 0; color: #374151; }}
table {{ border-collapse: collapse; margin: 8px 0; width: 100%; table-layout: fixed;
  font-size: 13px; }}
th, td {{ border: 1px solid #e5e7eb; padding: 3px 6px; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }}
th {{ background: #f9fafb; }}
td.num, th.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr.problem td {{ background: #fef2f2; }}
.chip {{ display: inline-block; color: #fff; border-radius: 3px; padding: 0 5px;
  font-size: 12px; white-space: nowrap; }}
section {{ border-top: 1px solid #e5e7eb; margin-top: 18px; padding-top: 10px; }}
.legend span {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  vertical-align: -1px; }}
.current {{ background: {CURRENT}; }} .baseline {{ background: {BASELINE}; }}
.added {{ color: #b91c1c; }} .removed {{ color: #047857; }}
.note {{ color: #4b5563; font-size: 12px; }}
svg {{ max-width: 100%; height: auto; display: block; }}
code {{ font-size: 13px; overflow-wrap: anywhere; }}
a {{ color: inherit; }}
.beside {{ display: flex; gap: 16px; align-items: flex-start; }}
.beside .side {{ flex: 1; min-width: 0; }}
td.test {{ white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
details summary {{ cursor: pointer; color: #1d4ed8; margin: 6px 0; }}
"""

_COLUMNS = (
    # (heading, width in px or "" for the rest, numeric)
    (Column.STATUS, "92px", False),
    (Column.TEST, "", False),
    (Column.REGION, "140px", False),
    (Column.OPS, "44px", True),
    (Column.KERNELS, "72px", True),
    (Column.DEVICE_US, "96px", True),
    (Column.HOST_US, "72px", True),
    (Column.FLOP_PER_B, "66px", True),
    (Column.ROOF, "76px", True),
    (Column.BASELINE, "96px", False),
    (Column.BUDGET, "154px", False),
)


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
    parts = []
    for i, name in enumerate(names):
        y = GAP + i * per_op
        label = elide(name, 38)
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + BAR_H - 3}" text-anchor="end" '
            f'font-size="12">{escape(label)}<title>{escape(name)}</title></text>'
        )
        bars = [(cur.get(name), CURRENT, "current")]
        if baseline is not None:
            bars.append((base.get(name), BASELINE, "baseline"))
        for j, (value, fill, what) in enumerate(bars):
            by = y + j * BAR_H
            if value is None:
                parts.append(
                    f'<text x="{LABEL_W + 4}" y="{by + BAR_H - 3}" font-size="11" '
                    f'fill="{svg.MUTED}">absent in {what}</text>'
                )
                continue
            w = max(1.0, CHART_W * value / peak)
            parts.append(
                f'<rect class="bar-{what}" x="{LABEL_W}" y="{by}" width="{w:.1f}" '
                f'height="{BAR_H - 2}" fill="{fill}"><title>{escape(name)}: '
                f"{value:,.1f} µs ({what})</title></rect>"
            )
            parts.append(
                f'<text x="{LABEL_W + w + 4:.1f}" y="{by + BAR_H - 3}" '
                f'font-size="11">{value:,.1f} µs</text>'
            )
    return svg.svg(width, height, parts, "device time per op", class_="per-op")


def page_title(records: Sequence[Record]) -> str:
    n, k = len(records), len(failed(records))
    return f"neuronperf report — {counted(n, 'region')}, {k} failed"


def _chip(status: str) -> str:
    return f'<span class="chip" style="background:{colour(status)}">{escape(status)}</span>'


def _chips(r: Record) -> str:
    """The worst status, and beside it the others that failed too."""
    worst, *rest = conditions(r)
    also = [s for s in rest if s in FAILED or s == "test failed"]
    return " ".join(_chip(s) for s in [worst, *also])


def _anchor(i: int) -> str:
    return f"region-{i}"


def _summary(records: Sequence[Record], index: Mapping[int, int]) -> str:
    c = counts(records)
    shown = [s for s in ORDER if s in ALWAYS_COUNTED or c[s]]
    boxes = "".join(
        f'<div class="count{" zero" if not c[s] else ""}" data-status="{escape(s)}" '
        f'style="border-left-color:{colour(s)}"><b>{c[s]}</b>{escape(s)}</div>'
        for s in shown
    )
    bad = failed(records)
    if bad:
        items = []
        for r in bad:
            m = r.measurement
            why = "".join(f"<li>{escape(s)}</li>" for s in (*r.violations, *r.baseline_notes))
            items.append(
                f'<li>{_chip(status_of(r))} <a href="#{_anchor(index[id(r)])}">'
                f"<code>{escape(m.test_id)}</code> region <code>{escape(m.region)}</code></a>"
                + (f"<ul>{why}</ul>" if why else "")
                + "</li>"
            )
        what = f'<h2>What failed</h2><ol class="failed">{"".join(items)}</ol>'
    else:
        what = (
            f'<p class="all-good">Nothing failed: {counted(len(records), "region")} within budget '
            "and baseline.</p>"
        )
    others = in_failed_tests(records)
    if others:
        names = ", ".join(
            f'<a href="#{_anchor(index[id(r)])}"><code>{escape(r.measurement.region)}</code></a>'
            f" ({escape(r.measurement.test_id.rsplit('::', 1)[-1])})"
            for r in others
        )
        what += (
            '<p class="note">Measured in tests that failed otherwise (another region\'s '
            f"verdict, an assertion or an exception; pytest's output says which): {names}</p>"
        )
    return f'<section id="summary"><div class="counts">{boxes}</div>{what}</section>'


# Shown where some region's memory was profiled, before the baseline column.
_MEMORY_COLUMN = (Column.PEAK_MEMORY, "82px", True)


def _columns(memory: bool) -> tuple[tuple[str, str, bool], ...]:
    if not memory:
        return _COLUMNS
    at = [c[0] for c in _COLUMNS].index(Column.BASELINE)
    return (*_COLUMNS[:at], _MEMORY_COLUMN, *_COLUMNS[at:])


def _table(records: Sequence[Record], index: Mapping[int, int]) -> str:
    memory = any(r.measurement.memory is not None or r.measurement.memory_note for r in records)
    columns = _columns(memory)
    cols = "".join(f'<col style="width:{w}">' if w else "<col>" for _, w, _ in columns)
    heads = "".join(f"<th{' class=num' if num else ''}>{h}</th>" for h, _, num in columns)
    rows = []
    for r in by_status(records):
        m = r.measurement
        status = status_of(r)
        cls = ' class="problem"' if status in FAILED else ""
        ai, _mb, _gf, roof = _work(r)
        ops = f"{m.ops} (varies)" if m.round_variants else str(m.ops)
        cells: list[tuple[str, bool | str]] = [
            (_chips(r), False),
            (
                f'<a href="#{_anchor(index[id(r)])}" title="{escape(m.test_id)}">'
                f"{escape(elide_test_id(m.test_id, TEST_ID_CHARS))}</a>",
                "test",
            ),
            (f'<span title="{escape(m.region)}">{escape(m.region)}</span>', False),
            (escape(ops), True),
            (str(m.kernels), True),
            (escape(device_cell(m)), True),
            (f"{m.host_us.median:,.1f}", True),
            (ai, True),
            (roof, True),
            *([(escape(memory_cell(m)), True)] if memory else []),
            (escape(baseline_text(r)), False),
            (escape(r.budget or "-"), False),
        ]
        rows.append(
            f"<tr{cls}>" + "".join(f"<td{_cls(kind)}>{c}</td>" for c, kind in cells) + "</tr>"
        )
    return (
        f'<section id="table"><h2>All regions</h2><table><colgroup>{cols}</colgroup>'
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _cls(kind: bool | str) -> str:
    if kind is True:
        return ' class="num"'
    return f' class="{kind}"' if kind else ""


def _work(r: Record) -> tuple[str, str, str, str]:
    gflop, mb, ai, fraction, bound = work_cells(r.measurement)
    roof = (
        f'<span title="{fraction} of the {bound} roof">{fraction}</span>' if bound != "-" else "-"
    )
    return ai, mb, gflop, roof


def _roofline(records: Sequence[Record]) -> str:
    pts, left_out = roofline.points(records)
    rfs = roofline.roofs(records)
    if not pts:
        why = "".join(f"<li>{escape(s)}</li>" for s in left_out)
        return (
            '<section id="roofline"><h2>Roofline</h2><p class="note">No region has counted '
            f"FLOPs and bytes to place under a roof.</p><ul class=note>{why}</ul></section>"
        )
    statuses = [s for s in ORDER if any(p.status == s for p in pts)]
    legend = "".join(
        f'<span style="background:{colour(s)};border-radius:6px"></span>{escape(s)}'
        for s in statuses
    )
    roofs_note = (
        "; ".join(
            f"{escape(r.what)}: compute {svg.si(r.flops_per_s, 'FLOP/s')}, memory "
            f"{svg.si(r.bytes_per_s, 'B/s')}, ridge at {r.ridge:.3g} FLOP/B"
            for r in rfs
        )
        or "no peaks known for this device (set neuron_profile_peaks): points only"
    )
    notes = "".join(f"<li>{escape(s)}</li>" for s in left_out)
    above = sorted(
        {
            r.measurement.region
            for r in records
            if (rl := r.measurement.roofline) and rl.fraction > 1
        }
    )
    if above:
        # Not an error: small working sets run from cache, faster than the memory roof.
        notes_above = (
            f"<p class=note>Above their roof: {escape(', '.join(above))}. Their data stayed in "
            "cache, which serves bytes faster than the memory roof (a main-memory figure), "
            "or the peaks are set too low.</p>"
        )
    else:
        notes_above = ""
    per_op_pts, _ = roofline.points(records, per_op=True)
    side = (
        f'<p class="legend">{legend}</p>'
        '<p class="note">Each point is a region: the FLOPs it does per byte it moves, against '
        "the FLOP/s it reached (FLOPs of one call over its median device time). Under the "
        "slanted roof a region is memory bound, under the flat one compute bound; the gap "
        f"up to the roof is what is left to win.</p><p class=note>Roofs: {roofs_note}.</p>"
        + notes_above
        + (f'<p class="note">Not on the plot:</p><ul class="note">{notes}</ul>' if notes else "")
    )
    return (
        '<section id="roofline"><h2>Roofline</h2><div class="beside">'
        + roofline.plot(pts, rfs)
        + f'<div class="side">{side}</div></div>'
        + "<details><summary>Per-op points (hollow: one op of a region)</summary>"
        + roofline.plot(per_op_pts, rfs, label="roofline per op")
        + "</details></section>"
    )


def _fusion(records: Sequence[Record], baselines: _Baselines) -> str:
    found = fusion.groups(records)
    if not found:
        return ""
    was = {key: sum(counts.values()) for key, (_, counts) in baselines.items()}
    parts = []
    for g in found:
        parts.append(
            f"<h3>{escape(g.title)} <span class=note>({escape(g.why)})</span></h3>"
            f'<p class="fusion-verdict">{fusion.verdict(g)}</p>' + fusion.chart(g, was)
        )
    return (
        '<section id="fusion"><h2>Fusion: variants side by side</h2>'
        '<p class="legend note">dot: status, coloured as in the roofline; bars: median; '
        "whisker: quartiles of the rounds; bold: fastest in its column"
        f'<span style="background:{svg.DEVICE}"></span>device µs'
        f'<span style="background:{svg.HOST}"></span>host µs'
        f'<span style="background:{svg.SLATE}"></span>ops</p>' + "".join(parts) + "</section>"
    )


def _region(
    r: Record,
    i: int,
    stored: tuple[Sequence[OpRow], Mapping[str, int]] | None,
) -> str:
    m = r.measurement
    diff = op_diff(stored[1], m.op_counts) if stored else []
    diff_html = "".join(
        f'<li class="{"added" if d > 0 else "removed"}"><code>{"+" if d > 0 else "-"} '
        f"{escape(n)} ×{abs(d)}</code></li>"
        for n, d in diff
    )
    problems = "".join(f"<li>{escape(s)}</li>" for s in (*r.violations, *r.baseline_notes))
    return (
        f'<section id="{_anchor(i)}" class="region">'
        f"<h3>{_chips(r)} <code>{escape(m.test_id)}</code> region "
        f"<code>{escape(m.region)}</code></h3>"
        f"<p>{counted(m.ops, 'op')}, {counted(m.kernels, 'kernel')}, "
        f"device {escape(device_cell(m))} µs, "
        f"host {m.host_us.median:,.1f} µs, median of {m.rounds} rounds, status "
        f"<b>{escape(r.status)}</b></p>"
        + (f"<ul>{problems}</ul>" if problems else "")
        + rank_view_html(m)
        + '<p class="legend">device µs per op:<span class="current"></span>current'
        + ('<span class="baseline"></span>baseline' if stored else "")
        + "</p>"
        + _beside_memory(chart(m.per_op, stored[0] if stored else None), r)
        + (f"<p>Op diff against the baseline:</p><ul>{diff_html}</ul>" if diff else "")
        + "</section>"
    )


def _beside_memory(per_op: str, r: Record) -> str:
    """The per-op chart, with the region's memory over its ops beside it when profiled."""
    m = r.measurement
    line = memory_line(m)
    if not line:
        return per_op
    steps = memory_chart.chart(m.memory_steps, m.memory.peak_bytes) if m.memory else ""
    return (
        f'<div class="beside"><div class="side">{per_op}</div><div class="side">'
        f'<p class="note memory-line">{escape(line)}</p>{steps}</div></div>'
    )


def render(
    records: Sequence[Record],
    note: str = "",
    baselines: _Baselines | None = None,
    provenance: Provenance | None = None,
) -> str:
    """``baselines`` maps (test id, region) to the stored per-op rows and op counts."""
    baselines = baselines or {}
    index = {id(r): i for i, r in enumerate(records)}
    where = provenance.line() if provenance is not None else ""
    sections = "".join(
        _region(r, index[id(r)], baselines.get((r.measurement.test_id, r.measurement.region)))
        for r in by_status(records)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(page_title(records))}</title><style>{_CSS}</style></head><body>"
        "<h1>neuronperf report</h1>"
        f'<p class="env">{escape(header_line(records, note))}'
        + (f"<br>{escape(where)}" if where else "")
        + "</p>"
        + _summary(records, index)
        + _table(records, index)
        + _roofline(records)
        + _fusion(records, baselines)
        + '<section id="regions"><h2>Per region: device time per op</h2>'
        + sections
        + "</section></body></html>\n"
    )
