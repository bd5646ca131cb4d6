"""``neuronperf history`` over reports the plugin writes through pytester. The ten-report
creep is synthetic: copies of one real report with the timed samples of one region scaled
by 1.03 per merge and a commit per copy (each step inside the 10% tolerance, +30% first to
last); the op change is an edited op count. Bad input is one line and exit 2."""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from chromium import colour_near, look, skip_without

from pytest_neuronperf.cli.main import main
from pytest_neuronperf.reports.charts import history, svg

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SUITE = """
import torch

def test_model(neuron_profile):
    x = torch.randn(4, 64)
    neuron_profile(torch.relu, x, name="relu")
    neuron_profile(torch.tanh, x, name="tanh")
"""
TIMED = ("device_us", "host_us", "host_relative", "host_relative_dispatch")
NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def real(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    pytester.makepyfile(test_model=SUITE)
    pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        "--neuron-profile-rounds=3",
        "--neuron-profile-warmup=1",
        "--neuron-profile-json=r.json",
    ).assert_outcomes(passed=1)
    doc: dict[str, Any] = json.loads((pytester.path / "r.json").read_text())
    return doc


def _merge(doc: dict[str, Any], k: int, factors: dict[str, float]) -> dict[str, Any]:
    """Report ``k`` of a synthetic series: commit k, committed on day k+1 (but written in
    reverse order, so that only the commit time orders them right), each region's timed
    samples times its factor."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    out["git"] = {
        "commit": f"{k:x}" * 40,
        "branch": "main",
        "dirty": False,
        "commit_time": f"2026-01-{k + 1:02d}T10:00:00+01:00",
    }
    out["generated_at"] = f"2026-02-{28 - k:02d}T10:00:00+00:00"
    for rec in out["measurements"]:
        m = rec["measurement"]
        f = factors.get(m["region"], 1.0)
        for key in TIMED:
            stats = m.get(key)
            if stats:
                stats["samples"] = [v * f for v in stats["samples"]]
                stats["median"] = stats["median"] * f
    return out


def _pinned(doc: dict[str, Any], **medians: float) -> dict[str, Any]:
    """``doc`` with each measurement's named times set to constant rounds of that value."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    for rec in out["measurements"]:
        m = rec["measurement"]
        for key, value in medians.items():
            n = m[key]["n"]
            m[key] = {"iqr": 0.0, "max": value, "median": value, "min": value, "n": n,
                      "samples": [value] * n}  # fmt: skip
    return out


def _series(
    real: dict[str, Any], tmp_path: Path, factor: float, jump_at: int | None = None
) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    for k in range(10):
        f = factor**k if jump_at is None else (1.4 if k >= jump_at else 1.0)
        doc = _merge(real, k, {"relu": f})
        if k >= 6:
            # tanh gained an op at merge 6: an edited op count, as a broken fusion would.
            tanh = next(r for r in doc["measurements"] if r["measurement"]["region"] == "tanh")
            tanh["measurement"]["ops"] = 2
            tanh["measurement"]["op_counts"]["aten::add"] = 1
        # File names in neither commit nor write order.
        (folder / f"report-{(k * 7) % 10}.json").write_text(json.dumps(doc))
    (folder / "coverage.json").write_text('{"meta": {}}')  # CI artifacts hold other JSON
    return folder


def _charts(page: str) -> dict[str, ET.Element]:
    """Each region's trend chart, by region name."""
    out = {}
    for card in re.finditer(
        r'<div class="card".*?<code>([^<]+)</code>.*?(<svg .*?</svg>)', page, re.DOTALL
    ):
        out[card.group(1)] = ET.fromstring(card.group(2))
    return out


def _ys(chart: ET.Element, cls: str) -> list[tuple[float, float]]:
    line = next(p for p in chart.iter(f"{NS}polyline") if p.get("class") == cls)
    return [
        (float(a), float(b))
        for a, b in (xy.split(",") for xy in (line.get("points") or "").split())
    ]


def test_a_creep_of_3_percent_a_merge_is_plain_to_see(
    real: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _series(real, tmp_path, 1.03)
    out = tmp_path / "history.html"
    assert main(["history", str(folder), "-o", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert "skipped 1 JSON file(s) that are not neuronperf reports" in err
    page = out.read_text()
    assert "<script" not in page
    assert "<title>neuronperf history — 2 regions, 10 reports, 1 crept</title>" in page
    assert "1 of 2 regions crept: slower by more than 10% from first to last" in page
    # Ranked first, flagged, +30% (1.03^9 = 1.305) though no step passed +3%.
    first_row = page[page.index("<tbody>") :].split("</tr>")[0]
    assert "relu" in first_row and "crept" in first_row
    assert re.findall(r"<td class=num>([^<]+)</td>", first_row) == [
        "10",
        "+30%",
        "+30%",
        "+3%",
        "1 → 1",
    ]
    assert re.search(r"relu .* 10 .* \+30% .* \+30% .* \+3% .* crept", printed)
    charts = _charts(page)
    # In commit order: x rises left to right and the ticks read commit 0 to 9.
    ticks = [t.text for t in charts["relu"].iter(f"{NS}text") if t.get("class") == "tick-x"]
    assert ticks == [f"{k:x}" * 7 for k in range(10)]
    relu = next(
        r["measurement"] for r in real["measurements"] if r["measurement"]["region"] == "relu"
    )
    for cls, metric in (("trend-device", "device_us"), ("trend-host", "host_us")):
        pts = _ys(charts["relu"], cls)
        assert len(pts) == 10
        assert all(b[0] > a[0] and b[1] < a[1] for a, b in itertools.pairwise(pts))
        # Each point where the chart's own y ticks put the real median times 1.03 per merge.
        for k, (_, y) in enumerate(pts):
            want = _on_y_axis(charts["relu"], relu[metric]["median"] * 1.03**k)
            assert y == pytest.approx(want, abs=0.15), (cls, k)
    # tanh: flat, not flagged, its op change marked once, at merge 6.
    rings = [c for c in charts["tanh"].iter(f"{NS}circle") if c.get("class") == "ops-change"]
    assert len(rings) == 1
    device = _ys(charts["tanh"], "trend-device")
    assert float(rings[0].get("cx", "nan")) == pytest.approx(device[6][0], abs=0.1)
    labels = [
        t.text for t in charts["tanh"].iter(f"{NS}text") if t.get("class") == "ops-change-label"
    ]
    assert labels == ["ops 1→2"]
    assert not [c for c in charts["relu"].iter(f"{NS}circle") if c.get("class") == "ops-change"]


def _on_y_axis(chart: ET.Element, value: float) -> float:
    """The y pixel of ``value`` by the chart's first and last y tick labels."""
    ticks = [t for t in chart.iter(f"{NS}text") if t.get("class") == "tick-y"]
    assert len(ticks) >= 2
    # The labels sit 4 px below their grid line, on their baseline.
    (v0, p0), (v1, p1) = (
        (float(t.get("data-value", "nan")), float(t.get("y", "nan")) - 4)
        for t in (ticks[0], ticks[-1])
    )
    return p0 + (value - v0) / (v1 - v0) * (p1 - p0)


def test_a_single_jump_is_a_regression_not_a_creep(real: dict[str, Any], tmp_path: Path) -> None:
    folder = _series(real, tmp_path, 1.0, jump_at=5)
    out = tmp_path / "history.html"
    assert main(["history", str(folder), "-o", str(out)]) == 0
    page = out.read_text()
    assert "0 crept</title>" in page and "No region crept" in page
    first_row = page[page.index("<tbody>") :].split("</tr>")[0]
    assert "relu" in first_row and "+40%" in first_row and "crept" not in first_row


def test_the_tolerance_decides_what_crept(real: dict[str, Any], tmp_path: Path) -> None:
    folder = _series(real, tmp_path, 1.03)
    out = tmp_path / "history.html"
    assert main(["history", str(folder), "-o", str(out), "--tolerance", "35"]) == 0
    assert "0 crept</title>" in out.read_text()


def test_reads_schema_1_reports_beside_schema_2(real: dict[str, Any], tmp_path: Path) -> None:
    """One report turned into version 1 (no git): ordered by the time it was written."""
    old = json.loads(json.dumps(real))
    old["schema_version"] = 1
    del old["git"], old["ci"]
    old["generated_at"] = "2025-12-01T00:00:00+00:00"
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(_merge(real, 3, {"relu": 2.0})))
    out = tmp_path / "h.html"
    assert (
        main(["history", str(tmp_path / "new.json"), str(tmp_path / "old.json"), "-o", str(out)])
        == 0
    )
    page = out.read_text()
    ticks = [t.text for t in _charts(page)["relu"].iter(f"{NS}text") if t.get("class") == "tick-x"]
    assert ticks == ["2025-12-01 00:00", "3333333"]
    assert "+100%" in page


@pytest.mark.parametrize("case", ["missing", "schema", "malformed", "empty dir"])
def test_bad_input_is_one_line_and_exit_2(
    real: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    target = tmp_path / "in"
    if case == "missing":
        target = tmp_path / "nope.json"
        says = "no such file"
    elif case == "schema":
        real["schema_version"] = 9
        target.write_text(json.dumps(real))
        says = "report schema version 9"
    elif case == "malformed":
        # In a directory: a damaged report is an error, not a file to skip.
        target.mkdir()
        del real["measurements"][0]["measurement"]["ops"]
        (target / "r.json").write_text(json.dumps(real))
        says = "measurement 0 is malformed"
    else:
        target.mkdir()
        says = "no report with measurements in"
    status = main(["history", str(target), "-o", str(tmp_path / "h.html")])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and not (tmp_path / "h.html").exists()
    assert err.count("\n") == 1 and says in err, err


@pytest.mark.slow
@skip_without
def test_trend_charts_are_drawn_in_a_real_browser(
    real: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Device and host times pinned far apart: measured ones may lie within a dot's width of
    # each other, and the device dot, drawn on top, then hides the host dot's colour.
    folder = _series(_pinned(real, device_us=40.0, host_us=10.0), tmp_path, 1.03)
    out = tmp_path / "history.html"
    assert main(["history", str(folder), "-o", str(out)]) == 0
    seen, placed, img = look(
        out, tmp_path, "svg, circle.trend-device-point, circle.trend-host-point, circle.ops-change"
    )
    assert 1200 < seen.client_width <= 1280 and seen.scroll_width <= seen.client_width
    for chart in seen.of("trend"):
        left, _, width, _ = chart["box"]
        assert left >= 0 and left + width <= seen.client_width + 0.5
    for cls, want in (("trend-device-point", svg.DEVICE), ("trend-host-point", svg.HOST)):
        dots = placed.of(cls)
        assert len(dots) == 20, cls  # ten reports, two regions
        for dot in dots:
            x, y = dot["points"][0]
            assert colour_near(img, x, y, want, radius=1), dot
    rings = placed.of("ops-change")
    assert len(rings) == 1
    (x, y) = rings[0]["points"][0]
    # The ring (radius 8) around the point where the ops changed, in its own colour.
    assert colour_near(img, x + 8, y, history.OPS_CHANGED, radius=1)
    assert colour_near(img, x - 8, y, history.OPS_CHANGED, radius=1)
