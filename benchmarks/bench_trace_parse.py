"""How long the offline report takes on a ~100 MB trace, against a plain ``json.load``.

The trace is synthesised from a real one (tests/data's ROCm training step by default):
its events are replicated step after step, shifted in time and with fresh ids, so the
result has the real mix of ops, runtime calls, kernels and flows at 100 MB. Run:

    python benchmarks/bench_trace_parse.py [--mb 100] [--source TRACE] [--repeat 3]

Prints the median seconds of each and the ratios: report / json.load, and report / json.load
with garbage collection paused as the report pauses it (the target, <= 1.0x, issue 29: the
report decodes with msgspec). Checks that the report is the same as one parsed by json.
"""

from __future__ import annotations

import argparse
import copy
import gc
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from pytest_neuronperf.trace import chrome, offline
from pytest_neuronperf.trace.offline import report_trace

DEFAULT_SOURCE = (
    Path(__file__).resolve().parent.parent
    / "tests/data/hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
)
_ID_KEYS = ("External id", "correlation", "Record function id")


def synthesise(source: Path, target_bytes: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(gzip.decompress(source.read_bytes()))
    events: list[dict[str, Any]] = doc["traceEvents"]
    timed = [e for e in events if "ts" in e]
    span = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed) - min(
        float(e["ts"]) for e in timed
    )
    id_step = 1 + max(
        int(v) for e in events for k, v in (e.get("args") or {}).items() if k in _ID_KEYS
    )
    chunk = len(json.dumps(timed))
    copies = max(1, -(-target_bytes // chunk))  # rounded up: the trace is at least the target
    out = [e for e in events if "ts" not in e]
    for i in range(copies):
        for ev in timed:
            new = copy.copy(ev)
            new["ts"] = float(ev["ts"]) + i * (span + 10.0)
            if "id" in ev and isinstance(ev["id"], int):
                new["id"] = ev["id"] + i * id_step
            args = ev.get("args")
            if args:
                new["args"] = {
                    k: (v + i * id_step if k in _ID_KEYS and isinstance(v, int) else v)
                    for k, v in args.items()
                }
            out.append(new)
    doc["traceEvents"] = out
    return doc


def _time_all(fns: list[Any], repeat: int) -> list[float]:
    """Median seconds of each of ``fns``, interleaved and each after a full collection, so
    none pays for another's garbage or for a warmer page cache."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, samples, strict=True):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return [statistics.median(s) for s in samples]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big_trace.json"
        path.write_text(json.dumps(synthesise(args.source, int(args.mb * 1e6))))
        size = path.stat().st_size
        n_events = 0

        def plain() -> None:
            nonlocal n_events
            with path.open("rb") as f:
                n_events = len(json.load(f)["traceEvents"])

        def plain_gc_paused() -> None:
            # The report pauses garbage collection while it parses (offline.gc_paused): the
            # same json.load with it paused is the floor it is also held against.
            gc.disable()
            try:
                plain()
            finally:
                gc.enable()

        def report() -> None:
            report_trace(path)

        t_json, t_json_nogc, t_report = _time_all([plain, plain_gc_paused, report], args.repeat)
        result = report_trace(path)
        identical = _same_as_json_parsed(path, result)
    m = result.regions[0].measurement
    print(f"trace: {size / 1e6:.1f} MB, {n_events:,} events (from {args.source.name})")
    print(f"report: {m.rounds} rounds of {m.region}, {m.ops} ops, {m.kernels} kernels a round")
    print(
        f"json.load: {t_json:.2f} s   json.load, gc paused: {t_json_nogc:.2f} s   "
        f"report: {t_report:.2f} s"
    )
    print(
        f"ratio: {t_report / t_json:.2f}x json.load, {t_report / t_json_nogc:.2f}x json.load "
        "with gc paused (target: <= 1.0x json.load with gc paused)"
    )
    print(f"output identical to the report parsed by json: {'yes' if identical else 'NO'}")
    return 0 if identical else 1


def _same_as_json_parsed(path: Path, result: offline.TraceReport) -> bool:
    """The report from msgspec's typed decode against one from the json path the decode
    falls back to (json.loads of the same bytes, converted), forced by a decoder that
    refuses everything."""

    class Refusing:
        def decode(self, data: bytes) -> Any:
            raise msgspec.DecodeError("forced onto the json path")

    fast = chrome._DECODER
    chrome._DECODER = Refusing()  # type: ignore[assignment]
    try:
        slow = report_trace(path)
    finally:
        chrome._DECODER = fast
    return json.dumps(result.to_dict(), sort_keys=True) == json.dumps(
        slow.to_dict(), sort_keys=True
    )


if __name__ == "__main__":
    sys.exit(main())
