"""The HTML report's parts on a real report of the RMSNorm example (tests/data): the one
status per region, the summary, the table's elision, the fusion groups and their ranking.
Regressions are made by editing copies of the real records (said where done)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_neuronperf.model import BaselineStatus, Record, Status
from pytest_neuronperf.reports import html
from pytest_neuronperf.reports.charts import fusion
from pytest_neuronperf.reports.json import load
from pytest_neuronperf.reports.status import conditions, counts, failed, status_of
from pytest_neuronperf.stats import Stats

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"


@pytest.fixture
def records() -> list[Record]:
    return list(load(DATA).records)


def _regressed(r: Record) -> Record:
    """A copy of a real record as if its baseline had regressed and its budget failed."""
    return replace(
        r,
        status=Status.OVER_BUDGET,
        violations=("neuron_budget: region 'rmsnorm_fused' dispatched 6 ops, budget max_ops=1",),
        baseline=BaselineStatus.REGRESSED,
        baseline_cell="regressed +40%",
        baseline_notes=("neuronperf baseline: region 'rmsnorm_fused' dispatched 6 ops",),
    )


def test_one_status_per_region_the_worst_of_budget_and_baseline(records: list[Record]) -> None:
    r = records[0]
    assert status_of(r) == "new"
    bad = _regressed(r)
    assert conditions(bad) == ["regressed", "over budget"] and status_of(bad) == "regressed"
    over = replace(r, status=Status.OVER_BUDGET, violations=("x",), baseline=BaselineStatus.SAME)
    assert status_of(over) == "over budget"
    assert (
        status_of(replace(r, status=Status.TEST_FAILED, baseline=BaselineStatus.SAME))
        == "test failed"
    )
    assert status_of(replace(r, baseline="")) == "ok"
    # Both verdicts count: one region regressed and over budget is one of each.
    c = counts([bad, over, r])
    assert (c["regressed"], c["over budget"], c["new"], c["same"]) == (1, 2, 1, 1)
    assert failed([r, over, bad]) == [bad, over]


def test_summary_counts_and_what_failed_come_first(records: list[Record]) -> None:
    records[1] = _regressed(records[1])
    page = html.render(records, "note")
    assert "<script" not in page
    assert re.search(r"<title>neuronperf report — 5 regions, 1 failed</title>", page)
    summary = page[page.index('id="summary"') : page.index('id="table"')]
    assert re.findall(r'data-status="([^"]+)"[^>]*><b>(\d+)</b>', summary) == [
        ("regressed", "1"),
        ("over budget", "1"),
        ("improved", "0"),
        ("new", "4"),
        ("same", "0"),
    ]
    assert "dispatched 6 ops, budget max_ops=1" in summary
    assert page.index('id="summary"') < page.index('id="table"') < page.index('id="roofline"')
    # The failed region heads the table and the per-region sections.
    table = page[page.index("<tbody>") : page.index("</tbody>")]
    assert table.index("test_rms_norm_is_one_op") < table.index("test_naive")
    regions = page[page.index('id="regions"') :]
    assert regions.index("test_rms_norm_is_one_op") < regions.index("test_naive")


def test_nothing_failed_says_so(records: list[Record]) -> None:
    page = html.render(records)
    assert "Nothing failed: 5 regions within budget and baseline." in page
    assert "<title>neuronperf report — 5 regions, 0 failed</title>" in page


def test_long_test_ids_are_elided_in_the_table_and_whole_on_hover(records: list[Record]) -> None:
    long_id = "tests/a/very/deep/package/test_module.py::test_x[" + "p" * 40 + "]"
    m = replace(records[0].measurement, test_id=long_id)
    page = html.render([replace(records[0], measurement=m)])
    table = page[page.index("<tbody>") : page.index("</tbody>")]
    assert f'title="{long_id}"' in table
    shown = re.search(r'title="[^"]+">([^<]+)</a>', table)
    assert shown is not None and len(shown.group(1)) == html.TEST_ID_CHARS


def test_markup_in_a_test_id_is_escaped_and_every_svg_parses(records: list[Record]) -> None:
    m = replace(records[0].measurement, test_id="t.py::test[<b>&'\"]", region="r<1>")
    page = html.render([replace(records[0], measurement=m), *records[1:]])
    assert "<b>&" not in page and "r<1>" not in page
    for found in re.finditer(r"<svg .*?</svg>", page, re.DOTALL):
        ET.fromstring(found.group(0))  # well-formed: nothing unescaped inside


def test_fusion_groups_by_name_family_and_by_test() -> None:
    assert fusion.family("rmsnorm_naive") == "rmsnorm"
    assert fusion.family("attn.fwd.flash") == "attn.fwd"
    assert fusion.family("relu") == "relu" and fusion.family("_private") == "_private"


def test_the_rmsnorm_variants_form_one_group(records: list[Record]) -> None:
    groups = fusion.groups(records)
    # The family holds all five; the test that measured two of them is inside it already.
    assert [(g.title, len(g.members)) for g in groups] == [("rmsnorm_*", 5)]
    assert fusion.labels(groups[0].members)[0] == "rmsnorm_naive · test_naive"
    other = [
        replace(r, measurement=replace(r.measurement, region=name))
        for r, name in zip(records[3:5], ("attention", "mlp"), strict=True)
    ]
    # Unrelated names measured in one test still sit side by side, as that test's group.
    assert [g.why for g in fusion.groups(other)] == ["regions of one test"]
    page = html.render(records)
    assert page.count('class="fusion-device"') == 5 and page.count('class="fusion-ops"') == 5


def _variant(r: Record, samples: list[float]) -> Record:
    m = replace(r.measurement, host_us=Stats.of(samples), device_us=Stats.of(samples))
    return replace(r, measurement=m)


def test_fusion_ranks_say_slower_only_outside_the_noise(records: list[Record]) -> None:
    """Edited copies: the same region three times with chosen host samples."""
    base = [10.0, 10.2, 9.9, 10.1, 10.0, 10.3, 9.8]
    group = fusion.Group(
        "g",
        "test",
        (
            _variant(records[0], base),
            _variant(records[1], [v * 1.5 for v in base]),
            _variant(records[2], [v * 1.003 for v in base[::-1]]),
            _variant(records[3], [15.0, 15.2, 14.9]),  # too few rounds to judge
        ),
    )
    ranks = [rank.text for rank in fusion.ranks(group)]
    assert ranks[0] == "fastest"
    assert ranks[1] == "×1.50 slower"
    assert ranks[2] == "×1.00 (within noise)"
    assert ranks[3].endswith("(unjudged)")
    assert "Fastest on host µs" in fusion.verdict(group)


def test_roofline_leaves_out_what_has_no_intensity_and_says_why(records: list[Record]) -> None:
    """Edited copies: one region as a with-region (no work counted), one moving bytes only."""
    from pytest_neuronperf.reports.charts import roofline

    m0, m1 = records[0].measurement, records[1].measurement
    assert m1.work is not None
    uncounted = replace(records[0], measurement=replace(m0, work=None))
    copying = replace(records[1], measurement=replace(m1, work=replace(m1.work, flops=0)))
    pts, left_out = roofline.points([uncounted, copying, *records[2:]])
    assert [p.label for p in pts] == ["rmsnorm_compiled", "rmsnorm_naive", "rmsnorm_fused"]
    assert "not counted" in left_out[0] and "no intensity on a log axis" in left_out[1]
    # One roof per device peak, with the device and dtype in its name.
    assert [r.what for r in roofline.roofs(records)] == ["cpu:x86_64, float32"]
    page = html.render([uncounted, copying, *records[2:]])
    assert "Not on the plot:" in page
    # The same region from two tests at one spot reads once, "×2".
    plot = roofline.plot(*roofline.points(records)[:1], roofline.roofs(records))
    labels = re.findall(r'class="point-label"[^>]*>([^<]+)<', plot)
    assert sorted(labels) == ["rmsnorm_compiled", "rmsnorm_fused ×2", "rmsnorm_naive ×2"]
