"""Whether the rounds a host window has sampled so far already settle its verdict against
the baseline entry: the compare window stops there (measure/window.py, docs/cost.md).
Pure: no pytest, no I/O."""

from __future__ import annotations

from ..baselines.entry import Entry
from ..measure.window import STOP_SHARE, HostSamples
from ..stats import Stats, TimeChange, compare_times
from .ticks import COMPUTE, DISPATCH, LONG, MEMORY, kinds_against, relative_changes
from .times import paired


def window_settled(
    entry: Entry, s: HostSamples, *, tolerance: float, by_reference: bool
) -> str | None:
    """Whether the rounds a host window has sampled so far already settle its verdict
    against ``entry``, judged as compare() judges host time; why, or None to sample on.

    Settled: time cannot be judged (too few rounds); the interval against some tick lies
    inside the tolerance band by a margin (STOP_SHARE of the tolerance) on both sides, or
    one tick's lies below the upper edge and another's above the lower one by that margin,
    so the rule that the ticks must agree cannot call a change; or every tick's interval is
    wholly past one edge (a regression then gets its second look, sampled whole)."""
    parts: list[tuple[str, TimeChange]] = []
    if by_reference:
        now = {
            MEMORY: _stats_or_none(s.relative),
            DISPATCH: _stats_or_none(s.relative_dispatch),
            COMPUTE: _stats_or_none(s.relative_compute),
            LONG: _stats_or_none(s.relative_long),
        }
        kinds = kinds_against(entry, None, now_long=bool(s.relative_long))
        parts = relative_changes(entry, now, tolerance, kinds)
    if not parts:
        now_ref = _stats_or_none(s.reference_us)
        then, now_us, _ = paired(
            entry.host_us, Stats.of(s.host_us), entry.reference_us, now_ref, by_reference
        )
        parts = [("", compare_times(then, now_us, tolerance))]
    if any(c.verdict == "unjudged" for _, c in parts):
        return "too few rounds for time to be judged"
    margin = 1 + tolerance * STOP_SHARE
    up, down = 1 + tolerance, 1 / (1 + tolerance)
    for kind, c in parts:
        if c.low >= down * margin and c.high <= up / margin:
            return f"host time inside the tolerance{_against(kind)} ({c.percent()}, {c.interval()})"
    # A change needs every tick: one tick that cannot show a regression and one that cannot
    # show an improvement settle it as surely as one tick that can show neither.
    no_rise = next(((k, c) for k, c in parts if c.high <= up / margin), None)
    no_fall = next(((k, c) for k, c in parts if c.low >= down * margin), None)
    if no_rise is not None and no_fall is not None:
        return (
            f"host time can be neither regressed{_against(no_rise[0])} "
            f"({no_rise[1].interval()}) nor improved{_against(no_fall[0])} "
            f"({no_fall[1].interval()})"
        )
    for verdict in ("regressed", "improved"):
        if all(c.verdict == verdict for _, c in parts):
            shown = ", ".join(f"{kind or 'raw'} {c.percent()}" for kind, c in parts)
            return f"host time {verdict} ({shown})"
    return None


def _against(kind: str) -> str:
    return f" against the {kind} tick" if kind else ""


def _stats_or_none(samples: list[float]) -> Stats | None:
    return Stats.of(samples) if samples else None
