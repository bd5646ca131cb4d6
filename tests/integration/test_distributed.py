"""Distributed regions end to end: real ranks spawned with the gloo backend, real
torch.profiler, baselines and budgets through pytester. Slow (each run spawns ranks)."""

from __future__ import annotations

import json
import platform
import re
import sys
from pathlib import Path

import chromium
import pytest

from pytest_neuronperf.reports.collectives import COMM, COMPUTE

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

# A tensor-parallel MLP: each rank holds half of the hidden columns of two linears, and
# one all_reduce sums their outputs. NP_EDIT adds an all_gather, or doubles the message.
MODULE = """
import os, pytest, torch
import torch.distributed as dist

torch.manual_seed(0)
ROWS = 16 if os.environ.get("NP_EDIT") == "double" else 8
X = torch.randn(ROWS, 64)
W1 = torch.randn(64, 128)
W2 = torch.randn(128, 64)

def tp_mlp(x):
    rank, world = dist.get_rank(), dist.get_world_size()
    cols = W1.shape[1] // world
    h = (x @ W1[:, rank * cols:(rank + 1) * cols]).relu()
    y = h @ W2[rank * cols:(rank + 1) * cols]
    dist.all_reduce(y)
    if os.environ.get("NP_EDIT") == "gather":
        out = [torch.empty_like(y) for _ in range(world)]
        dist.all_gather(out, y)
    return y

# One all_reduce of 8 x 64 floats: 2048 bytes. Three rounds: fewer than time is judged on
# (stats.MIN_ROUNDS), so the verdicts below rest on counts and bytes alone.
@pytest.mark.neuron_budget(max_collectives=1, max_comm_bytes=2048)
def test_tp(neuron_profile):
    ranks = neuron_profile.distributed(tp_mlp, X, world_size=2, rounds=3, warmup=1, timeout=120)
    assert [m.rank for m in ranks] == [0, 1]
"""

FILE = Path(".neuronperf") / "cpu_x86_64.json"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    if platform.machine() != "x86_64":
        pytest.skip("file names below assume an x86_64 CPU")
    pytester.makepyfile(test_tp=MODULE)
    return pytester


def test_tensor_parallel_region_budgets_baseline_and_diff(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NP_EDIT", raising=False)
    rec = project.runpytest(
        "-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-update",
        "--neuron-profile-html=report.html",
    )  # fmt: skip
    # max_collectives=1 and max_comm_bytes=2048 hold at the true figures.
    rec.assert_outcomes(passed=1)
    entry = json.loads((project.path / FILE).read_text())["entries"]["test_tp.py::test_tp"]
    assert entry["tp_mlp"]["collectives"] == {
        "all_reduce": {"bytes": 2048, "bytes_from": "shapes", "calls": 1, "group_size": 2}
    }
    assert entry["tp_mlp"]["world_size"] == 2
    if chromium.executable() is not None:
        _rank_view_is_drawn(project.path / "report.html", project.path)

    monkeypatch.setenv("NP_EDIT", "gather")
    gather = project.runpytest(
        "-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-json=r.json",
        "--neuron-profile-markdown=r.md", "--neuron-profile-html=r.html", "--junitxml=j.xml",
    )  # fmt: skip
    gather.assert_outcomes(failed=1)
    # Every report carries the diff (JUnit and JSON as the record's JSON).
    for name in ("r.json", "r.md", "r.html", "j.xml"):
        text = (project.path / name).read_text(encoding="utf-8")
        assert "made 2 collectives, baseline 1 (+ all_gather" in text, name
    # Every rank made the same calls: the one named is the slower of the two.
    out = re.sub(r"\(rank [01] of 2\)", "(rank R of 2)", gather.stdout.str())
    assert (
        "neuronperf baseline: region 'tp_mlp' (rank R of 2) made 2 collectives, baseline 1 "
        "(+ all_gather ×1, 2.0 KiB)"
    ) in out
    assert "made 2 collectives (all_gather ×1 (2.0 KiB), all_reduce ×1 (2.0 KiB)), " in out
    assert "budget max_collectives=1" in out

    monkeypatch.setenv("NP_EDIT", "double")
    double = project.runpytest("-p", "no:cacheprovider", "--neuron-profile")
    double.assert_outcomes(failed=1)
    out = double.stdout.str()
    assert "sent 4.0 KiB (4,096 bytes) in collectives (all_reduce ×1 (4.0 KiB)), " in out
    assert "budget max_comm_bytes=2048" in out
    assert "sent 4.0 KiB in collectives, baseline 2.0 KiB (all_reduce +2.0 KiB)" in out


def _rank_view_is_drawn(page: Path, tmp: Path) -> None:
    """Each rank's bar in a real browser: compute and communication side by side, in their
    colours, the two ranks on one scale (the wider rank's bar fills its cell)."""
    seen, placed, img = chromium.look(page, tmp, "div.rank-compute, div.rank-comm")
    assert seen.scroll_width <= seen.client_width
    for cls, want in (("rank-compute", COMPUTE), ("rank-comm", COMM)):
        bars = placed.of(cls)
        assert len(bars) == 2, cls
        for bar in bars:
            left, top, width, height = bar["box"]
            if width >= 2:
                assert chromium.colour_near(img, left + width / 2, top + height / 2, want), bar
    drawn = [
        c["box"][2] + m["box"][2]
        for c, m in zip(placed.of("rank-compute"), placed.of("rank-comm"), strict=True)
    ]
    widths = [
        float(w)
        for w in re.findall(
            r'class="rank-\w+" title="[^"]+" style="width:([\d.]+)%', page.read_text()
        )
    ]
    written = [widths[0] + widths[1], widths[2] + widths[3]]
    assert max(written) == pytest.approx(100.0, abs=0.02)
    assert drawn[0] / drawn[1] == pytest.approx(written[0] / written[1], rel=0.05)


BAD = """
import multiprocessing, os, time, pytest, torch
import torch.distributed as dist
from pytest_neuronperf.measure.errors import MeasureError

def crash(x):
    if dist.get_rank() == 1:
        raise ValueError("rank one broke")
    dist.all_reduce(x)

def sleep(x):
    time.sleep(3600)

def add(x):
    return x + 1

@pytest.mark.neuron_budget(max_collectives=1)
def test_crash(neuron_profile):
    neuron_profile.distributed(crash, torch.ones(4), world_size=2, rounds=2, warmup=0, timeout=60)

def test_hang(neuron_profile):
    with pytest.raises(MeasureError) as info:
        neuron_profile.distributed(sleep, torch.ones(4), world_size=2, timeout=3)
    print("LINE:", str(info.value).splitlines()[0])
    assert multiprocessing.active_children() == []

def test_too_many_ranks(neuron_profile):
    n = (os.cpu_count() or 1) + 1
    with pytest.raises(MeasureError) as info:
        neuron_profile.distributed(add, torch.ones(4), world_size=n)
    print("LINE:", str(info.value))

def test_already_initialised(neuron_profile, tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/pg", rank=0, world_size=1)
    try:
        with pytest.raises(MeasureError) as info:
            neuron_profile.distributed(add, torch.ones(4), world_size=2)
    finally:
        dist.destroy_process_group()
    print("LINE:", str(info.value))

def test_neuron_backend(neuron_profile):
    with pytest.raises(MeasureError) as info:
        neuron_profile.distributed(add, torch.ones(4), backend="neuron")
    print("LINE:", str(info.value))

def test_not_picklable(neuron_profile):
    with pytest.raises(MeasureError) as info:
        neuron_profile.distributed(lambda x: x + 1, torch.ones(4), world_size=2)
    print("LINE:", str(info.value))
    assert multiprocessing.active_children() == []

def test_uninitialised_under_torchrun(neuron_profile, monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(MeasureError) as info:
        neuron_profile(add, torch.ones(4))
    print("LINE:", str(info.value))
"""


def test_failing_ranks_each_say_one_line_and_leave_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad=BAD)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-s", "--neuron-profile", "--neuron-profile-update"
    )
    result.assert_outcomes(passed=6, failed=1)
    out = result.stdout.str()
    assert (
        "MeasureError: neuron_profile.distributed('crash'): rank 1 of 2 failed: "
        "ValueError: rank one broke; every rank was stopped"
    ) in out
    assert (
        "LINE: neuron_profile.distributed('sleep'): rank 0, 1 of 2 did not finish within 3 s "
        "(waiting in a collective its peers never made?); every rank was stopped. Raise "
        "timeout= if the region is that slow"
    ) in out
    assert "is more than this machine allows for gloo" in out
    assert (
        "LINE: neuron_profile.distributed: backend='neuron': torch-neuronx is not installed, "
        "and the Neuron process group comes with it; use gloo"
    ) in out
    assert "LINE: neuron_profile.distributed: torch.distributed is already initialised" in out
    assert (
        "LINE: neuron_profile.distributed('test_not_picklable.<locals>.<lambda>'): the "
        "callable and its arguments must pickle to reach the ranks (a module-level function): "
    ) in out
    assert (
        "LINE: neuron_profile('add'): torchrun started 2 ranks but torch.distributed is not "
        "initialised in this one"
    ) in out
    # The crashed region wrote no baseline entry; the others measured nothing.
    stored = pytester.path / FILE
    assert not stored.exists() or "test_crash" not in stored.read_text()


CONFTEST = """
import torch.distributed as dist

def pytest_configure(config):
    dist.init_process_group("gloo")

def pytest_unconfigure(config):
    if dist.is_initialized():
        dist.destroy_process_group()
"""

# The same region, measured by the fixture in each rank torchrun started.
TORCHRUN_MODULE = MODULE.replace(
    "neuron_profile.distributed(tp_mlp, X, world_size=2, rounds=3, warmup=1, timeout=120)",
    "[neuron_profile(tp_mlp, X, rounds=3, warmup=1)]",
).replace("assert [m.rank for m in ranks] == [0, 1]", "assert neuron_profile.last.ranks")


def torchrun(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.run(
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
        "-m", "pytest", "-p", "no:cacheprovider", "--neuron-profile", *args, timeout=300,
    )  # fmt: skip


def test_torchrun_session_rank_zero_reports_and_writes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("file names below assume an x86_64 CPU")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_tp=TORCHRUN_MODULE)
    monkeypatch.delenv("NP_EDIT", raising=False)
    rec = torchrun(pytester, "--neuron-profile-update")
    assert rec.ret == 0, rec.stdout.str()
    out = rec.stdout.str()
    # One report, from rank 0; rank 1 says where its figures went.
    assert out.count("neuronperf baselines .neuronperf/cpu_x86_64.json: 1 new") == 1
    assert "neuronperf: rank 1 of 2: every rank's figures went to rank 0" in out
    entry = json.loads((pytester.path / FILE).read_text())["entries"]["test_tp.py::test_tp"]
    assert entry["tp_mlp"]["world_size"] == 2
    assert entry["tp_mlp"]["collectives"]["all_reduce"]["calls"] == 1

    monkeypatch.setenv("NP_EDIT", "gather")
    edit = torchrun(pytester)
    assert edit.ret != 0
    out = re.sub(r"\(rank [01] of 2\)", "(rank R of 2)", edit.stdout.str())
    assert (
        "neuronperf baseline: region 'tp_mlp' (rank R of 2) made 2 collectives, baseline 1 "
        "(+ all_gather ×1, 2.0 KiB)"
    ) in out
    assert "rank 0: 15 ops, 2 collectives, 4.0 KiB" in out
    assert "rank 1: 15 ops, 2 collectives, 4.0 KiB" in out
