"""``neuronperf compare`` on reports the plugin writes through pytester: main's run against
a pull request's that broke a fusion. Time verdicts are checked on copies of a real report
whose samples were scaled (said where done); bad input is one line and exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FAST, FUSION_SUITE
from markdown_it import MarkdownIt
from markdown_it.token import Token

from pytest_neuronperf.cli.main import main
from pytest_neuronperf.reports.diff_render import MARKER

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# Time verdicts are tested on one six-round report and scaled copies (FAST's runs cannot).
RUN = FAST


@pytest.fixture
def reports(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """main's report (recording the baseline) and a pull request's that broke the fusion."""
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    pytester.makepyfile(test_model=FUSION_SUITE)
    pytester.runpytest_inprocess(
        *RUN, "--neuron-profile-update", "--neuron-profile-json=base.json"
    ).assert_outcomes(passed=2)
    monkeypatch.setenv("BREAK_FUSION", "1")
    pytester.runpytest_inprocess(*RUN, "--neuron-profile-json=new.json").assert_outcomes(
        passed=1, failed=1
    )
    return pytester.path / "base.json", pytester.path / "new.json"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    # One line a region: the table's layout (the narrow one: test_the_table_fits_...).
    monkeypatch.setenv("COLUMNS", "400")


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    status = main(["compare", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def _rows(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("regressed", "same", "new"))]


def test_compare_names_the_regression_with_its_op_diff(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run(capsys, *reports)
    assert status == 0  # no --fail-on: informational
    assert out.splitlines()[1].startswith("1 regressed (rmsnorm), 1 over budget (rmsnorm), 1 same")
    rows = _rows(out)
    assert rows[0].startswith("regressed") and "rmsnorm" in rows[0]
    assert "1 → 6" in rows[0] and "+ aten::mul ×3" in rows[0] and "- aten::rms_norm ×1" in rows[0]
    assert rows[1].startswith("same") and "relu" in rows[1]
    # Three rounds a side: times shown, not judged.
    assert "(too few rounds to judge)" in rows[1]
    assert "dispatched 6 ops, baseline 1" in out


def test_the_table_fits_a_narrow_terminal_one_block_a_region(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = _run(capsys, *reports)
    assert max(map(len, out.splitlines())) <= 80
    blocks = out.split("\n\n")[1].split("\n(the time judged")[0]
    rmsnorm, relu = (" ".join(b.split()) for b in re.split(r"\n(?=\S)", blocks))
    assert rmsnorm.startswith("regressed test_model.py::test_fused [rmsnorm] ops 1 → 6")
    assert "op diff: + aten::mul ×3" in rmsnorm and "- aten::rms_norm ×1" in rmsnorm
    assert relu.startswith("same test_model.py::test_plain [relu]")
    assert "(too few rounds to judge)" in relu
    # Wide enough, one line a region.
    monkeypatch.setenv("COLUMNS", "400")
    assert _rows(_run(capsys, *reports)[1])[0].startswith("regressed")


def test_a_name_is_escaped_before_the_table_is_laid_out(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    renamed = []
    for path in reports:
        doc = json.loads(path.read_text())
        for rec in doc["measurements"]:
            if rec["measurement"]["region"] == "relu":
                rec["measurement"]["region"] = "relu\x1b[2J"
        renamed.append(tmp_path / path.name)
        renamed[-1].write_text(json.dumps(doc))
    _, out, _ = _run(capsys, *renamed)
    assert "\x1b" not in out and "relu\\x1b[2J" in out
    # Escaped first, the columns line up: the escaped region ends before the next column.
    header = next(line for line in out.splitlines() if line.startswith("status"))
    (row,) = [line for line in _rows(out) if "relu" in line]
    shown = "relu\\x1b[2J"
    assert row.index(shown) + len(shown) < header.index(" ops "), (header, row)


def test_fail_on_sets_the_exit_status(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, *reports, "--fail-on", "regressed,over-budget")[0] == 1
    assert _run(capsys, *reports, "--fail-on", "over-budget")[0] == 1
    assert _run(capsys, *reports, "--fail-on", "improved,new,removed")[0] == 0
    status, _, err = _run(capsys, *reports, "--fail-on", "slower")
    assert status == 2 and err.count("\n") == 1 and "--fail-on slower: unknown" in err


def _scaled(doc: dict[str, Any], region: str, factor: float) -> dict[str, Any]:
    """A copy of a real report with one region's timed samples (not the reference
    workload's) multiplied by ``factor``: a synthetic slowdown of exactly that size."""
    out: dict[str, Any] = json.loads(json.dumps(doc))
    for rec in out["measurements"]:
        m = rec["measurement"]
        if m["region"] != region:
            continue
        for key in ("device_us", "host_us", "host_relative", "host_relative_dispatch"):
            stats = m.get(key)
            if stats:
                stats["samples"] = [v * factor for v in stats["samples"]]
                for k in ("median", "min", "max", "iqr"):
                    stats[k] = stats[k] * factor
    return out


def test_time_verdicts_follow_the_gate_rule(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytester.makepyfile(test_model=FUSION_SUITE)
    # Recorded: a run with no baseline to judge against times one call a round (no window),
    # too noisy for a +50% to be certain; a recording samples the window.
    pytester.runpytest_inprocess(
        *RUN,
        "--neuron-profile-rounds=6",
        "--neuron-profile-update",
        "--neuron-profile-json=base.json",
    ).assert_outcomes(passed=2)
    base = pytester.path / "base.json"
    doc = json.loads(base.read_text())
    slower, steady = tmp_path / "slower.json", tmp_path / "steady.json"
    slower.write_text(json.dumps(_scaled(doc, "relu", 1.5)))
    steady.write_text(json.dumps(_scaled(doc, "relu", 1.02)))
    status, out, _ = _run(capsys, base, slower, "--fail-on", "regressed")
    assert status == 1
    relu = next(r for r in _rows(out) if "relu" in r)
    assert relu.startswith("regressed") and "+50% regressed" in relu
    assert "host time regressed +50%" in out
    # The same +50% inside a 60% tolerance, and +2% inside the default 10%: not regressed.
    assert _run(capsys, base, slower, "--fail-on", "regressed", "--tolerance", "60")[0] == 0
    status, out, _ = _run(capsys, base, steady, "--fail-on", "regressed")
    assert status == 0 and next(r for r in _rows(out) if "relu" in r).startswith("same")


def _walk(tokens: list[Token]) -> list[Token]:
    return [t for t in tokens if t.type != "inline"] + [
        c for t in tokens if t.type == "inline" for c in (t.children or [])
    ]


def test_markdown_comment_says_what_regressed_first_and_folds_the_rest(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    comment = tmp_path / "comment.md"
    status, _, _ = _run(capsys, *reports, "--markdown", comment)
    assert status == 0
    text = comment.read_text()
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    # The first block is a heading that names the regression.
    assert tokens[0].type == "heading_open" and tokens[0].tag == "h3"
    first = tokens[1].content
    assert first.startswith("❌ neuronperf: 1 regressed (rmsnorm), 1 over budget (rmsnorm)")
    # Then the failing rows, visible; then the details block holding every region.
    kinds = [(t.type, t.content.strip()) for t in tokens if t.type in ("table_open", "html_block")]
    assert [k for k, _ in kinds] == [
        "table_open",
        "html_block",
        "table_open",
        "html_block",
        "html_block",
    ]
    assert kinds[1][1].startswith("<details>") and "<summary>All 2 regions" in kinds[1][1]
    assert kinds[3][1] == "</details>" and kinds[4][1] == MARKER
    tables = _tables(tokens)
    assert len(tables[0]) == 1 and len(tables[1]) == 2  # body rows: failing, then all
    regressed = tables[0][0]
    assert regressed[0] == "❌ regressed" and regressed[2] == "rmsnorm" and regressed[3] == "1 → 6"
    assert regressed[7].startswith("+ aten::mul ×3")
    assert tables[1][1][0] == "✅ same" and tables[1][1][2] == "relu"
    # A code span, not text: the op names survive GitHub's rendering.
    assert any(t.type == "code_inline" and "aten::rms_norm" in t.content for t in _walk(tokens))


def _tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Each table's body rows as lists of cell texts."""
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    in_body = False
    for t in tokens:
        if t.type == "table_open":
            tables.append([])
        elif t.type == "tbody_open":
            in_body = True
        elif t.type == "tbody_close":
            in_body = False
        elif t.type == "tr_open" and in_body:
            row = []
        elif t.type == "tr_close" and row is not None:
            tables[-1].append(row)
            row = None
        elif t.type == "inline" and row is not None:
            row.append("".join(c.content for c in t.children or []))
    return tables


def test_a_clean_pull_request_says_nothing_regressed(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = reports
    status, out, _ = _run(capsys, base, base, "--markdown", "-", "--fail-on", "regressed")
    assert status == 0
    assert out.startswith("### ✅ neuronperf: nothing regressed: 2 same of 2 regions")


def test_reads_schema_1_against_schema_2(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The base turned into a version-1 report (no git, no ci): the same verdicts."""
    base, new = reports
    doc = json.loads(base.read_text())
    doc["schema_version"] = 1
    del doc["git"], doc["ci"]
    old = tmp_path / "v1.json"
    old.write_text(json.dumps(doc))
    status, out, _ = _run(capsys, old, new, "--fail-on", "regressed")
    assert status == 1 and _rows(out)[0].startswith("regressed")


@pytest.mark.parametrize("case", ["missing", "schema", "device kind", "not a report"])
def test_bad_input_is_one_line_and_exit_2(
    reports: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    base, new = reports
    doc = json.loads(new.read_text())
    bad = tmp_path / "bad.json"
    if case == "schema":
        doc["schema_version"] = 7
        bad.write_text(json.dumps(doc))
        says = "report schema version 7"
    elif case == "device kind":
        for rec in doc["measurements"]:
            rec["measurement"]["device_kind"] = "neuron:trn2"
            rec["measurement"]["environment"]["device_kind"] = "neuron:trn2"
        bad.write_text(json.dumps(doc))
        says = "on neuron:trn2; compare reports from the same kind of device"
    elif case == "not a report":
        bad.write_text('{"benchmarks": []}')
        says = "not a pytest-neuronperf report"
    else:
        says = "no such file"
    status, out, err = _run(capsys, base, bad)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and str(bad) in err and says in err, err


@pytest.mark.slow
def test_the_console_script_runs_it(reports: tuple[Path, Path]) -> None:
    """The installed entry point, as a CI step calls it."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_neuronperf",
            "compare",
            *map(str, reports),
            "--fail-on",
            "regressed",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "regressed" in done.stdout
