"""The HTML report a reviewer opens, from real pytest runs through pytester, drawn by a real
browser: the summary names what failed, the roofline has its roofs and a point per region
in its status colour, the fusion view has its bars, and the page fits 1280 px."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from chromium import colour_near, look, skip_without
from helpers import FAST

from pytest_neuronperf.reports.charts import roofline, svg
from pytest_neuronperf.reports.status import COLOURS

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Two variants of one computation in one test (the fusion view), and a matmul far to the
# right on the roofline. BREAK_FUSION turns the fused variant into the naive formula.
SUITE = """
import os, pytest, torch

H = 64

def norm_naive(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

def norm_fused(x, w):
    if os.environ.get("BREAK_FUSION"):
        return norm_naive(x, w)
    return torch.rms_norm(x, (H,), w, 1e-6)

@pytest.fixture
def xw():
    return torch.randn(4, H), torch.ones(H)

@pytest.mark.neuron_budget(max_ops=1, region="norm_fused")
def test_variants(neuron_profile, xw):
    neuron_profile(norm_naive, *xw)
    neuron_profile(norm_fused, *xw)

def test_a_matmul_whose_test_id_is_long_enough_to_be_elided_in_the_table(neuron_profile):
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    neuron_profile(torch.mm, a, b, name="matmul")
"""


@pytest.fixture
def page(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The report of a run that broke the fusion, against a baseline recorded before."""
    pytester.makepyfile(test_model=SUITE)
    pytester.runpytest_inprocess(*FAST, "--neuron-profile-update").assert_outcomes(passed=2)
    monkeypatch.setenv("BREAK_FUSION", "1")
    result = pytester.runpytest_inprocess(*FAST, "--neuron-profile-html=report.html")
    result.assert_outcomes(passed=1, failed=1)
    return pytester.path / "report.html"


def test_summary_lists_what_failed_first(page: Path) -> None:
    text = page.read_text()
    assert "<script" not in text and "https://" not in text
    title = re.search(r"<title>(.*?)</title>", text)
    assert title is not None and title.group(1) == "neuronperf report — 3 regions, 1 failed"
    summary = text[text.index('id="summary"') : text.index('id="table"')]
    counts = dict(re.findall(r'data-status="([^"]+)"[^>]*><b>(\d+)</b>', summary))
    assert counts["regressed"] == "1" and counts["over budget"] == "1"
    assert counts["same"] == "2" and counts["improved"] == "0" and counts["new"] == "0"
    failed = summary[summary.index("What failed") : summary.index("</ol>")]
    assert "norm_fused" in failed and "norm_naive" not in failed and "matmul" not in failed
    assert "dispatched 6 ops, budget max_ops=1" in failed
    # norm_naive is fine itself: its test failed on norm_fused's budget alone, so its own
    # figures stand (session/verdict.py judges each region on its own terms).
    assert "failed otherwise" not in summary
    # The table: the failed region's row first; the long id elided, whole on hover.
    table = text[text.index('id="table"') : text.index('id="roofline"')]
    rows = re.findall(r"<tr class=\"problem\">|<tr>", table)
    assert rows[:2] == ["<tr>", '<tr class="problem">']  # header row, then the failure
    long_id = "test_model.py::test_a_matmul_whose_test_id_is_long_enough_to_be_elided_in_the_table"
    assert f'title="{long_id}"' in table and f">{long_id}<" not in table
    # The fusion view: the fused variant's op count against its baseline, in red.
    fusion_view = text[text.index('id="fusion"') : text.index('id="regions"')]
    assert re.search(r'fill="#dc2626"[^>]*>6 \(\d+\), was 1<', fusion_view)
    assert "norm_naive" in fusion_view and ", was" not in fusion_view.split("norm_fused")[0]
    # Per-op bars current beside baseline, and the op diff, as before.
    assert 'class="bar-current"' in text and 'class="bar-baseline"' in text
    assert "+ aten::mul ×3" in text and "- aten::rms_norm ×1" in text


def test_roofline_places_each_region_where_its_numbers_say(page: Path) -> None:
    """The matmul's point, placed by the axes' own tick labels: its intensity and FLOP/s
    worked out here from the shapes and its device time land where the ticks say."""
    text = page.read_text()
    start = text.index("<svg", text.index('id="roofline"'))
    root = ET.fromstring(text[start : text.index("</svg>", start) + 6])
    points = [c for c in root.iter(f"{NS}circle") if c.get("class") == "point"]
    assert sorted(c.get("data-label", "") for c in points) == ["matmul", "norm_fused", "norm_naive"]
    by_label = {c.get("data-label"): c for c in points}
    assert by_label["norm_fused"].get("data-status") == "regressed"
    assert by_label["norm_fused"].get("fill") == COLOURS["regressed"]
    assert by_label["matmul"].get("fill") == COLOURS["same"]
    roofs = [ln for ln in root.iter(f"{NS}line") if "roof" in (ln.get("class") or "").split()]
    assert sorted(ln.get("class") or "" for ln in roofs) == [
        "roof roof-compute",
        "roof roof-memory",
    ]
    compute = next(ln for ln in roofs if ln.get("class") == "roof roof-compute")
    assert compute.get("y1") == compute.get("y2")  # flat
    # 64x64 @ 64x64: 2*64^3 FLOPs; reads two matrices and writes one, 64*64 floats each.
    flops = 2 * 64**3
    intensity = flops / (3 * 64 * 64 * 4)
    section = text[text.index("region <code>matmul</code>") :]
    found = re.search(r"device ([0-9,.]+)", section)
    assert found is not None
    achieved = flops / (float(found.group(1).replace(",", "")) * 1e-6)
    assert math.isclose(
        _on_axis(root, "tick-x", "x", intensity),
        float(by_label["matmul"].get("cx", "nan")),
        abs_tol=0.6,
    )
    assert math.isclose(
        _on_axis(root, "tick-y", "y", achieved),
        float(by_label["matmul"].get("cy", "nan")),
        abs_tol=0.6,
    )


NS = "{http://www.w3.org/2000/svg}"


def _on_axis(root: ET.Element, cls: str, coord: str, value: float) -> float:
    """The pixel of ``value`` on a log axis, from its first and last tick labels."""
    ticks = [t for t in root.iter(f"{NS}text") if t.get("class") == cls]
    assert len(ticks) >= 2
    (v0, p0), (v1, p1) = (
        (float(t.get("data-value", "nan")), float(t.get(coord, "nan")))
        for t in (ticks[0], ticks[-1])
    )
    if coord == "y":
        p0, p1 = p0 - 4, p1 - 4  # the y labels sit 4 px below their tick, on the baseline
    return p0 + math.log10(value / v0) / math.log10(v1 / v0) * (p1 - p0)


@pytest.mark.slow
@skip_without
def test_pictures_are_drawn_in_a_real_browser_within_1280_px(page: Path, tmp_path: Path) -> None:
    seen, placed, img = look(
        page,
        tmp_path,
        "svg, circle.point, line.roof, rect.fusion-device, rect.fusion-host, rect.fusion-ops",
    )
    # No horizontal scroll at 1280 px, and every picture inside the window.
    assert 1200 < seen.client_width <= 1280 and seen.scroll_width <= seen.client_width
    for svg_el in seen.of("svg") + seen.of("SVG"):
        left, _, width, _ = svg_el["box"]
        assert left >= 0 and left + width <= seen.client_width + 0.5, svg_el
    # Each region's point is drawn in its status colour (the ones not covered by another).
    points = placed.of("point")
    assert {p["status"] for p in points} == {"regressed", "same"}
    for i, p in enumerate(points):
        (x, y), later = p["points"][0], points[i + 1 :]
        if any(math.dist((x, y), q["points"][0]) < 13 for q in later):
            continue
        assert colour_near(img, x, y, COLOURS[p["status"]]), p
    # Both roofs are on screen in the roof colour, along their length.
    roofs = placed.of("roof")
    assert len(roofs) == 2
    for roof in roofs:
        (x1, y1), (x2, y2) = roof["points"]
        for t in (0.25, 0.5, 0.75):
            assert colour_near(img, x1 + (x2 - x1) * t, y1 + (y2 - y1) * t, roofline.ROOF)
    # The fusion view: a device, host and ops bar per variant, in their colours.
    for cls, want in (
        ("fusion-device", svg.DEVICE),
        ("fusion-host", svg.HOST),
        ("fusion-ops", svg.SLATE),
    ):
        bars = placed.of(cls)
        assert len(bars) == 2, cls
        for bar in bars:
            left, top, width, _ = bar["box"]
            assert colour_near(img, left + min(3, width / 2), top + 2, want, radius=1), bar


@pytest.mark.slow
@skip_without
def test_the_browser_checks_catch_a_page_that_overflows(tmp_path: Path) -> None:
    """The width and colour checks above can fail: a page 1500 px wide scrolls sideways,
    and a colour that was not drawn is not found."""
    wide = tmp_path / "wide.html"
    wide.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><svg xmlns="http://www.w3.org/2000/svg" '
        'width="1500" height="40"><rect class="r" x="0" y="0" width="1500" height="40" '
        'fill="#2563eb"/></svg></body></html>'
    )
    seen, placed, img = look(wide, tmp_path, "rect")
    assert seen.scroll_width > seen.client_width
    (rect,) = placed.of("r")
    x, y = rect["box"][0] + 10, rect["box"][1] + 20
    assert colour_near(img, x, y, "#2563eb") and not colour_near(img, x, y, "#dc2626")
