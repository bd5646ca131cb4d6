"""How long the offline report takes on a ~100 MB trace, against a plain ``json.load``.

The trace is synthesised from a real one (tests/data's ROCm training step by default):
its events are replicated step after step, shifted in time and with fresh ids, so the
result has the real mix of ops, runtime calls, kernels and flows at 100 MB. Run:

    python benchmarks/bench_trace_parse.py [--mb 100] [--source TRACE] [--repeat 3]

Prints the median seconds of each and the ratio (report / json.load).
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
    copies = max(1, target_bytes // chunk)
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


def _time_pair(a: Any, b: Any, repeat: int) -> tuple[float, float]:
    """Median seconds of ``a`` and ``b``, interleaved and each after a full collection, so
    neither pays for the other's garbage or for a warmer page cache."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((a, samples[0]), (b, samples[1])):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return statistics.median(samples[0]), statistics.median(samples[1])


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

        def report() -> None:
            report_trace(path)

        t_json, t_report = _time_pair(plain, report, args.repeat)
        result = report_trace(path)
    m = result.regions[0].measurement
    print(f"trace: {size / 1e6:.1f} MB, {n_events:,} events (from {args.source.name})")
    print(f"report: {m.rounds} rounds of {m.region}, {m.ops} ops, {m.kernels} kernels a round")
    print(f"json.load: {t_json:.2f} s   report: {t_report:.2f} s   ratio: {t_report / t_json:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
