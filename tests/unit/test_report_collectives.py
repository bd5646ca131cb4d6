"""``neuronperf report`` on the real NCCL/RCCL traces: the collectives table per step and
the same figures in --json (counted here with a plain loop over the JSON)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_neuronperf.cli.report import run
from pytest_neuronperf.model import Collective, Measurement
from pytest_neuronperf.reports.collectives import collective_lines
from pytest_neuronperf.stats import Stats

DATA = Path(__file__).parent.parent / "data"
MI300 = DATA / "tracelens__tests__traces__mi300__resnet_act_checkpoint.json.gz"


def _per_step_calls() -> Counter[str]:
    with gzip.open(MI300) as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if str(e.get("name")).startswith("ProfilerStep#")]
    first = min(steps, key=lambda e: e["ts"])
    return Counter(
        e["name"].removeprefix("nccl:")
        for e in events
        if e.get("cat") == "user_annotation"
        and str(e.get("name")).startswith("nccl:")
        and first["ts"] <= e["ts"] <= first["ts"] + first["dur"]
    )


def test_report_table_shows_collectives_per_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(MI300, region=None, mode="auto", as_json=False) == 0
    out = capsys.readouterr().out
    expected = _per_step_calls()
    assert expected == {"all_reduce": 2, "broadcast": 2}
    assert "collectives a round (the worst of 3, world size 8):" in out
    for name, calls in expected.items():
        assert any(
            line.split()[:2] == [name, str(calls)] and "message sizes" in line
            for line in out.splitlines()
        )
    assert "communication kernels: 4 a round" in out
    assert all(len(line) <= 80 for line in out.split("collectives a round")[1].splitlines())


def test_report_json_holds_the_collectives(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(MI300, region=None, mode="auto", as_json=True) == 0
    [record] = json.loads(capsys.readouterr().out)["measurements"]
    region = record["measurement"]
    assert {k: v["calls"] for k, v in region["collectives"].items()} == dict(_per_step_calls())
    assert region["world_size"] == 8
    assert region["comm"]["kernels"] == 4


def test_names_from_a_trace_are_escaped_for_the_terminal() -> None:
    m = Measurement(
        test_id="t",
        region="r",
        backend="trace",
        device_kind="cpu",
        ops=1,
        kernels=0,
        device_us=Stats.of([1.0]),
        host_us=Stats.of([1.0]),
        rounds=1,
        collectives={"all\x1b[2J_reduce": Collective(1)},
    )
    text = "\n".join(collective_lines(m))
    assert "\x1b" not in text and "'all\\x1b[2J_reduce'" in text


def test_a_region_without_collectives_adds_no_lines() -> None:
    m = Measurement(
        test_id="t",
        region="r",
        backend="cpu",
        device_kind="cpu",
        ops=1,
        kernels=0,
        device_us=Stats.of([1.0]),
        host_us=Stats.of([1.0]),
        rounds=1,
    )
    assert collective_lines(m) == []


def test_the_readme_shows_what_the_report_prints(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("collectives a round (the worst of 3, world size 8):")
    block = readme[start : readme.index("```", start)]
    assert run(MI300, region=None, mode="auto", as_json=False) == 0
    assert block in capsys.readouterr().out + "\n"


def test_the_html_rank_view_splits_each_rank_and_flags_the_straggler() -> None:
    from dataclasses import replace

    from pytest_neuronperf.model import RankFigures, Record
    from pytest_neuronperf.reports.collectives import rank_view_html
    from pytest_neuronperf.reports.html import render

    m = Measurement(
        test_id="t.py::t",
        region="<mlp>",
        backend="cpu",
        device_kind="cpu",
        ops=5,
        kernels=3,
        device_us=Stats.of([300.0]),
        host_us=Stats.of([400.0]),
        rounds=1,
        world_size=2,
        rank=1,
        collectives={"all_reduce": Collective(1, 2048, 2, "shapes")},
        ranks=(
            RankFigures(0, 5, 1, 2048, 100.0, 150.0, compute_us=80.0, comm_us=20.0),
            RankFigures(1, 5, 1, 2048, 300.0, 400.0, compute_us=100.0, comm_us=200.0,
                        straggler=True),
        ),
    )  # fmt: skip
    view = rank_view_html(m)
    assert view.count('class="rank-compute"') == 2 and view.count('class="rank-comm"') == 2
    # One scale: the widest rank fills the cell, the other a third of it.
    assert 'style="width:33.33%;background:#2563eb"' in view  # 100 of 300
    assert 'style="width:66.67%;background:#f59e0b"' in view  # 200 of 300
    assert "rank 1 <b" in view and "straggler</b>" in view
    assert "rank 1 is a straggler: 300.0 µs of device time, +50% over the median" in view
    page = render([Record(m)])
    assert view in page and "<mlp>" not in page
    assert rank_view_html(replace(m, ranks=())) == ""
