"""One status per region for pictures and summaries, its colour, and the session's counts.

A record carries two verdicts: the budget's (``status``) and the baseline's (``baseline``).
A picture has room for one colour per point, so the worse of the two wins here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..backends import CpuBackend, CudaBackend, NeuronBackend
from ..model import Measurement, Record

# Worst first: the order of the summary and of "what failed".
ORDER = (
    "regressed",
    "over budget",
    "test failed",
    "changed",
    "improved",
    "new",
    "same",
    "ok",
)
# What failed on performance. A "test failed" region is fine itself: its test failed for
# another reason (another region's verdict, an assertion), which pytest's output tells.
FAILED = frozenset({"regressed", "over budget"})
# The summary always shows these, zero or not, so a reader learns that none regressed.
ALWAYS_COUNTED = ("regressed", "over budget", "improved", "new", "same")

COLOURS = {
    "regressed": "#dc2626",
    "over budget": "#ea580c",
    "test failed": "#be185d",
    "changed": "#ca8a04",
    "improved": "#16a34a",
    "new": "#7c3aed",
    "same": "#64748b",
    "ok": "#0891b2",
}

_HOST_TIMED = frozenset(
    c.name for c in (CpuBackend, CudaBackend, NeuronBackend) if c.mode == "host"
)


def conditions(r: Record) -> list[str]:
    """Every status that applies to ``r``, worst first: a region can be regressed and
    over budget at once."""
    found: set[str] = set()
    if r.baseline in COLOURS:
        found.add(r.baseline)
    if r.status == "over budget" or r.violations:
        found.add("over budget")
    if r.status == "test failed":
        found.add("test failed")
    return [s for s in ORDER if s in found] or ["ok"]


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
        if r.status == "over budget" or r.violations:
            out["over budget"] += 1
        if r.status == "test failed":
            out["test failed"] += 1
    return out


def failed(records: Sequence[Record]) -> list[Record]:
    """Regions that failed, worst status first, each in run order."""
    bad = [r for r in records if status_of(r) in FAILED]
    return sorted(bad, key=lambda r: ORDER.index(status_of(r)))


def in_failed_tests(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if status_of(r) == "test failed"]


def by_status(records: Sequence[Record]) -> list[Record]:
    return sorted(records, key=lambda r: ORDER.index(status_of(r)))


def gated_metric(m: Measurement) -> str:
    """The time the baseline gate judges: host_us where the backend times on the host."""
    return "host_us" if m.backend in _HOST_TIMED else "device_us"
