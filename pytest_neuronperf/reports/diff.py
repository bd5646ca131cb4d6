"""Two reports region by region (``neuronperf compare``): ops, kernels, device and host
change and the op diff, judged by the rule the baseline gate uses (gate/compare.py): counts
exactly, times by the bootstrap interval where both sides have enough rounds. The older
report plays the baseline; the newer one's own budget verdicts are carried over."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..baselines.entry import Entry
from ..gate.compare import compare
from ..model import Record
from ..stats import TimeChange
from ..trace.summary import op_diff_text
from ..units import format_bytes
from .json import Report
from .status import gated_metric

# Worst first. "over budget" and "test failed" come from the new report's own verdicts.
CONDITIONS = (
    "regressed",
    "over budget",
    "test failed",
    "changed",
    "improved",
    "new",
    "removed",
    "same",
)
FAIL_ON_NAMES = {c.replace(" ", "-"): c for c in CONDITIONS}
_TOLERANCE = re.compile(r"tolerance=([0-9.]+)%")


@dataclass(frozen=True)
class Row:
    test_id: str
    region: str
    conditions: frozenset[str]
    ops: tuple[int | None, int | None]
    kernels: tuple[int | None, int | None]
    device: TimeChange | None
    host: TimeChange | None
    gated: str  # the time the verdict rests on: device_us or host_us
    op_diff: str
    sentences: tuple[str, ...]  # why: the gate's failures and notes, the budget's violations
    # Peak memory in bytes, base and new; None where a side did not profile memory.
    memory: tuple[int | None, int | None] = (None, None)

    @property
    def status(self) -> str:
        return next(c for c in CONDITIONS if c in self.conditions)


def tolerance_of(record: Record, default: float) -> float:
    """The marker's tolerance as the report's budget column wrote it (``tolerance=25%``),
    one naming this region first, as gate.marker.tolerance_for picks it."""
    parts = record.budget.split("; ") if record.budget else []
    named = f"region={record.measurement.region!r}"
    for wanted in (True, False):
        for part in parts:
            found = _TOLERANCE.search(part)
            if found and (named in part) == wanted and ("region=" in part) == wanted:
                return float(found.group(1)) / 100
    return default


def rows(base: Report, new: Report, tolerance: float) -> list[Row]:
    before = {(r.measurement.test_id, r.measurement.region): r for r in base.records}
    after = {(r.measurement.test_id, r.measurement.region): r for r in new.records}
    out = [_row(before.get(key), r, tolerance, str(base.path)) for key, r in after.items()]
    out += [_removed(r) for key, r in before.items() if key not in after]
    return out


def _row(old: Record | None, r: Record, default: float, where: str) -> Row:
    m = r.measurement
    conditions: set[str] = set()
    if r.status == "over budget" or r.violations:
        conditions.add("over budget")
    if r.status == "test failed":
        conditions.add("test failed")
    host_timed = gated_metric(m) == "host_us"
    if old is None:
        conditions.add("new")
        return Row(
            m.test_id,
            m.region,
            frozenset(conditions),
            (None, m.ops),
            (None, m.kernels),
            None,
            None,
            gated_metric(m),
            "",
            r.violations,
            (None, _peak(r)),
        )
    o = old.measurement
    c = compare(
        Entry.of(o),
        m,
        tolerance=tolerance_of(r, default),
        host_timed=host_timed,
        where=where,
    )
    conditions.add(c.status)
    diff = op_diff_text(o.op_counts, m.op_counts) if o.op_counts != m.op_counts else ""
    return Row(
        m.test_id,
        m.region,
        frozenset(conditions),
        (o.ops, m.ops),
        (o.kernels, m.kernels),
        c.device,
        c.host,
        c.gated,
        diff,
        (*c.failures, *r.violations, *c.notes),
        (_peak(old), _peak(r)),
    )


def _peak(r: Record) -> int | None:
    return r.measurement.memory.peak_bytes if r.measurement.memory is not None else None


def _removed(old: Record) -> Row:
    o = old.measurement
    return Row(
        o.test_id,
        o.region,
        frozenset({"removed"}),
        (o.ops, None),
        (o.kernels, None),
        None,
        None,
        gated_metric(o),
        "",
        (),
        (_peak(old), None),
    )


def counts(found: Sequence[Row]) -> dict[str, int]:
    """Rows per condition, worst first, zero counts left out."""
    return {c: n for c in CONDITIONS if (n := sum(c in r.conditions for r in found))}


def failing(found: Sequence[Row], fail_on: Sequence[str]) -> list[Row]:
    wanted = set(fail_on)
    return [r for r in found if r.conditions & wanted]


def ordered(found: Sequence[Row]) -> list[Row]:
    return sorted(found, key=lambda r: CONDITIONS.index(r.status))


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


def time_cell(change: TimeChange | None, gated: bool) -> str:
    """``15.0 → 15.5 µs +3%``; on the gated time, whether the interval left the noise."""
    if change is None:
        return "-"
    text = f"{change.baseline_median:,.1f} → {change.current_median:,.1f} µs {change.percent()}"
    if not gated:
        return text
    if change.verdict == "unjudged":
        return text + " (too few rounds to judge)"
    if change.verdict in ("regressed", "improved"):
        return f"{text} {change.verdict}"
    return text + " (within noise)"
