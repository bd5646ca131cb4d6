"""Time and peak memory of ``neuronperf report`` on one trace of 1 GB or more.

The trace is synthesised from a real one as bench_trace_parse.py does (its events
replicated step after step, shifted in time, fresh ids), written event by event so that
making it needs little memory. The report runs in a child process; its peak resident set
is the child's ``ru_maxrss``. Run:

    python benchmarks/bench_big_trace.py [--mb 1100] [--source TRACE] [--keep PATH]

Prints the file's size, the wall time, the peak RSS and RSS / size, which
trace/footprint.py's MEMORY_FACTOR must stay above, and the machine's load average.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from pytest_neuronperf.trace.footprint import MEMORY_FACTOR

DEFAULT_SOURCE = (
    Path(__file__).resolve().parent.parent
    / "tests/data/hta_amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
)
_ID_KEYS = ("External id", "correlation", "Record function id")


def write_trace(source: Path, target_bytes: int, out: TextIO) -> None:
    doc: dict[str, Any] = json.loads(gzip.decompress(source.read_bytes()))
    events: list[dict[str, Any]] = doc.pop("traceEvents")
    timed = [e for e in events if "ts" in e]
    span = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed) - min(
        float(e["ts"]) for e in timed
    )
    id_step = 1 + max(
        int(v) for e in events for k, v in (e.get("args") or {}).items() if k in _ID_KEYS
    )
    head = json.dumps(doc)[:-1]
    out.write(head + ', "traceEvents": [')
    untimed = [json.dumps(e) for e in events if "ts" not in e]
    out.write(", ".join(untimed))
    written, i, sep = len(head), 0, ", " if untimed else ""
    while written < target_bytes:
        chunk = []
        for ev in timed:
            new = copy.copy(ev)
            new["ts"] = float(ev["ts"]) + i * (span + 10.0)
            if isinstance(ev.get("id"), int):
                new["id"] = ev["id"] + i * id_step
            if ev.get("args"):
                new["args"] = {
                    k: (v + i * id_step if k in _ID_KEYS and isinstance(v, int) else v)
                    for k, v in ev["args"].items()
                }
            chunk.append(json.dumps(new))
        text = sep + ", ".join(chunk)
        out.write(text)
        written += len(text)
        i, sep = i + 1, ", "
    out.write("]}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1100.0)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--keep", type=Path, default=None, help="write the trace here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "big_trace.json"
        if not path.exists():
            with path.open("w", encoding="utf-8") as f:
                write_trace(args.source, int(args.mb * 1e6), f)
        size = path.stat().st_size
        command = [sys.executable, "-m", "pytest_neuronperf", "report", str(path)]
        t0 = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(f"trace: {size / 1e9:.2f} GB (from {args.source.name})")
    print(f"command: neuronperf report {path.name}  exit {done.returncode}")
    print(done.stdout.splitlines()[0] if done.stdout else done.stderr.strip())
    print(f"wall: {wall:.1f} s   peak RSS: {peak / 1e9:.2f} GB = {peak / size:.2f}x the file")
    print(f"MEMORY_FACTOR (trace/footprint.py): {MEMORY_FACTOR:g}x")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
