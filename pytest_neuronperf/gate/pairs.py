"""Two reports region by region (``neuronperf compare``), judged by the rule the baseline
gate uses (compare.py): counts exactly, times by the bootstrap interval where both sides
have enough rounds. The older report plays the baseline; the newer one's own budget
verdicts are carried over, and each region's tolerance is the one its record carries."""

from __future__ import annotations

from collections.abc import Sequence

from ..baselines.entry import Entry
from ..model import Outcome, Pair, Record, Status
from ..trace.summary import op_diff_text
from .compare import compare


def rows(base: Sequence[Record], new: Sequence[Record], tolerance: float, where: str) -> list[Pair]:
    """``tolerance``: where a record carries none (reports from before it was kept)."""
    before = {(r.measurement.test_id, r.measurement.region): r for r in base}
    after = {(r.measurement.test_id, r.measurement.region): r for r in new}
    out = [_row(before.get(key), r, tolerance, where) for key, r in after.items()]
    out += [_removed(r) for key, r in before.items() if key not in after]
    return out


def _gated(r: Record) -> str:
    # Reports from before the record said: cpu is the backend that times on the host.
    return r.gated or ("host_us" if r.measurement.backend == "cpu" else "device_us")


def _row(old: Record | None, r: Record, default: float, where: str) -> Pair:
    m = r.measurement
    conditions: set[str] = set()
    if r.status == Status.OVER_BUDGET or r.violations:
        conditions.add(Outcome.OVER_BUDGET)
    if r.status == Status.TEST_FAILED:
        conditions.add(Outcome.TEST_FAILED)
    gated = _gated(r)
    if old is None:
        conditions.add(Outcome.NEW)
        counts = (None, m.ops), (None, m.kernels)
        return Pair(m.test_id, m.region, frozenset(conditions), *counts, None, None, gated, "",
                    r.violations, None, (None, _peak(r)))  # fmt: skip
    o = old.measurement
    tolerance = r.tolerance if r.tolerance is not None else default
    c = compare(Entry.of(o), m, tolerance=tolerance, host_timed=gated == "host_us", where=where)
    conditions.add(c.status)
    diff = op_diff_text(o.op_counts, m.op_counts) if o.op_counts != m.op_counts else ""
    return Pair(
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
        c.judged,
        (_peak(old), _peak(r)),
    )


def _peak(r: Record) -> int | None:
    return r.measurement.memory.peak_bytes if r.measurement.memory is not None else None


def _removed(old: Record) -> Pair:
    o = old.measurement
    counts = (o.ops, None), (o.kernels, None)
    return Pair(o.test_id, o.region, frozenset({Outcome.REMOVED}), *counts, None, None,
                _gated(old), "", (), None, (_peak(old), None))  # fmt: skip
