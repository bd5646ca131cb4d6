"""The session table people read, and the cells it shares with the other renderers.
A failing region's breakdown: detail.py; the baseline footer: footer.py."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from ..escape import terminal
from ..measure.threads import THREADS_KEY
from ..model import BaselineStatus, Measurement, Record
from .change import baseline_text
from .columns import TERMINAL_COLUMNS, Column
from .fit import MERGE_COUNTS, elide_apart, fit_table
from .memory import memory_cell
from .status import gated_metric, outcome


def tabulate(rows: Sequence[Sequence[object]], **kwargs: Any) -> str:
    # tabulate (and wcwidth under it) costs ~20 ms to import: only pay it when printing.
    from tabulate import tabulate as _tabulate

    return _tabulate(rows, **kwargs)


def us_cell(v: float) -> str:
    """A time in µs as a table cell: one decimal, thousands apart."""
    return f"{v:,.1f}"


def device_cell(m: Measurement) -> str:
    cell = us_cell(m.device_us.median)
    if m.device_us.n > 1:
        cell += f" ±{m.device_us.spread * 100:.0f}%"
    return cell


def header_line(records: Sequence[Record], note: str = "") -> str:
    parts: set[str] = set()
    for r in records:
        d = r.measurement.environment
        backend, kind, torch = (d.get(k, "?") for k in ("backend", "device_kind", "torch"))
        part = f"backend {backend}, device {kind}, torch {torch}"
        threads = d.get(THREADS_KEY)
        if threads is not None:
            part += f", {threads} thread{'' if threads == '1' else 's'}"
        parts.add(part)
    line = "neuronperf: " + "; ".join(sorted(parts))
    return f"{line} [{note}]" if note else line


def summary_table(records: Sequence[Record], width: int | None = None) -> str:
    """The session table: one line per region where it fits ``width``; else grouped by
    test (docs/reports.md): each test id on a line of its own, told apart from the others,
    its regions below it in a table fitted to the width (fit.py: optional columns dropped
    or merged by priority), and under a region that moved or failed a line saying against
    what. JSON and HTML keep every column."""
    headers, rows = _table(records)
    # Escaped before fitting: a control character such as \r would split a row's line.
    rows = [[terminal(cell) for cell in row] for row in rows]
    if width is None:
        return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    drop = _DROP_HOST_TIMED if {gated_metric(r) for r in records} == {"host_us"} else _DROP
    flat = fit_table(headers, rows, width, drop_first=drop)
    if _whole(flat, headers, rows, width):
        return flat
    return _grouped(records, headers, rows, width, drop)


def _whole(table: str, headers: list[str], rows: list[list[str]], width: int) -> bool:
    """Whether a fitted one-line-a-region table is one a reviewer reads: within the width,
    ops and kernels apart, and no test id, region or baseline cut."""
    lines = table.splitlines()
    if max(map(len, lines)) > width or not {"ops", "kernels"} <= set(lines[0].split()):
        return False
    whole = [i for i, h in enumerate(headers) if h in (*_BY_TEST, Column.REGION)]
    pairs = zip(rows, lines[2:], strict=True)
    return all(f" {row[i]} " in f" {line} " for row, line in pairs for i in whole)


_INDENT = "  "
_BY_TEST = (Column.TEST, Column.BASELINE)


def _grouped(
    records: Sequence[Record],
    headers: list[str],
    rows: list[list[str]],
    width: int,
    drop: Sequence[str],
) -> str:
    keep = [i for i, h in enumerate(headers) if h not in _BY_TEST]
    # The gated time stays; the other one goes before ops and kernels merge.
    table = fit_table(
        [headers[i] for i in keep],
        [[row[i] for i in keep] for row in rows],
        width - len(_INDENT),
        drop_first=drop,
    ).splitlines()
    ids = elide_apart([terminal(r.measurement.test_id) for r in records], width)
    lines = [_INDENT + line for line in table[:2]]
    shown = None
    for r, line in zip(records, table[2:], strict=True):
        if terminal(r.measurement.test_id) != shown:
            shown = terminal(r.measurement.test_id)
            lines.append(ids[shown])
        lines.append((_INDENT + line).rstrip())
        lines.extend(_why(r, width))
    return "\n".join(lines)


def _why(r: Record, width: int) -> list[str]:
    """Under a grouped row: what the baseline saw where it moved, and a broken budget."""
    said = []
    # A "same" the raw rounds overruled says so: the references alone saw a change.
    overruled = r.time_judged is not None and bool(r.time_judged.overruled)
    if r.baseline and (r.baseline not in (BaselineStatus.NEW, BaselineStatus.SAME) or overruled):
        said.append(f"baseline {baseline_text(r)}")
    if r.violations and r.budget:
        said.append(f"over budget: {r.budget}")
    indent = _INDENT * 2
    return [
        line
        for text in said
        for line in textwrap.wrap(
            text, width, initial_indent=indent, subsequent_indent=indent + _INDENT
        )
    ]


# Columns that go first when the table is too wide, in that order (fit.py); "ops" and
# "kernels" merge before either would go. What is never dropped: test, region, the gated
# time, status, baseline.
_DROP = (
    "FLOP/B",
    "MB moved",
    "GFLOP",
    "device",
    "rounds",
    "launch gap µs",
    "bound",
    "% of bound",
    "budget",
    MERGE_COUNTS,
    "host µs",
    # A region's memory is as hard a limit as its time: it goes after the ungated time.
    Column.PEAK_MEMORY,
    "kernels",
)
_DROP_HOST_TIMED = tuple("device µs" if c == "host µs" else c for c in _DROP)


def _table(records: Sequence[Record]) -> tuple[list[str], list[list[str]]]:
    rows: list[list[str]] = []
    for r in records:
        m = r.measurement
        ops = f"{m.ops} (varies)" if m.round_variants else str(m.ops)
        rows.append(
            [
                m.test_id,
                m.region,
                m.device_kind,
                ops,
                str(m.kernels),
                device_cell(m),
                us_cell(m.host_us.median),
                str(m.rounds),
                r.budget or "-",
                outcome(r),
            ]
        )
    headers: list[str] = list(TERMINAL_COLUMNS)
    if any(r.measurement.launch_gap_us for r in records):
        # What "framework vs runtime vs hardware" turns on: how long kernels wait to start.
        headers.append(Column.LAUNCH_GAP_US)
        for row, r in zip(rows, records, strict=True):
            gaps = r.measurement.launch_gap_us
            row.append(us_cell(gaps.median) if gaps else "-")
    if any(r.measurement.memory is not None or r.measurement.memory_note for r in records):
        headers.append(Column.PEAK_MEMORY)
        for row, r in zip(rows, records, strict=True):
            row.append(memory_cell(r.measurement))
    if any(r.measurement.work is not None for r in records):
        headers.extend(WORK_HEADERS)
        for row, r in zip(rows, records, strict=True):
            row.extend(work_cells(r.measurement))
    if any(r.baseline for r in records):
        headers.append(Column.BASELINE)
        for row, r in zip(rows, records, strict=True):
            row.append(baseline_text(r))
    return headers, rows


WORK_HEADERS = ("GFLOP", "MB moved", Column.FLOP_PER_B, "% of bound", "bound")


def work_cells_from(
    flops: float, nbytes: float, device_us: float, peak_flops: float, peak_bw: float
) -> list[str]:
    """work_cells from the bare figures: a region's, or one op's of a per-op table."""
    from ..model import intensity, roofline

    r = roofline(flops, nbytes, device_us, peak_flops, peak_bw)
    return [
        amount(flops / 1e9),
        amount(nbytes / 1e6),
        f"{intensity(flops, nbytes):.3g}",
        f"{r.fraction * 100:.1f}%" if r else "-",
        r.bound if r else "-",
    ]


def amount(v: float) -> str:
    """Three significant figures, never in exponent notation ("8e-09 GFLOP"): below a
    thousandth, "<0.001"."""
    if v == 0:
        return "0"
    if v < 0.001:
        return "<0.001"
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"


def work_cells(m: Measurement) -> list[str]:
    """GFLOP, MB moved, intensity, % of the roofline bound that applies, and which bound;
    dashes for a measurement that was not counted or has no peaks."""
    if m.work is None:
        return ["-"] * len(WORK_HEADERS)
    return work_cells_from(
        m.work.flops,
        m.work.bytes_moved,
        m.device_us.median,
        m.peak_flops_per_s,
        m.peak_bytes_per_s,
    )
