"""The Markdown the plugin and `neuronperf compare` write for GitHub (issue 24 item 9): a
name from a trace, a test or a branch renders as text, never as an element, a link, a
mention; rendered with markdown-it-py (HTML on, tables) as in test_escape."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import helpers
import pytest
from markup import HOSTILE, assert_inert

from pytest_neuronperf.escape import md_code
from pytest_neuronperf.gate.pairs import rows
from pytest_neuronperf.model import BaselineStatus, Measurement, Record, Status
from pytest_neuronperf.reports import diff_render, markdown
from pytest_neuronperf.reports.json import Report, load
from pytest_neuronperf.reports.provenance import Git, Provenance
from pytest_neuronperf.stats import Stats

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"


def record(name: str, *, failed: bool) -> Record:
    m = Measurement(
        test_id=f"t.py::test[{name}]",
        region=f"r{name}",
        backend="cpu",
        device_kind=f"cuda:{name}",
        ops=2,
        kernels=2,
        op_counts={f"aten::{name}": 2},
        kernel_counts={f"k{name}": 2},
        device_us=Stats.of([1.0, 2.0, 3.0]),
        host_us=Stats.of([1.0, 2.0, 3.0]),
        per_op=(),
        rounds=3,
    )
    bad = {"status": "over budget", "violations": (f"region {name} over",)} if failed else {}
    return Record(m, budget="max_ops=1", baseline_notes=(f"note {name}",), **bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("payload", HOSTILE)
def test_the_runs_markdown_renders_names_as_text(payload: str) -> None:
    def page(name: str) -> str:
        return markdown.render([record(name, failed=True), record(name, failed=False)], name)

    assert_inert(page(payload), page("x"))


def reports(name: str) -> tuple[Report, Report]:
    base = load(DATA)
    recs = []
    for r in base.records:
        m = r.measurement
        recs.append(
            replace(r, measurement=replace(m, region=f"r{name}", test_id=f"{m.test_id}{name}"))
        )
    new_recs = [
        replace(
            r,
            measurement=replace(
                r.measurement,
                ops=r.measurement.ops + 1,
                op_counts={**r.measurement.op_counts, f"aten::{name}": 1},
            ),
            violations=(f"over {name}",),
        )
        for r in recs
    ]
    git = Git(commit="abc1234", branch=f"b{name}", dirty=False, commit_time="")
    old = replace(base, records=tuple(recs), provenance=Provenance(git, None))
    return old, replace(old, records=tuple(new_recs), path=Path(f"new{name}.json"))


@pytest.mark.parametrize("payload", HOSTILE)
def test_the_compare_comment_renders_names_as_text(payload: str) -> None:
    def comment(name: str) -> str:
        base, new = reports(name)
        return diff_render.markdown(rows(base.records, new.records, 0.1, str(base.path)), base, new)

    assert_inert(comment(payload), comment("x"))


def test_a_comment_of_1000_regions_fits_githubs_limit_regressions_first() -> None:
    """Issue 24 item 12: 1,000 regions gave a 128,461-character comment; GitHub refuses a
    comment over 65,536 characters."""
    base = load(DATA)
    template = base.records[0]
    old, new = [], []
    for i in range(1000):
        m = replace(template.measurement, test_id=f"tests/test_big.py::test_{i:04d}_" + "x" * 60)
        old.append(replace(template, measurement=m))
        grown = replace(m, ops=m.ops + 1, op_counts={**m.op_counts, "aten::add": 99})
        new.append(replace(template, measurement=grown if i % 100 == 0 else m))
    base = replace(base, records=tuple(old))
    newer = replace(base, records=tuple(new))
    found = rows(base.records, newer.records, 0.1, str(base.path))
    comment = diff_render.markdown(found, base, newer)
    assert len(comment) <= diff_render.GITHUB_LIMIT
    assert comment.rstrip().endswith(diff_render.MARKER)
    regressed = [r.test_id for r in found if r.status == "regressed"]
    assert len(regressed) == 10
    head = comment[: comment.index("<details>")]
    assert all(t in head for t in regressed)
    assert "more regions not shown" in comment and "neuronperf compare" in comment


def baseline_record(baseline: str, budget: str = "", test_id: str = "t.py::t") -> Record:
    return Record(
        helpers.measurement(ops={"aten::exp": 1}, test_id=test_id),
        budget=budget,
        status=Status.OK if budget else Status.MEASURED,
        baseline=BaselineStatus(baseline) if baseline else "",
        baseline_cell=baseline,
    )


def test_markdown_does_not_call_new_measurements_within_baseline() -> None:
    all_new = [baseline_record("new", "max_ops=6") for _ in range(5)]
    text = markdown.verdict(all_new)
    assert text == ("No failures in 5 measurements: all within budget; all new (no baseline yet).")
    assert text in markdown.render(all_new) and "baseline." not in markdown.render(all_new)
    mixed = [baseline_record("same"), baseline_record("new"), baseline_record("not comparable")]
    assert markdown.verdict(mixed) == (
        "No failures in 3 measurements: 1 within baseline; 1 new (no baseline yet); "
        "1 not comparable with the baseline."
    )
    assert (
        markdown.verdict([baseline_record("")])
        == "No failures: 1 measurement, none with a budget or a baseline."
    )


def test_a_backtick_in_a_test_id_keeps_its_code_span() -> None:
    from markdown_it import MarkdownIt

    odd = "t.py::test[a`b``c|d]"
    assert md_code("plain") == "`plain`" and md_code("`x") == "`` `x ``"
    html_tokens = (
        MarkdownIt("commonmark")
        .enable("table")
        .parse(markdown.render([baseline_record("new", "", odd)]))
    )
    spans = [
        child.content
        for token in html_tokens
        if token.children
        for child in token.children
        if child.type == "code_inline"
    ]
    assert odd in spans, spans
