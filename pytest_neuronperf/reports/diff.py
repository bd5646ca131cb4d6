"""Two reports region by region (``neuronperf compare``), as gate/pairs.py judged them:
which conditions to count, fail on and show first, and the cells of the table."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Outcome, Pair, TimeJudged
from ..stats import TimeChange
from ..units import format_bytes
from .change import time_text

Row = Pair
# Worst first. "over budget" and "test failed" come from the new report's own verdicts.
CONDITIONS = tuple(o for o in Outcome if o != Outcome.OK)
FAIL_ON_NAMES = {c.replace(" ", "-"): c for c in CONDITIONS}


def counts(found: Sequence[Row]) -> dict[str, int]:
    """Rows per condition, worst first, zero counts left out."""
    return {c: n for c in CONDITIONS if (n := sum(c in r.conditions for r in found))}


def failing(found: Sequence[Row], fail_on: Sequence[str]) -> list[Row]:
    wanted = set(fail_on)
    return [r for r in found if r.conditions & wanted]


def ordered(found: Sequence[Row]) -> list[Row]:
    return sorted(found, key=lambda r: CONDITIONS.index(Outcome(r.status)))


def count_cell(pair: tuple[int | None, int | None]) -> str:
    then, now = pair
    if then is None:
        return f"{now}"
    if now is None:
        return f"{then} → gone"
    return f"{then}" if then == now else f"{then} → {now}"


def memory_cell(pair: tuple[int | None, int | None]) -> str:
    """``4.0 MiB → 8.0 MiB``, one figure when unchanged, ``-`` for a side not profiled."""
    then, now = (format_bytes(v) if v is not None else "-" for v in pair)
    return then if then == now else f"{then} → {now}"


def time_cell(change: TimeChange | None, gated: bool, judged: TimeJudged | None = None) -> str:
    """``15.0 → 15.5 µs +3%``; on the gated time, the medians as measured in each report
    with what the references moved, and whether the interval left the noise."""
    if change is None:
        return "-"
    text = f"{change.baseline_median:,.1f} → {change.current_median:,.1f} µs {change.percent()}"
    if not gated:
        return text
    if judged is not None:
        text = time_text(judged).partition(" ")[2]
    if change.verdict == "unjudged":
        return text if judged is not None else text + " (too few rounds to judge)"
    if change.verdict in ("regressed", "improved"):
        return f"{text} {change.verdict}"
    return text + " (within noise)"
