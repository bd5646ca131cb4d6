"""Neuron Runtime trace rows -> executions -> per-round figures, without a device.

What these tests stand on: the ``SystemProfileEvents`` table as AWS documents it
(aws-neuron-sdk ``tools/neuron-explorer/profile-schema-reference.rst``: column names and
types; ``how-to-analyze-profile-output.rst``: where ``--data-path`` puts it), and the
``nc_exec_running`` facts a third-party harness reports from trn2 (one row per physical core
under LNC=2, sharing ``flow_id``; ``model_id`` in ``extra_attributes_json``). The Parquet
files are written by these tests in that schema: none has been seen from hardware.
Expected figures are computed here by plain loops over the rows written.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_neuronperf.backends.neuron.runtime import (
    EXEC_EVENT,
    Execution,
    RoundExecutions,
    RuntimeTraceError,
    executions,
    model_name,
    models_differ,
    per_window,
    read_exec_rows,
    system_event_files,
)

PID = 4242
OTHER_PID = 777

# SystemProfileEvents as profile-schema-reference.rst lists it.
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("start_ts", pa.int64()),
        ("end_ts", pa.int64()),
        ("duration_ns", pa.int64()),
        ("trace_event_source", pa.string()),
        ("instance_id", pa.string()),
        ("process_id", pa.int64()),
        ("thread_id", pa.int64()),
        ("nc_idx", pa.int64()),
        ("pcore_idx", pa.int64()),
        ("worker_gid", pa.int64()),
        ("flow_id", pa.list_(pa.string())),
        ("framework_stream_id", pa.string()),
        ("extra_attributes_json", pa.string()),
    ]
)

_ids: Iterator[int] = iter(range(1, 1_000_000))


def row(
    start: int,
    end: int,
    *,
    name: str = EXEC_EVENT,
    flow: list[str] | None = None,
    model: int = 7,
    pcore: int = 0,
    nc: int = 0,
    pid: int = PID,
    source: str = "neuron_hw",
) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "name": name,
        "start_ts": start,
        "end_ts": end,
        "duration_ns": end - start,
        "trace_event_source": source,
        "instance_id": "i-0123456789abcdef0",
        "process_id": pid,
        "thread_id": 11,
        "nc_idx": nc,
        "pcore_idx": pcore,
        "worker_gid": nc,
        "flow_id": flow,
        "framework_stream_id": "0",
        "extra_attributes_json": json.dumps({"model_id": model}),
    }


def lnc2(start: int, end: int, flow: str, model: int = 7, skew: int = 40) -> list[dict[str, Any]]:
    """One execution as LNC=2 writes it: a row per physical core, a little apart."""
    return [
        row(start, end - skew, flow=[flow], model=model, pcore=0),
        row(start + skew, end, flow=[flow], model=model, pcore=1),
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)
    return path


def expected_rounds(
    rows: list[dict[str, Any]], windows: list[tuple[int, int]]
) -> list[tuple[int, float]]:
    """(executions, device µs) per window, by a plain loop: our process's nc_exec_running
    rows grouped by flow id into [min start, max end]; a row without one stands alone."""
    spans: dict[str, list[int]] = {}
    for r in rows:
        if r["name"] != EXEC_EVENT or r["process_id"] != PID:
            continue
        key = ",".join(r["flow_id"]) if r["flow_id"] else f"row{r['id']}"
        lo, hi = spans.get(key, [r["start_ts"], r["end_ts"]])
        spans[key] = [min(lo, r["start_ts"]), max(hi, r["end_ts"])]
    out = []
    for w0, w1 in windows:
        inside = [(a, b) for a, b in spans.values() if w0 <= a and b <= w1]
        out.append((len(inside), sum(b - a for a, b in inside) / 1e3))
    return out


W0, W1, W2 = (1_000_000, 2_000_000), (3_000_000, 4_000_000), (5_000_000, 6_000_000)


def figures(rounds: list[RoundExecutions]) -> list[tuple[int, float]]:
    return [(len(r.executions), r.device_us) for r in rounds]


def test_lnc2_duplicates_merge_by_flow_id(tmp_path: Path) -> None:
    rows = lnc2(1_100_000, 1_400_000, "100") + lnc2(1_500_000, 1_900_000, "101")
    rows += lnc2(3_100_000, 3_400_000, "102") + lnc2(3_500_000, 3_900_000, "103")
    rows.append(row(1_050_000, 1_060_000, name="nrt_execute", source="neuron_rt"))
    read = read_exec_rows([write(tmp_path / "SystemProfileEvents.parquet", rows)])
    assert len(read) == 8 and {r["name"] for r in read} == {EXEC_EVENT}
    execs = executions(read, pid=PID)
    assert len(execs) == 4 and all(e.rows == 2 for e in execs)
    assert execs[0] == Execution("model 7", 1_100_000, 1_400_000, 2, 0)
    got = per_window(execs, [W0, W1], ["round 0", "round 1"])
    assert figures(got) == expected_rounds(rows, [W0, W1]) == [(2, 700.0), (2, 700.0)]


def test_rows_sharing_one_of_several_flow_ids_are_one_execution() -> None:
    rows = [
        row(1_100_000, 1_300_000, flow=["5", "6"], pcore=0),
        row(1_120_000, 1_350_000, flow=["6"], pcore=1),
        row(1_400_000, 1_500_000, flow=["7"]),
    ]
    execs = executions(rows)
    assert [(e.start_ns, e.end_ns, e.rows) for e in execs] == [
        (1_100_000, 1_350_000, 2),
        (1_400_000, 1_500_000, 1),
    ]


def test_missing_flow_id_merges_overlapping_halves_on_one_core(tmp_path: Path) -> None:
    rows = [
        row(1_100_000, 1_300_000, flow=None, pcore=0),
        row(1_110_000, 1_320_000, flow=None, pcore=1),  # the other half of the same one
        row(1_400_000, 1_500_000, flow=[], pcore=0),  # the next execution, serial
        row(1_410_000, 1_480_000, flow=None, nc=1, pcore=2),  # another logical core
    ]
    execs = executions(read_exec_rows([write(tmp_path / "SystemProfileEvents.parquet", rows)]))
    assert [(e.start_ns, e.end_ns, e.nc, e.rows) for e in execs] == [
        (1_100_000, 1_320_000, 0, 2),
        (1_400_000, 1_500_000, 0, 1),
        (1_410_000, 1_480_000, 1, 1),
    ]
    [r] = per_window(execs, [W0], ["round 0"])
    assert r.device_us == (220_000 + 100_000 + 70_000) / 1e3


def test_straddling_execution_is_an_error_naming_the_round() -> None:
    execs = executions(lnc2(900_000, 1_200_000, "1") + lnc2(3_100_000, 3_200_000, "2"))
    with pytest.raises(RuntimeTraceError, match=r"round 0: an execution of model 7 .* straddles"):
        per_window(execs, [W0, W1], ["round 0", "round 1"])
    with pytest.raises(RuntimeTraceError, match=r"round 1: .* straddles"):
        per_window(executions(lnc2(3_900_000, 4_100_000, "3")), [W0, W1], ["round 0", "round 1"])


def test_executions_outside_every_window_do_not_count() -> None:
    # Warm-up and prime rounds run between the windows.
    execs = executions(lnc2(2_200_000, 2_400_000, "1") + lnc2(1_200_000, 1_300_000, "2"))
    got = per_window(execs, [W0, W1], ["round 0", "round 1"])
    assert figures(got) == [(1, 100.0), (0, 0.0)]


def test_empty_round_makes_the_rounds_differ_in_models() -> None:
    rows = lnc2(1_100_000, 1_200_000, "1") + lnc2(5_100_000, 5_200_000, "2")
    rounds = per_window(executions(rows), [W0, W1, W2], ["round 0", "round 1", "round 2"])
    assert figures(rounds) == expected_rounds(rows, [W0, W1, W2])
    text = models_differ(rounds, ["round 0", "round 1", "round 2"])
    assert text is not None and "round 1 ran no execution" in text and "round 2" not in text


def test_rounds_running_other_models_differ() -> None:
    rows = lnc2(1_100_000, 1_200_000, "1", model=7) + lnc2(3_100_000, 3_200_000, "2", model=8)
    rounds = per_window(executions(rows), [W0, W1], ["round 0", "round 1"])
    text = models_differ(rounds, ["round 0", "round 1"])
    assert (
        text is not None and "round 0 ran model 7 ×1" in text and "round 1 ran model 8 ×1" in text
    )
    same = per_window(executions(rows[:2]), [W0], ["round 0"])
    assert models_differ(same, ["round 0"]) is None


def test_other_process_events_are_dropped(tmp_path: Path) -> None:
    rows = lnc2(1_100_000, 1_200_000, "1")
    rows.append(row(1_300_000, 1_800_000, flow=["9"], pid=OTHER_PID))
    execs = executions(read_exec_rows([write(tmp_path / "SystemProfileEvents.parquet", rows)]), PID)
    [r] = per_window(execs, [W0], ["round 0"])
    assert figures([r]) == expected_rounds(rows, [W0]) == [(1, 100.0)]
    assert len(executions(rows)) == 2  # offline, every process counts


def test_unordered_rows_give_the_same_rounds(tmp_path: Path) -> None:
    rows = []
    for i, (w0, _) in enumerate([W0, W1, W2]):
        for k in range(3):
            start = w0 + 100_000 + k * 200_000
            rows += lnc2(start, start + 150_000 + 1_000 * i, f"{i}-{k}", model=k)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    path = write(tmp_path / "SystemProfileEvents.parquet", shuffled)
    labels = ["round 0", "round 1", "round 2"]
    got = per_window(executions(read_exec_rows([path]), PID), [W0, W1, W2], labels)
    assert figures(got) == expected_rounds(rows, [W0, W1, W2])
    assert [e.model for e in got[1].executions] == ["model 0", "model 1", "model 2"]
    assert models_differ(got, labels) is None


def test_model_names() -> None:
    assert model_name(json.dumps({"model_id": 12})) == "model 12"
    assert model_name(json.dumps({"model_id": 12, "model_name": "neff_abc"})) == "neff_abc"
    assert model_name("not json") == model_name(None) == "unknown model"


def test_split_tables_are_all_read(tmp_path: Path) -> None:
    write(tmp_path / "SystemProfileEvents_0.parquet", lnc2(1_100_000, 1_200_000, "1"))
    write(tmp_path / "SystemProfileEvents_1.parquet", lnc2(1_300_000, 1_400_000, "2"))
    (tmp_path / "Instruction.parquet").write_bytes(b"")
    files = system_event_files(tmp_path)
    assert [f.name for f in files] == [
        "SystemProfileEvents_0.parquet",
        "SystemProfileEvents_1.parquet",
    ]
    assert len(executions(read_exec_rows(files))) == 2


def test_bad_files_are_one_line_errors(tmp_path: Path) -> None:
    junk = tmp_path / "SystemProfileEvents.parquet"
    junk.write_bytes(b"PAR1 but not really")
    with pytest.raises(RuntimeTraceError, match="not a readable Parquet file") as bad:
        read_exec_rows([junk])
    assert "\n" not in str(bad.value)
    other = tmp_path / "Instruction.parquet"
    pq.write_table(pa.table({"opcode": ["MATMUL"]}), other)
    with pytest.raises(RuntimeTraceError, match="not a SystemProfileEvents table"):
        read_exec_rows([other])
    with pytest.raises(RuntimeTraceError, match="end_ts 5 before start_ts 9"):
        executions([row(9, 5, flow=["1"])])
