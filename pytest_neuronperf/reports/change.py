"""What moved against the baseline, as a reviewer reconciles it: the counts as counts, the
gated time as measured, what the reference workloads moved and the change judged. Renders
what the gate put on the record (gate/compare.py); judges nothing."""

from __future__ import annotations

from ..model import BaselineStatus, Record, TimeJudged
from ..words import TIME_WORDS


def percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.0f}%"


def counts_text(r: Record) -> str:
    """``ops 6 → 7, kernels 7 → 9`` for the counts that moved, else ""."""
    m = r.measurement
    parts = [
        f"{what} {then} → {now}"
        for what, then, now in (
            ("ops", r.baseline_ops, m.ops),
            ("kernels", r.baseline_kernels, m.kernels),
        )
        if then is not None and then != now
    ]
    return ", ".join(parts)


def time_text(t: TimeJudged) -> str:
    """``host 399.0 → 813.0 µs +104% raw, refs +37%, judged +49%``; without references
    the raw change is the one judged."""
    text = f"{TIME_WORDS.get(t.metric, t.metric)} {t.baseline_us:,.1f} → {t.now_us:,.1f} µs"
    if t.verdict == "unjudged":
        return f"{text} {percent(t.raw)} (too few rounds to judge)"
    if t.references is None:
        text += f" {percent(t.judged)}"
    else:
        text += f" {percent(t.raw)} raw, refs {percent(t.references)}, judged {percent(t.judged)}"
    if t.overruled:
        # Against the references alone it was a change; the raw rounds did not agree.
        text += f", {t.overruled} only against refs"
    return text


def baseline_text(r: Record) -> str:
    """The baseline's verdict and what it rests on: ``regressed: ops 6 → 7`` or
    ``regressed: host 399.0 → 813.0 µs +104% raw, refs +37%, judged +49%``. Reports from
    before the figures were kept show the cell they stored."""
    if not r.baseline:
        return "-"
    if r.baseline in (BaselineStatus.NEW, BaselineStatus.NOT_COMPARABLE) or (
        r.baseline_ops is None and r.time_judged is None
    ):
        return r.baseline_cell or str(r.baseline)
    parts = [p for p in (counts_text(r), _time(r.time_judged)) if p]
    return f"{r.baseline}: {'; '.join(parts)}" if parts else str(r.baseline)


def _time(t: TimeJudged | None) -> str:
    return time_text(t) if t is not None else ""
