"""``neuronperf report`` on traces no profiler writes: one line on
stderr and exit status 2, never a traceback, never a figure made of a broken value.

Each bad trace is the real Triton example from tests/data with one thing changed, written
to a temporary file; the trace with only kernel events is the HTA training trace with its
host events dropped, which is a GPU-only trace and must now be reported, not refused.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.cli.main import main

DATA = Path(__file__).parent.parent / "data"
TRITON = DATA / "hta_triton_example__triton_example.json.gz"
HTA_GRAPHS = DATA / "hta__tests__data__trace_diff__test__test.json.gz"


def triton_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(TRITON.read_bytes()))
    return doc


def first(doc: dict[str, Any], cat: str) -> dict[str, Any]:
    event: dict[str, Any] = next(e for e in doc["traceEvents"] if e.get("cat") == cat)
    return event


def set_field(cat: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        first(doc, cat)[key] = value

    return change


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(text)
    return path


def run_report(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (set_field("cpu_op", "pid", [1]), "a pid or tid that is not a number or string ([1]"),
        (set_field("kernel", "tid", {"a": 1}), "a pid or tid that is not a number or string"),
        (set_field("kernel", "dur", -5), "a negative duration (dur -5)"),
        (set_field("cpu_op", "dur", float("nan")), "a time that is not a finite number"),
        (set_field("kernel", "ts", float("inf")), "a time that is not a finite number"),
        (set_field("cpu_op", "name", None), "has no name (name None)"),
        (set_field("kernel", "name", 7), "has no name (name 7)"),
    ],
    ids=["pid-list", "tid-dict", "dur-negative", "dur-nan", "ts-inf", "name-null", "name-int"],
)
def test_a_broken_event_is_one_line_naming_it_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    expected: str,
) -> None:
    doc = triton_doc()
    change(doc)
    code, out, err = run_report(written(tmp_path, json.dumps(doc)), capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("neuronperf: error: ")
    assert expected in err and "Traceback" not in err
    assert "re-record it or fix the file" in err


def test_a_duration_beyond_float_range_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1e400 parses to inf: written as text, since json.dumps would write "Infinity".
    doc = triton_doc()
    first(doc, "kernel")["dur"] = 12345.678
    text = json.dumps(doc).replace("12345.678", "1e400")
    code, _, err = run_report(written(tmp_path, text), capsys)
    assert code == 2 and "a time that is not a finite number" in err and "1e400" not in err
    assert "dur inf" in err


def test_an_integer_of_more_than_4300_digits_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = triton_doc()
    first(doc, "kernel")["args"]["correlation"] = 424242
    text = json.dumps(doc).replace("424242", "9" * 5000)
    code, out, err = run_report(written(tmp_path, text), capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "holds a number no profiler writes" in err
    assert "4300" in err and "Traceback" not in err


def test_a_trace_of_kernels_only_is_reported_as_gpu_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Was `min() arg is an empty sequence` in select_regions; a GPU-only trace now reports.
    doc = json.loads(gzip.decompress(HTA_GRAPHS.read_bytes()))
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    doc = {"traceEvents": kernels}  # no deviceProperties either
    code, out, err = run_report(written(tmp_path, json.dumps(doc)), capsys)
    assert code == 0, err
    assert f"{len(kernels)} kernels" in out and "(whole trace)" in out
    assert "stream 7" in out and "device mode, cuda:unknown" in out


def test_a_kernels_only_trace_in_host_mode_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = triton_doc()
    doc["traceEvents"] = [first(doc, "kernel")]
    path = written(tmp_path, json.dumps(doc))
    assert main(["report", str(path), "--mode", "host"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no host events to analyse in host mode" in err


def nested(depth: int) -> dict[str, Any]:
    """``depth`` ops each inside the one before: a valid trace, deeper than recursion goes."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "pid": 1, "tid": 1}
        | {"ts": 10 + i, "dur": 10 * depth - 2 * i}
        for i in range(depth)
    ]
    return {"traceEvents": events}


def test_ops_nested_deeper_than_recursion_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24 item 13: 500 nested ops were a RecursionError traceback."""
    code, out, err = run_report(written(tmp_path, json.dumps(nested(3000))), capsys)
    assert code == 0, err
    assert "aten::op0" in out


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("ts", "1" + "0" * 400),
        ("External id", "1e999"),
        ("External id", "Infinity"),
        ("flow id", "1e999"),
    ],
)
def test_numbers_past_float_or_int_range_are_one_line_or_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, value: str
) -> None:
    """Issue 24 item 13: each was an OverflowError traceback."""
    doc = triton_doc()
    if where == "ts":
        first(doc, "cpu_op")["ts"] = 987654321
    elif where == "External id":
        first(doc, "kernel")["args"]["External id"] = 987654321
    else:
        kernel = first(doc, "kernel")
        kernel["args"].pop("correlation", None)
        doc["traceEvents"].append({"ph": "f", "cat": "ac2g", "id": 987654321, "ts": kernel["ts"]})
    code, _, err = run_report(
        written(tmp_path, json.dumps(doc).replace("987654321", value)), capsys
    )
    assert code in (0, 2) and "Traceback" not in err
    assert err.count("\n") == (code == 2)


@pytest.mark.parametrize("version", [99.0, 2.5, "99"])
def test_a_kineto_schema_version_newer_in_any_number_form_says_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: object
) -> None:
    """Issue 24 item 15: schemaVersion 99.0 read as a version this code knows."""
    doc = triton_doc()
    doc["schemaVersion"] = version
    code, _, err = run_report(written(tmp_path, json.dumps(doc)), capsys)
    assert code == 2 and err.count("\n") == 1 and "upgrade pytest-neuronperf" in err
