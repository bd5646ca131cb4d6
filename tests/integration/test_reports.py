"""The reports people and machines read: JSON, JUnit, Markdown, HTML (in a real browser),
and progress lines for slow measurements. All from real pytest runs through pytester."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from chromium import screenshot, skip_without
from helpers import FAST, FUSION_SUITE

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def broken_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A baseline recorded with the fusion intact, then a run where it is broken."""
    pytester.makepyfile(test_model=FUSION_SUITE)
    pytester.runpytest_inprocess(*FAST, "--neuron-profile-update").assert_outcomes(passed=2)
    monkeypatch.setenv("BREAK_FUSION", "1")
    return pytester


def test_json_report_validates_against_its_schema(broken_run: pytest.Pytester) -> None:
    from pytest_neuronperf.reports.json import schema

    result = broken_run.runpytest_inprocess(*FAST, "--neuron-profile-json=out/report.json")
    result.assert_outcomes(passed=1, failed=1)
    doc = json.loads((broken_run.path / "out" / "report.json").read_text())
    jsonschema.validate(doc, schema())
    assert doc["schema_version"] == 2 and doc["exit_status"] == 1
    by_region = {r["measurement"]["region"]: r for r in doc["measurements"]}
    assert by_region["rmsnorm"]["status"] == "over budget"
    assert by_region["rmsnorm"]["baseline"] == "regressed"
    assert by_region["rmsnorm"]["measurement"]["ops"] == 6
    assert by_region["relu"]["measurement"]["op_counts"] == {"aten::relu": 1}
    assert doc["environments"][0]["device_kind"].startswith("cpu:")


def test_junit_has_the_measurements_as_properties(broken_run: pytest.Pytester) -> None:
    result = broken_run.runpytest_inprocess(*FAST, "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=1)
    root = ET.parse(broken_run.path / "junit.xml").getroot()
    props = {
        case.get("name"): {p.get("name"): p.get("value", "") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    fused = props["test_fused"]
    assert fused["neuronperf.rmsnorm.ops"] == "6"
    assert fused["neuronperf.rmsnorm.status"] == "over budget"
    # The one word every report shows: regressed ranks before over budget (issue 25, item 3).
    assert fused["neuronperf.rmsnorm.outcome"] == "regressed"
    assert fused["neuronperf.rmsnorm.baseline"].startswith("regressed")
    assert float(fused["neuronperf.rmsnorm.device_us"]) > 0
    assert props["test_plain"]["neuronperf.relu.ops"] == "1"


def test_markdown_summary_puts_regressions_first_with_the_op_diff(
    broken_run: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = broken_run.path / "step_summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    result = broken_run.runpytest_inprocess(*FAST, "--neuron-profile-markdown=summary.md")
    result.assert_outcomes(passed=1, failed=1)
    text = (broken_run.path / "summary.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| ❌", "| ✅"))]
    assert "rmsnorm" in rows[0] and "❌" in rows[0]  # the regression comes first
    assert "relu" in rows[1]
    assert "+ aten::mul ×3" in text and "- aten::rms_norm ×1" in text
    appended = step_summary.read_text()
    assert appended.startswith("earlier step\n") and text in appended


def test_html_report_is_self_contained_and_has_the_op_diff(broken_run: pytest.Pytester) -> None:
    result = broken_run.runpytest_inprocess(*FAST, "--neuron-profile-html=report.html")
    result.assert_outcomes(passed=1, failed=1)
    html = (broken_run.path / "report.html").read_text()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html and "<script" not in html
    assert "+ aten::mul ×3" in html and "- aten::rms_norm ×1" in html
    assert 'class="bar-current"' in html and 'class="bar-baseline"' in html


@skip_without
@pytest.mark.slow  # a chromium subprocess
def test_html_chart_is_drawn_in_a_real_browser(broken_run: pytest.Pytester, tmp_path: Path) -> None:
    result = broken_run.runpytest_inprocess(*FAST, "--neuron-profile-html=report.html")
    result.assert_outcomes(passed=1, failed=1)
    pixels = screenshot(broken_run.path / "report.html", tmp_path, 1600)
    colours = {c for _, c in pixels.getcolors(maxcolors=1 << 20) or []}
    # The bars' own colours (reports/html.py's CURRENT and BASELINE) are on screen: the chart drew.
    assert (0x25, 0x63, 0xEB) in colours
    assert (0x9C, 0xA3, 0xAF) in colours


def test_slow_phase_says_what_it_is_doing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_slow="""
import time
import torch
from pytest_neuronperf.measure.progress import WATCH

def slow(calls=[]):
    calls.append(1)
    if len(calls) == 1:
        # As slow as a compile: past the 2 s threshold, and until the watch thread has said
        # its line, however late a busy machine runs it.
        time.sleep(2.1)
        while WATCH.pending():
            time.sleep(0.05)
        time.sleep(0.1)

def test_slow(neuron_profile):
    neuron_profile(slow)

def test_after(neuron_profile):
    neuron_profile(torch.relu, torch.ones(8))
"""
    )
    result = pytester.runpytest_inprocess(*FAST)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*neuronperf: test_slow.py::test_slow 'slow' first call (torch.compile compiles here): "
            "still running...",
            "*neuronperf: test_slow.py::test_slow 'slow' first call (*): took 2.* s",
        ]
    )
    # pytest's dots go on after the file's name again, right after our lines: neither alone
    # on a line nor after a name left between them.
    lines = result.stdout.lines
    running = next(i for i, line in enumerate(lines) if line.endswith("still running..."))
    took = next(i for i, line in enumerate(lines) if ": took 2." in line)
    assert lines[running - 1].strip() == "test_slow.py", lines[running - 1 : took + 2]
    assert not any(line.startswith("test_slow.py") for line in lines[running:took])
    after = lines[took + 1]
    assert after.startswith("test_slow.py ..") and after.endswith("100%]"), after
    assert "timing 3 rounds" not in result.stdout.str()  # fast phases stay quiet


def test_declared_variants_reach_the_json_and_the_html(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_attn="""
import torch


def test_attention(neuron_profile):
    q = torch.randn(1, 2, 8, 4)
    with neuron_profile.region("naive_attention", variant_of="attention"):
        torch.softmax(q @ q.transpose(-1, -2), dim=-1) @ q
    neuron_profile(
        torch.nn.functional.scaled_dot_product_attention, q, q, q,
        name="sdpa", variant_of="attention",
    )
    neuron_profile(torch.relu, q, name="relu_plain")
"""
    )
    result = pytester.runpytest_inprocess(
        *FAST, "--neuron-profile-json=r.json", "--neuron-profile-html=r.html"
    )
    result.assert_outcomes(passed=1)
    from pytest_neuronperf.reports.json import schema

    doc = json.loads((pytester.path / "r.json").read_text())
    jsonschema.validate(doc, schema())
    declared = {
        r["measurement"]["region"]: r["measurement"].get("variant_of") for r in doc["measurements"]
    }
    assert declared == {"naive_attention": "attention", "sdpa": "attention", "relu_plain": None}
    page = (pytester.path / "r.html").read_text()
    assert "grouped by variant_of=&#x27;attention&#x27;" in page
