"""Tables people read: the session report and the per-op breakdown of a failure."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..escape import terminal
from ..measure.settle import SETTLED_FAULTS
from ..measure.threads import THREADS_KEY
from ..model import APART_NOTE, NOT_COMPARABLE_NOTE, BaselineStatus, Measurement, Record, Work
from ..names import elide
from .change import baseline_text
from .columns import TERMINAL_COLUMNS, Column
from .fit import MERGE_COUNTS, elide_apart, fit_table, wrap
from .memory import extra_rows, memory_cell, memory_line, op_allocated
from .status import gated_metric, outcome

if TYPE_CHECKING:
    from ..baselines.store import Key
    from ..baselines.update import UpdatePlan


def tabulate(rows: Sequence[Sequence[object]], **kwargs: Any) -> str:
    # tabulate (and wcwidth under it) costs ~20 ms to import: only pay it when printing.
    from tabulate import tabulate as _tabulate

    return _tabulate(rows, **kwargs)


def _us(v: float) -> str:
    return f"{v:,.1f}"


def device_cell(m: Measurement) -> str:
    cell = _us(m.device_us.median)
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
                _us(m.host_us.median),
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
            row.append(_us(gaps.median) if gaps else "-")
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


_RUN_UPDATE = "pytest --neuron-profile --neuron-profile-update"
_RECORD = "python -m pytest_neuronperf record --processes 3 -- ARGS"


def baseline_footer(
    records: Sequence[Record],
    path: Path,
    *,
    plan: UpdatePlan | None = None,
    stale: Sequence[Key] = (),
    not_written: str = "",
    damaged: str = "",
    width: int | None = None,
    apart: Sequence[tuple[str, str, str]] = (),
) -> list[str]:
    """What happened to the baselines and what to run next, one line each; with ``width``,
    each wrapped to it. ``apart``: the test, region and spread of each entry just pooled
    whose recording processes ran further apart than the tolerance."""
    lines = _footer(records, path, plan, stale, not_written, damaged)
    if apart:
        lines.append(_recorded_apart(apart))
    return lines if width is None else [w for line in lines for w in wrap(line, width)]


def _footer(
    records: Sequence[Record],
    path: Path,
    plan: UpdatePlan | None,
    stale: Sequence[Key],
    not_written: str,
    damaged: str,
) -> list[str]:
    """What happened to the baselines and what to run next, one line each."""
    by_status: Counter[str] = Counter(r.baseline for r in records if r.baseline)
    lines = []
    if by_status:
        counts = ", ".join(f"{by_status[s]} {s}" for s in BaselineStatus if by_status[s])
        lines.append(f"neuronperf baselines {path}: {counts}")
    if damaged:
        lines.append(f"{path} was unreadable ({damaged}); --neuron-profile-update replaces it")
    if not_written:
        lines.append(f"baselines NOT written: {not_written}; {path} is left as it was")
    elif plan is not None:
        if plan.touches_file:
            lines.append(
                f"baselines written to {path}: {len(plan.added)} added, {_pooled(plan)}"
                f"{len(plan.changed)} changed, {len(plan.removed)} stale removed, "
                f"{len(plan.unchanged)} unchanged"
            )
        else:
            lines.append(f"baselines up to date: {path} not rewritten")
        return lines
    if by_status["new"]:
        text = f"{_n(by_status['new'], 'new measurement')}: run {_RUN_UPDATE} to record them"
        if any(r.measurement.backend == "cpu" for r in records):
            # Host-timed: one recording process carries its own offset (record.py).
            text += f" ({_RECORD} pools several recording processes, steadier on CPU)"
        lines.append(text)
    if by_status["improved"] or by_status["changed"]:
        moved = by_status["improved"] + by_status["changed"]
        lines.append(
            f"{_n(moved, 'measurement')} improved or changed: run {_RUN_UPDATE} to keep them"
        )
    if by_status[BaselineStatus.NOT_COMPARABLE]:
        lines.append(_not_comparable(records, by_status[BaselineStatus.NOT_COMPARABLE]))
    apart = [r for r in records if any(n.startswith(APART_NOTE) for n in r.baseline_notes)]
    if apart:
        lines.append(_apart(apart))
    if by_status["regressed"]:
        lines.append(
            f"{_n(by_status['regressed'], 'measurement')} regressed: fix the code, or accept "
            f"the new figures with {_RUN_UPDATE}"
        )
    if stale:
        shown = (f"{elide(t, 80)} [{elide(r, 40)}]" for t, r in stale[:3])
        names = ", ".join(shown) + (", ..." if len(stale) > 3 else "")
        lines.append(
            f"{_n(len(stale), 'stale baseline entry', 'stale baseline entries')} (test or region "
            f"no longer exists: {names}): run {_RUN_UPDATE} to remove them"
        )
    return lines


def _not_comparable(records: Sequence[Record], count: int) -> str:
    """Once for the session: which entries were recorded another way, and how."""
    reasons = sorted(
        {
            n.removeprefix(NOT_COMPARABLE_NOTE)
            for r in records
            if r.baseline == BaselineStatus.NOT_COMPARABLE
            for n in r.baseline_notes
            if n.startswith(NOT_COMPARABLE_NOTE)
        }
    )
    return (
        f"{_n(count, 'measurement')} not comparable with {'its' if count == 1 else 'their'} "
        f"baseline ({'; '.join(reasons)}): not judged, and no test failed for it; run "
        f"{_RUN_UPDATE} to record them as they are measured now"
    )


def _apart(records: Sequence[Record]) -> str:
    """Once for the session: the regions whose change stayed within their recording
    processes' spread (gate/spread.py), so that no slowdown is passed in silence."""
    names = ", ".join(elide(r.measurement.region, 40) for r in records[:3])
    names += ", ..." if len(records) > 3 else ""
    return (
        f"{_n(len(records), 'time change')} past the tolerance stayed within how far "
        f"{'its' if len(records) == 1 else 'their'} baseline's recording processes ran "
        f"apart ({names}): judged the same; {_RECORD} on a quieter machine records a "
        "steadier baseline"
    )


def _recorded_apart(apart: Sequence[tuple[str, str, str]]) -> str:
    """Once for a recording: the entries whose recording processes disagreed, so that the
    recorder learns it now rather than from a compare run's footer."""
    names = ", ".join(f"{elide(t, 60)} [{elide(r, 40)}] {s}" for t, r, s in apart[:3])
    names += ", ..." if len(apart) > 3 else ""
    one = len(apart) == 1
    return (
        f"{_n(len(apart), 'pooled region')}: {'its' if one else 'their'} recording processes "
        f"ran further apart than the tolerance ({names}): a later time change counts only "
        f"past the tolerance beyond that spread; record {'it' if one else 'them'} again on "
        "a quieter machine to gate closer"
    )


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


WORK_HEADERS = ("GFLOP", "MB moved", Column.FLOP_PER_B, "% of bound", "bound")


def _work_cells(
    flops: float, nbytes: float, device_us: float, peak_flops: float, peak_bw: float
) -> list[str]:
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
    return _work_cells(
        m.work.flops,
        m.work.bytes_moved,
        m.device_us.median,
        m.peak_flops_per_s,
        m.peak_bytes_per_s,
    )


def work_line(m: Measurement) -> str:
    """One sentence of the region's roofline for its detail section ("" if not counted)."""
    w = m.work
    if w is None:
        return ""
    line = (
        f"work: {amount(w.flops / 1e9)} GFLOP, {amount(w.bytes_moved / 1e6)} MB moved (read "
        f"{amount(w.bytes_read / 1e6)}, written {amount(w.bytes_written / 1e6)}; a lower "
        "bound), "
        f"{w.intensity:.3g} FLOP/B"
    )
    r = m.roofline
    if r is not None:
        line += (
            f"; achieved {r.achieved_flops_per_s / 1e9:.3g} GFLOP/s, "
            f"{r.achieved_bytes_per_s / 1e9:.3g} GB/s = {r.fraction * 100:.1f}% of the "
            f"{r.bound} bound (peaks {m.peak_flops_per_s / 1e12:.3g} TFLOP/s, "
            f"{m.peak_bytes_per_s / 1e9:.3g} GB/s)"
        )
    elif m.peak_flops_per_s <= 0:
        line += f"; no peaks known for {m.device_kind} (set neuron_profile_peaks)"
    if w.uncounted:
        line += f"\nFLOPs not counted for: {', '.join(w.uncounted)}"
    if w.flops_beyond_torch:
        line += "\n" + beyond_torch_sentence(w)
    return line


# Ops a beyond-torch sentence names; the rest it counts ("+3 more").
_BEYOND_NAMED = 6


def beyond_torch_sentence(w: Work) -> str:
    """Where our FLOPs differ from torch's FlopCounterMode, the ops that make the
    difference, largest first, so that a user can reconcile the two ("" when none)."""
    ranked = sorted(w.flops_beyond_torch.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return ""
    added = sum(n for _, n in ranked)
    named = ", ".join(f"{terminal(name)} {n:,}" for name, n in ranked[:_BEYOND_NAMED])
    rest = len(ranked) - _BEYOND_NAMED
    more = f" (+{rest} more)" if rest > 0 else ""
    return (
        f"FLOPs beside torch's FlopCounterMode: it counts {w.flops - added:,}; ours adds "
        f"{added:,} for {named}{more}"
    )


# The per-op table's columns that go first when it is too wide, in that order.
_DROP_PER_OP = ("FLOP/B", "MB moved", "bound", "% of bound", "GFLOP", "calls", "share")


def per_op_table(m: Measurement, width: int | None = None) -> str:
    work = {o.name: o for o in m.work.per_op} if m.work is not None else {}
    rows = []
    for row in m.per_op:
        cells = [
            row.name,
            _num(row.calls),
            _num(row.kernels),
            _us(row.device_us),
            f"{row.share * 100:.1f}%",
        ]
        if m.work is not None:
            o = work.get(row.name)
            cells.extend(
                _work_cells(
                    o.flops,
                    o.bytes_moved,
                    row.device_us,
                    m.peak_flops_per_s,
                    m.peak_bytes_per_s,
                )
                if o is not None
                else ["-"] * len(WORK_HEADERS)
            )
        if m.memory is not None:
            cells.append(op_allocated(m, row.name))
        rows.append(cells)
    # Allocations between ops (a Python scalar wrapped, a result freed) have a row of
    # their own, so that the column adds up to the region's allocated bytes.
    for name in extra_rows(m, {row.name for row in m.per_op}):
        blank = ["-"] * (4 + (len(WORK_HEADERS) if m.work is not None else 0))
        rows.append([name, *blank, op_allocated(m, name)])
    if not rows:
        return f"(region {m.region!r} dispatched no ops)"
    headers = ["op", "calls", "kernels", "device µs", "share"]
    if m.work is not None:
        headers.extend(WORK_HEADERS)
    if m.memory is not None:
        headers.append("allocated")
    if width is not None:
        return fit_table(headers, rows, width, drop_first=_DROP_PER_OP)
    return tabulate(
        rows,
        headers=headers,
        tablefmt="simple",
        disable_numparse=True,
    )


def _warmup_text(m: Measurement) -> str:
    text = f"warm-up {m.warmup_rounds} calls"
    if m.settle_calls:
        text += f" + {m.settle_calls} until page faults stopped"
    return text


def _rounds_text(m: Measurement) -> str:
    if m.warmup_rounds == 0 and m.first_call_us == 0 and m.rounds == 1:
        # A region(), or a saved trace: the one run measured was the first, cold.
        return "one cold execution: no warm-up, no repeat"
    return (
        f"median of {m.rounds} rounds{_window_text(m)}; {_warmup_text(m)}, "
        f"first call {duration(m.first_call_us)}"
    )


def _window_text(m: Measurement) -> str:
    if m.host_calls <= m.rounds:
        return ""
    return f", host over {m.host_calls:,} calls in {m.window_s:.2f} s"


def measurement_detail(m: Measurement, width: int | None = None) -> str:
    """A region's figures, per-op table and notes; with ``width``, fitted to it."""
    table = per_op_table(m, width)
    lines = _detail_lines(m, table)
    if width is None:
        return "\n".join(lines)
    fitted: list[str] = []
    for text in lines:
        fitted += [text] if text == table else _wrap_all(text, width)
    return "\n".join(fitted)


def _wrap_all(text: str, width: int) -> list[str]:
    return [w for line in text.split("\n") for w in wrap(line, width)]


def _detail_lines(m: Measurement, table: str) -> list[str]:
    from .collectives import collective_lines  # it renders with this module's tabulate

    lines = [
        f"region {m.region!r} on {m.device_kind}: {m.ops} ops, {m.kernels} kernels, "
        f"device {device_cell(m)} µs, host {_us(m.host_us.median)} µs "
        f"({_rounds_text(m)})",
        table,
    ]
    if m.page_faults is not None and m.page_faults > SETTLED_FAULTS:
        lines.append(
            f"page faults: {m.page_faults:,.0f} per round even after warm-up: the region "
            "touches fresh memory on every call (large tensors the allocator maps anew), "
            "and its times include that"
        )
    if m.window_note:
        lines.append(m.window_note)
    if m.recheck_note:
        lines.append(m.recheck_note)
    lines.extend(m.device_notes)
    lines.extend(m.host_notes)
    gaps = m.launch_gap_us
    if gaps:
        lines.append(
            f"launch gap (kernel start - launch call start): median {gaps.median:,.1f} µs, "
            f"max {gaps.max:,.1f} µs over {gaps.n} kernel launches"
        )
    busy = m.device_busy_us
    if busy:
        lines.append(
            f"device busy (union over streams): median {busy.median:,.1f} µs; device µs is "
            f"the kernel-time sum, {m.device_us.median:,.1f} µs"
        )
    if m.work is not None:
        lines.append(work_line(m))
    if mem := memory_line(m):
        lines.append(mem)
    if m.kernel_counts:
        kernels = ", ".join(f"{name} ×{n}" for name, n in sorted(m.kernel_counts.items()))
        lines.append(f"kernels: {kernels}")
    for variant in m.round_variants:
        lines.append(f"ops varied across rounds: {variant}")
    lines.extend(collective_lines(m))
    if m.graph_breaks or m.recompiles:
        lines.append(f"torch.compile: {m.graph_breaks} graph breaks, {m.recompiles} recompilations")
    lines.extend(m.compile_notes)
    return lines


def duration(us: float) -> str:
    """A time a reader takes in at a glance: µs below 10 ms, then ms, then s."""
    if us >= 10e6:
        return f"{us / 1e6:,.1f} s"
    if us >= 10e3:
        return f"{us / 1e3:,.1f} ms"
    return f"{us:,.1f} µs"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}"


def _pooled(plan: UpdatePlan) -> str:
    """ "2 pooled (now over 3 processes), " or nothing."""
    spans = Counter(e.processes for k in plan.pooled if (e := plan.result.get(*k)) is not None)
    if not spans:
        return ""
    over = ", ".join(f"{n} now over {p} processes" for p, n in sorted(spans.items()))
    if len(spans) == 1:
        over = f"now over {next(iter(spans))} processes"
    return f"{len(plan.pooled)} pooled ({over}), "
