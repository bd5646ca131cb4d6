"""``neuronperf report DIR`` over one job's rank traces.

The folder is built here from a real trace: four copies of TraceLens's
mi300/resnet_act_checkpoint trace (rank 0 of 8, three ProfilerSteps) with
``distributedInfo.rank`` set to 0..3, and in rank 2's copy every kernel's duration
multiplied by 1.5, so that it is the slowest. The expected device time of each step is
computed by a plain loop over the JSON: the device events (kernel, memcpy, memset) whose
correlation is a runtime call of the step's process inside the step's span."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.cli.main import main
from pytest_neuronperf.trace.events import TraceError
from pytest_neuronperf.trace.ranks import report_ranks

RESNET = (
    Path(__file__).parent.parent
    / "data"
    / "tracelens__tests__traces__mi300__resnet_act_checkpoint.json.gz"
)
SLOW_RANK, SLOWDOWN = 2, 1.5
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver"}


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(RESNET.read_bytes()))
    return doc


def _write(path: Path, doc: Any) -> None:
    text = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(text, compresslevel=1) if path.suffix == ".gz" else text)


def _tiny(rank: int) -> dict[str, Any]:
    """A rank trace of one op: what the bad-input cases need around the bad file."""
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0, "dur": 5}
    return {"distributedInfo": {"rank": rank}, "traceEvents": [op]}


@pytest.fixture
def job(tmp_path: Path) -> tuple[Path, dict[int, dict[str, Any]]]:
    base, slow = _doc(), _doc()
    for e in slow["traceEvents"]:
        if e.get("cat") == "kernel":
            e["dur"] = e["dur"] * SLOWDOWN
    assert base["distributedInfo"]["rank"] == 0
    texts = {False: json.dumps(base), True: json.dumps(slow)}
    docs = {}
    for rank in range(4):
        # The first "rank" key of the text is distributedInfo's (it precedes traceEvents).
        text = texts[rank == SLOW_RANK].replace('"rank": 0,', f'"rank": {rank},', 1)
        # tensorboard_trace_handler's names; one gzip-compressed, as use_gzip=True writes.
        name = f"host_{1000 + rank}.1733300000.pt.trace.json"
        if rank == SLOW_RANK:
            (tmp_path / f"{name}.gz").write_bytes(gzip.compress(text.encode(), compresslevel=1))
        else:
            (tmp_path / name).write_text(text)
        docs[rank] = slow if rank == SLOW_RANK else base
    return tmp_path, docs


def expected_steps(doc: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(step, device µs, host µs) per ProfilerStep, by a plain loop over the events."""
    events = doc["traceEvents"]
    calls = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") in RUNTIME_CATS and "correlation" in e.get("args", {})
    }
    steps = sorted(
        (
            e
            for e in events
            if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")
        ),
        key=lambda e: e["ts"],
    )
    out = []
    for step in steps:
        lo, hi = step["ts"], step["ts"] + step["dur"]
        device = 0.0
        for e in events:
            if e.get("cat") not in DEVICE_CATS:
                continue
            call = calls.get(e.get("args", {}).get("correlation"))
            if call is not None and call["pid"] == step["pid"] and lo <= call["ts"] <= hi:
                device += e["dur"]
        out.append((step["name"], device, float(step["dur"])))
    return out


def test_one_row_per_rank_and_step_with_the_plain_loops_figures(
    job: tuple[Path, dict[int, dict[str, Any]]],
) -> None:
    folder, docs = job
    report = report_ranks(folder, workers=1)
    assert [r.rank for r in report.ranks] == [0, 1, 2, 3]
    for r in report.ranks:
        want = expected_steps(docs[r.rank])
        assert len(want) == 3
        assert [s.step for s in r.steps] == [name for name, _, _ in want]
        assert [s.device_us for s in r.steps] == pytest.approx([d for _, d, _ in want], rel=1e-12)
        assert [s.host_us for s in r.steps] == pytest.approx([h for _, _, h in want], rel=1e-12)
    totals = {rank: sum(d for _, d, _ in expected_steps(doc)) for rank, doc in docs.items()}
    assert report.slowest.rank == max(totals, key=lambda k: totals[k]) == SLOW_RANK
    others = sorted(v for k, v in totals.items() if k != SLOW_RANK)
    assert report.over_median == pytest.approx(totals[SLOW_RANK] / others[1] - 1)


@pytest.mark.slow
def test_the_cli_reads_the_folder_in_parallel_and_flags_the_slowest_rank(
    job: tuple[Path, dict[int, dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, docs = job
    assert main(["report", str(folder)]) == 0
    out = capsys.readouterr().out
    rows = [
        line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["0"], ["1"], ["2"], ["3"])
    ]
    assert len(rows) == 12
    for rank, doc in docs.items():
        mine = [row for row in rows if row[0] == str(rank)]
        want = expected_steps(doc)
        assert [row[1] for row in mine] == [name for name, _, _ in want]
        assert [float(row[2].replace(",", "")) for row in mine] == pytest.approx(
            [d for _, d, _ in want], abs=0.051
        )
        assert all((row[-1] == "slowest") == (rank == SLOW_RANK) for row in mine)
    assert f"slowest rank: {SLOW_RANK} (" in out
    assert main(["report", str(folder), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["slowest_rank"] == SLOW_RANK and doc["slowest_by"] == "device_us"
    assert [len(r["steps"]) for r in doc["ranks"]] == [3, 3, 3, 3]


CPU_ONLY = (
    Path(__file__).parent.parent
    / "data"
    / ("hta_cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
)


def test_a_cpu_jobs_slowest_rank_is_told_by_host_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three copies of HTA's CPU-only rank trace (gloo, no device events), ranks set to
    0..2, and in rank 1's every duration 1.5x (starts kept, so nesting holds): no rank has
    device time, so host time, each step's span by a plain loop, tells the slowest."""
    base = json.loads(gzip.decompress(CPU_ONLY.read_bytes()))
    for rank in range(3):
        doc = json.loads(json.dumps(base))
        doc["distributedInfo"]["rank"] = rank
        if rank == 1:
            for e in doc["traceEvents"]:
                if isinstance(e.get("dur"), int | float):
                    e["dur"] = e["dur"] * SLOWDOWN
        _write(tmp_path / f"rank{rank}.pt.trace.json", doc)
    steps = [
        e["dur"]
        for e in base["traceEvents"]
        if e.get("cat") == "user_annotation" and str(e.get("name")).startswith("ProfilerStep#")
    ]
    assert steps
    report = report_ranks(tmp_path, workers=1)
    assert all(r.device_us == 0 for r in report.ranks)
    assert [r.host_us for r in report.ranks] == pytest.approx(
        [sum(steps), sum(steps) * SLOWDOWN, sum(steps)]
    )
    assert report.judged_by == "host" and report.slowest.rank == 1
    assert report.over_median == pytest.approx(SLOWDOWN - 1)
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"slowest rank: 1 ({sum(steps) * SLOWDOWN:,.1f} host µs, +50.0% over" in out
    assert main(["report", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["slowest_by"] == "host_us"


def _bad_folders(tmp: Path) -> list[tuple[Path, str]]:
    cases = []
    not_json = tmp / "not_json"
    not_json.mkdir()
    _write(not_json / "rank0.pt.trace.json.gz", _tiny(0))
    (not_json / "rank1.pt.trace.json").write_text("this is no trace\n")
    cases.append((not_json, "rank1.pt.trace.json: not valid JSON"))
    not_trace = tmp / "not_trace"
    not_trace.mkdir()
    (not_trace / "rank0.json").write_text('{"distributedInfo": {"rank": 0}}')
    cases.append((not_trace, "not a chrome trace"))
    no_rank = tmp / "no_rank"
    no_rank.mkdir()
    doc = _tiny(0)
    del doc["distributedInfo"]
    _write(no_rank / "a.json.gz", doc)
    cases.append((no_rank, "no distributedInfo.rank"))
    twice = tmp / "twice"
    twice.mkdir()
    for name in ("a", "b"):
        _write(twice / f"{name}.json", _tiny(0))
    cases.append((twice, "rank 0 again"))
    empty = tmp / "empty"
    empty.mkdir()
    cases.append((empty, "is a directory with no trace files"))
    return cases


def test_a_folder_that_is_not_one_jobs_rank_traces_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder, words in _bad_folders(tmp_path):
        with pytest.raises(TraceError, match=words.replace(".", r"\.")):
            report_ranks(folder, workers=1)
        assert main(["report", str(folder)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and words in err, err
