"""trace/chrome.py: msgspec's typed decode against json's parse of the same bytes, on the
real traces in tests/data, and the fallback for what msgspec refuses."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.trace.chrome import TraceError, as_chrome, decode_chrome
from pytest_neuronperf.trace.offline import READ_WHOLE

DATA = Path(__file__).resolve().parent.parent / "data"
TRACES = sorted(p for p in DATA.glob("*.json.gz") if not p.name.startswith("cpu_rmsnorm"))
TRACES += sorted(DATA.glob("cpu_rmsnorm_*.json.gz"))


def _fields(ev: Any) -> tuple[Any, ...]:
    args = ev.args if ev.args else None
    return (
        ev.ph,
        ev.cat,
        ev.name,
        ev.ts,
        ev.dur,
        ev.pid,
        ev.tid,
        ev.id,
        args.ext if args else None,
        args.corr if args else None,
    )


def _plain(entry: dict[str, Any]) -> tuple[Any, ...]:
    """The same fields read from json's dict by a plain lookup, absent ones as the
    records hold them."""
    unset = "UNSET"
    args = entry.get("args")
    args = args if isinstance(args, dict) else None
    return (
        entry.get("ph", unset),
        entry.get("cat", unset),
        entry.get("name"),
        entry.get("ts", unset),
        entry.get("dur", unset),
        entry.get("pid"),
        entry.get("tid"),
        entry.get("id", unset),
        args.get("External id", 0) if args is not None else None,
        args.get("correlation", 0) if args is not None else None,
    )


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name[:40])
def test_typed_decode_holds_what_json_parses(path: Path) -> None:
    data = gzip.decompress(path.read_bytes())
    parsed = json.loads(data)
    doc = decode_chrome(data, path.name, READ_WHOLE)
    entries = [e for e in parsed["traceEvents"] if isinstance(e, dict)]
    assert len(doc.events) == len(entries)
    got = [tuple("UNSET" if repr(v) == "UNSET" else v for v in _fields(e)) for e in doc.events]
    assert got == [_plain(e) for e in entries]
    whole = [
        e
        for e in entries
        if isinstance(e.get("name"), str) and any(e["name"].startswith(p) for p in READ_WHOLE)
    ]
    assert list(doc.whole) == whole
    assert doc.device_properties == parsed.get("deviceProperties")
    assert doc.distributed_info == parsed.get("distributedInfo")


def test_a_trace_with_collectives_keeps_them_whole() -> None:
    """The HTA trace-diff trace holds NCCL calls and record_param_comms: a real case of
    the second pass, not only an empty one."""
    path = DATA / "hta__tests__data__trace_diff__test__test.json.gz"
    doc = decode_chrome(gzip.decompress(path.read_bytes()), path.name, READ_WHOLE)
    names = {e["name"] for e in doc.whole}
    assert "record_param_comms" in names
    assert any(n.startswith("nccl:") for n in names)
    # Whole: with args the typed records skip (this trace's are from before Kineto
    # wrote message sizes, so its bytes come from nowhere; the point is the args).
    assert all("Call stack" in e["args"] for e in doc.whole if e["name"] == "record_param_comms")


_ODD = {
    "NaN literal": b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": NaN}]}',
    "bare array": b'[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2}]',
    "entry not an object": b'{"traceEvents": [3, {"ph": "X", "name": "nccl:all_reduce"}]}',
    "args not an object": b'{"traceEvents": [{"name": "record_param_comms", "args": [1]}]}',
    "integer past 64 bits": b'{"traceEvents": [{"name": "a", "ts": 123456789012345678901234}]}',
}


@pytest.mark.parametrize("data", list(_ODD.values()), ids=list(_ODD))
def test_what_msgspec_refuses_reads_as_json_parses_it(data: bytes) -> None:
    doc = decode_chrome(data, "t", READ_WHOLE)
    expected = as_chrome(json.loads(data), "t", READ_WHOLE)
    assert [repr(_fields(e)) for e in doc.events] == [repr(_fields(e)) for e in expected.events]
    assert doc.whole == expected.whole
    raw = json.loads(data)
    entries = raw if isinstance(raw, list) else raw["traceEvents"]
    assert len(doc.events) == sum(isinstance(e, dict) for e in entries)


def test_args_that_are_no_object_read_as_absent() -> None:
    doc = decode_chrome(_ODD["args not an object"], "t", READ_WHOLE)
    assert repr(doc.events[0].args) == "UNSET"
    assert doc.whole == ({"name": "record_param_comms", "args": [1]},)


@pytest.mark.parametrize("data", [b'{"events": []}', b"3", b'"x"', b'{"traceEvents": 3}'])
def test_json_that_is_no_chrome_trace_is_one_error(data: bytes) -> None:
    with pytest.raises(TraceError, match="not a chrome trace"):
        decode_chrome(data, "t.json")


def test_what_is_not_json_raises_as_json_does() -> None:
    with pytest.raises(json.JSONDecodeError):
        decode_chrome(b'{"traceEvents": [', "t.json")
