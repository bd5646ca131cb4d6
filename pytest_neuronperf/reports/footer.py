"""What happened to the baselines and what to run next: the session's footer lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import APART_NOTE, NOT_COMPARABLE_NOTE, BaselineStatus, Record
from ..names import elide
from ..words import counted
from .fit import wrap

if TYPE_CHECKING:
    from ..baselines.store import Key
    from ..baselines.update import UpdatePlan


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
        text = f"{counted(by_status['new'], 'new measurement')}: run {_RUN_UPDATE} to record them"
        if any(r.measurement.backend == "cpu" for r in records):
            # Host-timed: one recording process carries its own offset (record.py).
            text += f" ({_RECORD} pools several recording processes, steadier on CPU)"
        lines.append(text)
    if by_status["improved"] or by_status["changed"]:
        moved = by_status["improved"] + by_status["changed"]
        lines.append(
            f"{counted(moved, 'measurement')} improved or changed: run {_RUN_UPDATE} to keep them"
        )
    if by_status[BaselineStatus.NOT_COMPARABLE]:
        lines.append(_not_comparable(records, by_status[BaselineStatus.NOT_COMPARABLE]))
    apart = [r for r in records if any(n.startswith(APART_NOTE) for n in r.baseline_notes)]
    if apart:
        lines.append(_apart(apart))
    if by_status["regressed"]:
        lines.append(
            f"{counted(by_status['regressed'], 'measurement')} regressed: fix the code, or accept "
            f"the new figures with {_RUN_UPDATE}"
        )
    if stale:
        shown = (f"{elide(t, 80)} [{elide(r, 40)}]" for t, r in stale[:3])
        names = ", ".join(shown) + (", ..." if len(stale) > 3 else "")
        lines.append(
            f"{counted(len(stale), 'stale baseline entry', 'stale baseline entries')} (test "
            f"or region no longer exists: {names}): run {_RUN_UPDATE} to remove them"
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
        f"{counted(count, 'measurement')} not comparable with {'its' if count == 1 else 'their'} "
        f"baseline ({'; '.join(reasons)}): not judged, and no test failed for it; run "
        f"{_RUN_UPDATE} to record them as they are measured now"
    )


def _apart(records: Sequence[Record]) -> str:
    """Once for the session: the regions whose change stayed within their recording
    processes' spread (gate/spread.py), so that no slowdown is passed in silence."""
    names = ", ".join(elide(r.measurement.region, 40) for r in records[:3])
    names += ", ..." if len(records) > 3 else ""
    return (
        f"{counted(len(records), 'time change')} past the tolerance stayed within how far "
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
        f"{counted(len(apart), 'pooled region')}: {'its' if one else 'their'} recording processes "
        f"ran further apart than the tolerance ({names}): a later time change counts only "
        f"past the tolerance beyond that spread; record {'it' if one else 'them'} again on "
        "a quieter machine to gate closer"
    )


def _pooled(plan: UpdatePlan) -> str:
    """ "2 pooled (now over 3 processes), " or nothing."""
    spans = Counter(e.processes for k in plan.pooled if (e := plan.result.get(*k)) is not None)
    if not spans:
        return ""
    over = ", ".join(f"{n} now over {p} processes" for p, n in sorted(spans.items()))
    if len(spans) == 1:
        over = f"now over {next(iter(spans))} processes"
    return f"{len(plan.pooled)} pooled ({over}), "
