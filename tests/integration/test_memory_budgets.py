"""Memory as a budget and a baseline, end to end through pytester on the real CPU profiler.

Every expected figure is computed here from tensor sizes: ``N`` float32 elements are
``N * 4`` bytes, whatever the plugin says.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import torch
from chromium import colour_near, look, skip_without

from pytest_neuronperf.reports.charts import memory as memory_chart

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

N = 1 << 20  # 1 Mi float32
MIB4 = N * torch.tensor([], dtype=torch.float32).element_size()  # 4 MiB, from the dtype

MODULE = """
import os, pytest, torch

N = 1 << 20
x = torch.ones(N)
kept = []

def alloc():
    return torch.empty(N)

def add():
    return x + x

def mul_add():
    # One more 4 MiB intermediate (x * x) alive while the add allocates its result.
    return x * x + x

def free_then_alloc():
    a = torch.empty(N)
    del a
    return torch.empty(N)

def leak():
    # A small tensor: the window calls this hundreds of times, and a large one would leave
    # the process's heap holding gigabytes for the tests after it.
    kept.append(torch.empty(1024))

def out_of_place():
    return x * 2

def in_place():
    return x.mul_(2)

def work():
    return mul_add() if os.environ.get("NP_EXTRA") else add()

@pytest.mark.neuron_budget(max_retained_memory=int(os.environ.get("NP_BLOCK", "0")))
def test_block(neuron_profile):
    with neuron_profile.region("block"):
        y = torch.empty(N)  # still held when the block ends
        z = torch.empty(N)
        del z

@pytest.mark.neuron_budget(max_peak_memory=int(os.environ.get("NP_LIMIT", "0")) or None)
def test_alloc(neuron_profile):
    neuron_profile(alloc)

def test_free_then_alloc(neuron_profile):
    neuron_profile(free_then_alloc)

@pytest.mark.neuron_budget(max_retained_memory=int(os.environ.get("NP_RETAIN", "0")) or None)
def test_leak(neuron_profile):
    try:
        neuron_profile(leak)
    finally:
        kept.clear()

def test_in_place(neuron_profile):
    neuron_profile(out_of_place)
    neuron_profile(in_place)

def test_work(neuron_profile):
    neuron_profile(work)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_it=MODULE)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile-rounds=2",
        "--neuron-profile-warmup=1",
        "--neuron-profile-work=off",
        "--neuron-profile-reference=off",
        *args,
    )


def memory_of(pytester: pytest.Pytester, report: Path) -> dict[str, Any]:
    doc = json.loads((pytester.path / report).read_text())
    out: dict[str, Any] = {}
    for record in doc["measurements"]:
        m = record["measurement"]
        out[f"{m['test_id'].split('::')[-1]}/{m['region']}"] = m.get("memory")
    return out


def test_a_known_tensor_peaks_at_its_size_and_freeing_first_does_not_add(
    project: pytest.Pytester,
) -> None:
    result = run(
        project,
        "--neuron-profile",
        "--neuron-profile-memory=on",
        "--neuron-profile-json=r.json",
        "-k",
        "alloc",
    )
    result.assert_outcomes(passed=2)
    mem = memory_of(project, Path("r.json"))
    assert mem["test_alloc/alloc"]["peak_bytes"] == MIB4
    assert mem["test_alloc/alloc"]["allocated_bytes"] == MIB4
    # Dropped inside the round: the result is not retained.
    assert mem["test_alloc/alloc"]["retained_bytes"] == 0
    # Two tensors of N, one after the other: twice allocated, once at the peak.
    assert mem["test_free_then_alloc/free_then_alloc"]["peak_bytes"] == MIB4
    assert mem["test_free_then_alloc/free_then_alloc"]["allocated_bytes"] == 2 * MIB4


def test_a_peak_budget_fails_one_byte_below_and_holds_at_the_figure(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NP_LIMIT", str(MIB4 - 1))
    below = run(project, "-k", "test_alloc")
    below.assert_outcomes(failed=1)
    below.stdout.fnmatch_lines(
        [f"*region 'alloc' peaked at 4.0 MiB ({MIB4} bytes)*budget max_peak_memory=*{MIB4 - 1}*"]
    )
    monkeypatch.setenv("NP_LIMIT", str(MIB4))
    run(project, "-k", "test_alloc").assert_outcomes(passed=1)


def test_a_leak_shows_in_retained_bytes_and_fails_its_budget(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaked = 1024 * torch.tensor([], dtype=torch.float32).element_size()  # one call's tensor
    monkeypatch.setenv("NP_RETAIN", str(leaked - 1))
    result = run(project, "--neuron-profile", "--neuron-profile-json=r.json", "-k", "leak")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*region 'leak' left 4.0 KiB ({leaked} bytes) allocated*"])
    assert memory_of(project, Path("r.json"))["test_leak/leak"]["retained_bytes"] == leaked
    monkeypatch.setenv("NP_RETAIN", str(leaked))
    run(project, "-k", "leak").assert_outcomes(passed=1)


def test_an_in_place_rewrite_shows_less(project: pytest.Pytester) -> None:
    result = run(
        project,
        "--neuron-profile",
        "--neuron-profile-memory=on",
        "--neuron-profile-json=r.json",
        "-k",
        "in_place",
    )
    result.assert_outcomes(passed=1)
    mem = memory_of(project, Path("r.json"))
    out, inplace = mem["test_in_place/out_of_place"], mem["test_in_place/in_place"]
    # The same scalar wrapping on both sides; the out-of-place one adds its N-element result.
    assert out["peak_bytes"] - inplace["peak_bytes"] == MIB4


def test_a_baseline_catches_one_more_intermediate_and_names_the_op(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(
        project, "--neuron-profile-update", "--neuron-profile-memory=on", "-k", "test_work"
    ).assert_outcomes(passed=1)
    # The entry holds memory: later runs profile it without the setting.
    run(project, "--neuron-profile", "-k", "test_work").assert_outcomes(passed=1)
    monkeypatch.setenv("NP_EXTRA", "1")
    result = run(project, "--neuron-profile", "-k", "test_work")
    result.assert_outcomes(failed=1)
    peak = 2 * MIB4  # x * x alive while the add allocates its result
    shown = f"{peak / (1 << 20):.1f} MiB"
    result.stdout.fnmatch_lines(
        [f"*region 'work' peak {shown}, baseline 4.0 MiB (+ aten::mul 4.0 MiB)*"]
    )


def test_a_bad_memory_limit_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.neuron_budget(max_peak_memory="12 parsecs")
        def test_it(neuron_profile):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*test_it: neuron_budget max_peak_memory: expected a size such as*got '12 parsecs'"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def report_run(project: pytest.Pytester) -> Path:
    """Markdown, JUnit and HTML of one run with memory profiled; the HTML page."""
    result = run(
        project,
        "--neuron-profile",
        "--neuron-profile-memory=on",
        "--neuron-profile-markdown=r.md",
        "--neuron-profile-html=r.html",
        "--junitxml=r.xml",
        "-k",
        "test_work",
    )
    result.assert_outcomes(passed=1)
    return project.path / "r.html"


def test_reports_carry_memory(project: pytest.Pytester) -> None:
    page = report_run(project)
    md = (project.path / "r.md").read_text()
    assert "| peak memory |" in md and "| 4.0 MiB |" in md
    xml = (project.path / "r.xml").read_text()
    assert f'name="neuronperf.work.peak_bytes" value="{MIB4}"' in xml
    assert 'name="neuronperf.work.retained_bytes" value="0"' in xml
    text = page.read_text()
    assert "memory (cpu, from the profiler&#x27;s memory records): peak 4.0 MiB" in text
    assert 'class="memory-steps"' in text


@pytest.mark.slow
@skip_without
def test_the_html_step_line_is_drawn_in_a_real_browser(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    browser_checks(report_run(project), tmp_path)


def browser_checks(page: Path, tmp_path: Path) -> None:
    seen, placed, img = look(page, tmp_path, "svg, polyline.memory-steps, line.memory-peak")
    assert seen.scroll_width <= seen.client_width
    [line] = placed.of("memory-steps")
    [peak] = placed.of("memory-peak")
    # The line reaches the peak rule, and is drawn in its colour along each flat stretch.
    top = min(y for _, y in line["points"])
    assert abs(top - peak["points"][0][1]) < 1.0
    pts = line["points"]
    flats = [(a, b) for a, b in itertools.pairwise(pts) if abs(a[1] - b[1]) < 0.5]
    assert flats
    for (x1, y1), (x2, _) in flats:
        if x2 - x1 > 6:
            assert colour_near(img, (x1 + x2) / 2, y1, memory_chart.LINE), (x1, x2, y1)


def test_compare_and_history_carry_peak_memory_and_the_json_validates(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import jsonschema

    from pytest_neuronperf.cli.main import main
    from pytest_neuronperf.reports.json import schema

    args = ("--neuron-profile", "--neuron-profile-memory=on", "-k", "test_work")
    run(project, *args, "--neuron-profile-json=base.json").assert_outcomes(passed=1)
    monkeypatch.setenv("NP_EXTRA", "1")
    run(project, *args, "--neuron-profile-json=new.json").assert_outcomes(passed=1)
    base, new = project.path / "base.json", project.path / "new.json"
    jsonschema.validate(json.loads(new.read_text()), schema())
    capsys.readouterr()
    assert main(["compare", str(base), str(new), "--fail-on", "regressed"]) == 1
    out = capsys.readouterr().out
    peak = 2 * MIB4
    assert f"4.0 MiB → {peak / (1 << 20):.1f} MiB" in out  # the peak memory column
    assert "peak 8.0 MiB, baseline 4.0 MiB (+ aten::mul 4.0 MiB)" in out
    page = project.path / "history.html"
    assert main(["history", str(base), str(new), "-o", str(page)]) == 0
    out = capsys.readouterr().out
    assert "peak memory" in out and "4.0 MiB → 8.0 MiB" in out
    assert "<th>peak memory</th>" in page.read_text()


def test_a_with_region_retains_what_its_variables_hold(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NP_BLOCK", str(MIB4 - 1))
    result = run(project, "--neuron-profile", "--neuron-profile-json=r.json", "-k", "block")
    result.assert_outcomes(failed=1)
    mem = memory_of(project, Path("r.json"))["test_block/block"]
    # y is kept, z freed: one tensor retained, two allocated, both alive at the peak.
    assert (mem["retained_bytes"], mem["allocated_bytes"], mem["peak_bytes"]) == (
        MIB4,
        2 * MIB4,
        2 * MIB4,
    )
    monkeypatch.setenv("NP_BLOCK", str(MIB4))
    run(project, "-k", "block").assert_outcomes(passed=1)
