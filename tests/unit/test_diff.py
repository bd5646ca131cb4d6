"""Two reports region by region: rows, conditions and the tolerance a marker set, on the
real report in tests/data and edited copies of it (said where done)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_neuronperf.model import Record, Status
from pytest_neuronperf.reports import diff, diff_render
from pytest_neuronperf.reports.json import load

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"


def test_tolerance_of_reads_the_marker_as_the_budget_column_wrote_it() -> None:
    r = load(DATA).records[0]
    assert diff.tolerance_of(r, 0.10) == 0.10  # no tolerance on its marker
    plain = replace(r, budget="max_ops=6, tolerance=25%")
    assert diff.tolerance_of(plain, 0.10) == 0.25
    # One naming the region wins over one that names none, whichever comes first.
    both = replace(
        r,
        budget="max_ops=6, tolerance=25%; tolerance=2.5%, region='rmsnorm_naive'",
    )
    assert diff.tolerance_of(both, 0.10) == 0.025
    other = replace(r, budget="tolerance=40%, region='something_else'")
    assert diff.tolerance_of(other, 0.10) == 0.10


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
    found = {(r.test_id.rsplit("::", 1)[-1], r.region): r for r in diff.rows(base, new, 0.10)}
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
    report = load(DATA)
    return diff.rows(report, replace(report, records=records), 0.10)


def test_the_same_report_twice_is_all_same() -> None:
    rows = _same(load(DATA).records)
    assert {r.status for r in rows} == {"same"}
    # Ten rounds each side: the gated host time is judged, and within the noise.
    assert all(r.gated == "host_us" and r.host is not None for r in rows)
    assert all(diff.time_cell(r.host, True).endswith("+0% (within noise)") for r in rows)
