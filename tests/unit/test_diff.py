"""Two reports region by region: rows, conditions and the tolerance a marker set, on the
real report in tests/data and edited copies of it (said where done)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_neuronperf.gate import pairs
from pytest_neuronperf.model import Measurement, Pair, Record, Status
from pytest_neuronperf.reports import diff, diff_render
from pytest_neuronperf.reports.json import load
from pytest_neuronperf.stats import Stats

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"


def test_each_region_is_judged_at_the_tolerance_its_record_carries() -> None:
    """The gate put the marker's tolerance on the record: the pair is judged at it, and at
    the default where the record carries none (a report from before it was kept)."""
    base = load(DATA)
    slower = tuple(replace(r, measurement=_slower(r.measurement, 1.3)) for r in base.records)
    assert {p.status for p in paired(base.records, slower, 0.10)} == {"regressed"}
    lenient = tuple(replace(r, tolerance=0.5) for r in slower)
    assert {p.status for p in paired(base.records, lenient, 0.10)} == {"same"}
    # At the default, when the record says nothing.
    assert {p.status for p in paired(base.records, slower, 0.5)} == {"same"}


def _slower(m: Measurement, factor: float) -> Measurement:
    def times(s: Stats | None) -> Stats | None:
        return None if s is None else Stats.of([v * factor for v in s.samples])

    return replace(
        m,
        host_relative=times(m.host_relative),
        host_relative_dispatch=times(m.host_relative_dispatch),
    )


def paired(base: tuple[Record, ...], new: tuple[Record, ...], tolerance: float) -> list[Pair]:
    return pairs.rows(base, new, tolerance, str(DATA))


def test_rows_pair_regions_and_name_what_came_and_went() -> None:
    """The new side is an edited copy: one region renamed (gone and new), one with two
    more ops, one over its budget."""
    base = load(DATA)
    recs = list(base.records)
    m0 = recs[0].measurement
    recs[0] = replace(
        recs[0],
        measurement=replace(
            m0,
            ops=m0.ops + 2,
            op_counts={**m0.op_counts, "aten::add": m0.op_counts["aten::add"] + 2},
        ),
    )
    recs[1] = replace(recs[1], measurement=replace(recs[1].measurement, region="rmsnorm_v2"))
    recs[2] = replace(recs[2], status=Status.OVER_BUDGET, violations=("neuron_budget: too many",))
    new = replace(base, records=tuple(recs))
    found = {
        (r.test_id.rsplit("::", 1)[-1], r.region): r
        for r in paired(base.records, new.records, 0.10)
    }
    naive = found[("test_naive", "rmsnorm_naive")]
    assert naive.status == "regressed" and naive.ops == (6, 8)
    assert naive.op_diff == "+ aten::add ×2"
    assert found[("test_rms_norm_is_one_op", "rmsnorm_v2")].status == "new"
    assert found[("test_rms_norm_is_one_op", "rmsnorm_fused")].status == "removed"
    compiled = found[("test_compiled_is_one_fused_kernel", "rmsnorm_compiled")]
    assert compiled.conditions == {"over budget", "same"} and compiled.status == "over budget"
    rows = list(found.values())
    assert diff.counts(rows) == {
        "regressed": 1,
        "over budget": 1,
        "new": 1,
        "removed": 1,
        "same": 3,
    }
    assert diff.failing(rows, ["removed"]) == [found[("test_rms_norm_is_one_op", "rmsnorm_fused")]]
    line = diff_render.summary(rows)
    assert line.startswith("1 regressed (rmsnorm_naive), 1 over budget (rmsnorm_compiled),")
    assert line.endswith("of 6 regions")


def test_count_and_time_cells() -> None:
    assert diff.count_cell((1, 6)) == "1 → 6"
    assert diff.count_cell((3, 3)) == "3"
    assert diff.count_cell((None, 2)) == "2" and diff.count_cell((2, None)) == "2 → gone"
    assert diff.time_cell(None, True) == "-"


def _same(records: tuple[Record, ...]) -> list[diff.Row]:
    return paired(load(DATA).records, records, 0.10)


def test_the_same_report_twice_is_all_same() -> None:
    rows = _same(load(DATA).records)
    assert {r.status for r in rows} == {"same"}
    # Ten rounds each side: the gated host time is judged, and within the noise.
    assert all(r.gated == "host_us" and r.host is not None for r in rows)
    assert all(diff.time_cell(r.host, True).endswith("+0% (within noise)") for r in rows)
