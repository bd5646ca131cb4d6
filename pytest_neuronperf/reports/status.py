"""One status per region for pictures and summaries, its colour, and the session's counts.

A record carries two verdicts: the budget's (``status``) and the baseline's (``baseline``).
A picture has room for one colour per point, so the worse of the two wins here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..model import FAILING, Outcome, Record, Status

# Worst first: the order of the summary and of "what failed" (model.Outcome, once).
ORDER = tuple(Outcome)
# What failed on performance. A "test failed" region is fine itself: its test failed for
# another reason (another region's verdict, an assertion), which pytest's output tells.
FAILED = FAILING
# The summary always shows these, zero or not, so a reader learns that none regressed.
ALWAYS_COUNTED = (
    Outcome.REGRESSED,
    Outcome.OVER_BUDGET,
    Outcome.IMPROVED,
    Outcome.NEW,
    Outcome.SAME,
)

COLOURS: dict[str, str] = {
    Outcome.REGRESSED: "#dc2626",
    Outcome.OVER_BUDGET: "#ea580c",
    Outcome.TEST_FAILED: "#be185d",
    Outcome.CHANGED: "#ca8a04",
    Outcome.IMPROVED: "#16a34a",
    Outcome.NEW: "#7c3aed",
    Outcome.REMOVED: "#94a3b8",
    Outcome.SAME: "#64748b",
    Outcome.OK: "#0891b2",
}


def conditions(r: Record) -> list[str]:
    """Every status that applies to ``r``, worst first: a region can be regressed and
    over budget at once."""
    found: set[str] = set()
    if r.baseline in COLOURS:
        found.add(r.baseline)
    if r.status == Status.OVER_BUDGET or r.violations:
        found.add(Outcome.OVER_BUDGET)
    if r.status == Status.TEST_FAILED:
        found.add(Outcome.TEST_FAILED)
    return [s for s in ORDER if s in found] or [Outcome.OK]


def outcome(r: Record) -> str:
    """The one word a table's status column shows for ``r``: what failed it, worst first
    (a budget that held beside a regressed baseline is "regressed", never "ok"), else its
    budget's own word (ok, measured, trace); the baseline column says new, same, improved."""
    worst = status_of(r)
    # str(): a plain string, for xdist's execnet and JSON alike (not a StrEnum member).
    return str(worst) if worst in _FAILING_WORDS else str(r.status)


_FAILING_WORDS = frozenset({*FAILING, Outcome.TEST_FAILED})


def status_of(r: Record) -> str:
    """The one status a picture shows for ``r`` (a key of COLOURS): the worst."""
    return conditions(r)[0]


def colour(status: str) -> str:
    return COLOURS.get(status, COLOURS["ok"])


def counts(records: Sequence[Record]) -> Counter[str]:
    """Regions per condition. Both verdicts count: a region over budget and regressed
    is one of each, so the summary never hides the second reason."""
    out: Counter[str] = Counter()
    for r in records:
        if r.baseline:
            out[r.baseline] += 1
        if r.status == Status.OVER_BUDGET or r.violations:
            out[Outcome.OVER_BUDGET] += 1
        if r.status == Status.TEST_FAILED:
            out[Outcome.TEST_FAILED] += 1
    return out


def failed(records: Sequence[Record]) -> list[Record]:
    """Regions that failed, worst status first, each in run order."""
    bad = [r for r in records if status_of(r) in FAILED]
    return sorted(bad, key=lambda r: ORDER.index(status_of(r)))


def in_failed_tests(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if status_of(r) == Outcome.TEST_FAILED]


def by_status(records: Sequence[Record]) -> list[Record]:
    return sorted(records, key=lambda r: ORDER.index(status_of(r)))


def gated_metric(r: Record) -> str:
    """The time the baseline gate judged for ``r``, as the gate recorded it. Reports from
    before it was recorded: host_us on cpu, where the device is the host."""
    return r.gated or ("host_us" if r.measurement.backend == "cpu" else "device_us")
