"""What a test's measurements come to: budgets, the baseline and the test's own outcome,
combined into one verdict. Pure: no pytest, no I/O, no formatting of tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..baselines.entry import Entry
from ..gate.budget import Violation, check, time_figures, time_notes
from ..gate.collectives import flag_stragglers
from ..gate.compare import Comparison, compare
from ..gate.marker import Budget, marker_tolerance, tolerance_for
from ..model import Measurement, Record, Status
from ..settings import Settings


@dataclass(frozen=True)
class Verdict:
    """``failed``: the gate fails a test that passed on its own terms. ``sentences`` say why,
    one line each, budget first; ``regions`` are the measurements they name, whose details
    go in the report section, with ``notes`` (the baseline's context for those regions)."""

    records: tuple[Record, ...]
    sentences: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.sentences)


def compare_one(
    entry: Entry | None,
    m: Measurement,
    budgets: Sequence[Budget],
    settings: Settings,
    *,
    host_timed: bool,
    where: str,
    hold_back: bool = True,
) -> Comparison:
    """One measurement against its stored entry, with the session's settings and the
    marker's tolerance for its region."""
    return compare(
        entry,
        m,
        tolerance=tolerance_for(budgets, m.region, settings.tolerance),
        compare_host=settings.compare_host,
        host_timed=host_timed,
        strict=settings.strict,
        use_reference=settings.reference,
        where=where,
        hold_back=hold_back,
    )


def judge(
    measurements: Sequence[Measurement],
    budgets: Sequence[Budget],
    comparisons: Mapping[str, Comparison | None],
    *,
    passed: bool,
    update: bool,
    strict_budgets: bool = False,
    tolerance: float | None = None,
    gated: str = "",
) -> Verdict:
    """``comparisons`` maps a region to its baseline comparison (None or absent: no
    baseline was loaded). Only a test that ran to the end is judged: one that raised may
    not have reached its measurements, and its own failure is the news. While recording
    (``update``) the baseline judges nothing: the new figures are what is being stored.
    ``tolerance``: the session's, against which a distributed region's slowest rank is
    flagged a straggler (the marker's for its region wins). ``gated`` (the time the
    session's gate judges) goes on the records for reports. ``strict_budgets``: time limits
    on the bare median (gate/budget.py)."""
    if tolerance is not None:
        measurements = [
            flag_stragglers(m, tolerance_for(budgets, m.region, tolerance)) if m.ranks else m
            for m in measurements
        ]
    violations = (
        [v for b in budgets for v in check(b, measurements, strict=strict_budgets)]
        if passed
        else []
    )
    baseline_failed = [
        (m.region, c)
        for m in measurements
        if passed and not update and (c := comparisons.get(m.region)) is not None and c.failures
    ]
    sentences = [v.sentence for v in violations]
    sentences += [f for _, c in baseline_failed for f in c.failures]
    notes = [n for _, c in baseline_failed for n in c.notes]
    named = {v.region for v in violations} | {region for region, _ in baseline_failed}
    records = [
        _record(m, budgets, violations, comparisons, passed, gated, strict_budgets)
        for m in measurements
    ]
    return Verdict(
        tuple(records),
        tuple(sentences),
        tuple(notes),
        tuple(m.region for m in measurements if m.region in named),
    )


def _record(
    m: Measurement,
    budgets: Sequence[Budget],
    violations: Sequence[Violation],
    comparisons: Mapping[str, Comparison | None],
    passed: bool,
    gated: str,
    strict_budgets: bool,
) -> Record:
    """One measurement's record: its budgets' status and its baseline comparison."""
    mine = [b for b in budgets if b.region in (None, m.region)]
    failed = tuple(v.sentence for v in violations if v.region == m.region)
    # The status column tells the budget's story; the baseline column tells its own.
    if failed:
        status = Status.OVER_BUDGET
    elif not passed:
        status = Status.TEST_FAILED
    else:
        status = Status.OK if mine else Status.MEASURED
    c = comparisons.get(m.region)
    # A time limit too few rounds could judge says so where the budget is shown.
    unjudged = [n for b in mine for n in time_notes(b, m, strict=strict_budgets)]
    # And what a judged one was judged on: the median and its interval.
    figures = [f for b in mine for f in time_figures(b, m, strict=strict_budgets)]
    described = "; ".join(b.describe() for b in mine)
    said = figures + (unjudged if passed else [])
    if said:
        described += f" ({'; '.join(said)})"
    return Record(
        m,
        described,
        status,
        failed,
        baseline=c.status if c else "",
        baseline_cell=c.cell() if c else "",
        baseline_notes=(c.failures + c.notes) if c else (),
        rewrite_baseline=c.needs_write if c else True,
        gated=c.gated if c else gated,
        tolerance=marker_tolerance(budgets, m.region),
        baseline_ops=c.baseline_ops if c else None,
        baseline_kernels=c.baseline_kernels if c else None,
        time_judged=c.judged if c else None,
    )
