"""A region's breakdown for a failure and ``neuronperf report``: its figures, per-op table,
roofline and notes, fitted to the terminal."""

from __future__ import annotations

from ..escape import terminal
from ..measure.settle import SETTLED_FAULTS
from ..model import Measurement, Work
from ..words import counted
from .collectives import collective_lines
from .fit import fit_table, wrap
from .memory import extra_rows, memory_line, op_allocated
from .terminal import WORK_HEADERS, amount, device_cell, tabulate, us_cell, work_cells_from


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
            us_cell(row.device_us),
            f"{row.share * 100:.1f}%",
        ]
        if m.work is not None:
            o = work.get(row.name)
            cells.extend(
                work_cells_from(
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
    text = f"warm-up {counted(m.warmup_rounds, 'call')}"
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
    lines = [
        f"region {m.region!r} on {m.device_kind}: {counted(m.ops, 'op')}, "
        f"{counted(m.kernels, 'kernel')}, "
        f"device {device_cell(m)} µs, host {us_cell(m.host_us.median)} µs "
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
            f"max {gaps.max:,.1f} µs over {counted(gaps.n, 'kernel launch', 'kernel launches')}"
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
        breaks, recompiles = (
            counted(m.graph_breaks, "graph break"),
            counted(m.recompiles, "recompilation"),
        )
        lines.append(f"torch.compile: {breaks}, {recompiles}")
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
