"""The baseline footer: one sentence per thing that happened, wrapped to the terminal."""

from __future__ import annotations

from pathlib import Path

from test_terminal import LONG_ID, record

from pytest_neuronperf.reports.fit import wrap
from pytest_neuronperf.reports.footer import baseline_footer


def test_footer_sentences_wrap_to_the_width() -> None:
    records = [record(baseline="new", baseline_cell="new")]
    stale = [(LONG_ID, "gone")]
    lines = baseline_footer(records, Path(".neuronperf/cpu.json"), stale=stale, width=80)
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("  ") for line in lines), "continuations are indented"
    assert wrap("short", 80) == ["short"]


def test_a_recording_names_the_regions_whose_processes_ran_apart_once() -> None:
    apart = [(f"t.py::t{i}", f"region_{i}", f"-{i}0%..+5%") for i in range(1, 5)]
    (line,) = baseline_footer([], Path("b.json"), apart=apart)
    assert line == (
        "4 pooled regions: their recording processes ran further apart than the tolerance "
        "(t.py::t1 [region_1] -10%..+5%, t.py::t2 [region_2] -20%..+5%, t.py::t3 [region_3] "
        "-30%..+5%, ...): a later time change counts only past the tolerance beyond that "
        "spread; record them again on a quieter machine to gate closer"
    )
    assert baseline_footer([], Path("b.json")) == [], "nothing said when none ran apart"
    lines = baseline_footer([], Path("b.json"), apart=[("t" * 90, "x", "-30%..+2%")], width=80)
    assert all(len(line) <= 80 for line in lines)
    assert " ".join(lines).startswith("1 pooled region: its recording processes")
