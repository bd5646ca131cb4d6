"""Trace files of measured regions: their names, writing them, and pointing at them.

This module's one job is the Kineto JSON a profiler session leaves behind when a trace
folder is set: a file name safe on any file system and unique per test and region, the
export itself (nested regions share their outer region's file), and the lines a failure
message adds so the developer can open the trace. Measuring stays with the runner.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..names import safe_filename

# Where each (test id, region) pair's trace was written.
TracePaths = dict[tuple[str, str], Path]


def export_trace(
    prof: Any,
    trace_dir: Path | None,
    paths: TracePaths,
    test_id: str,
    region: str,
    regions: list[str],
) -> str | None:
    """Write the session's trace into ``trace_dir`` (nothing when it is None) and record
    its path in ``paths``; nested regions share their outer region's file. A trace the
    disk did not take whole (full, over quota) is removed and not recorded, so no failure
    points at it: returns the line that says so."""
    if trace_dir is None:
        return None
    trace_dir.mkdir(parents=True, exist_ok=True)
    path = trace_dir / trace_filename(test_id, region)
    taken = {p for k, p in paths.items() if k[0] != test_id or k[1] not in regions}
    if path in taken:
        # Two ids that clean up to the same name (``[a/b]`` and ``[a_b]``) must not
        # overwrite each other's trace.
        path = path.with_name(trace_filename(test_id, region, unique=True))
    try:
        prof.export_chrome_trace(str(path))
        whole = _whole(path)
    except OSError:
        whole = False
    if not whole:
        path.unlink(missing_ok=True)
        return (
            f"neuronperf: trace {path} could not be written whole (is the disk full?); "
            "it was removed, and traces that fail after it are not named"
        )
    for name in regions:
        paths[(test_id, name)] = path
    return None


def _whole(path: Path) -> bool:
    """Whether the file ends as a chrome trace does: Kineto writes a cut-off or empty file
    without a word when the disk is full."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(0, f.tell() - 64))
        tail = f.read().rstrip()
    return tail.endswith((b"}", b"]"))


def trace_lines(paths: TracePaths, test_id: str, regions: Iterable[str]) -> str:
    """The lines a failure message adds so the developer can open the traces."""
    found = sorted({str(p) for r in regions if (p := paths.get((test_id, r)))})
    return "".join(f"\ntrace: {p} (open it in https://ui.perfetto.dev)" for p in found)


def trace_filename(test_id: str, region: str, *, unique: bool = False) -> str:
    """``<test>--<region>.json``, safe on any file system (under 200 characters). Cleaning
    and truncation can make two names equal; a truncated name, or ``unique``, gets a short
    hash of the exact pair."""
    test, reg = safe_filename(test_id), safe_filename(region)
    stem = f"{test[:120]}--{reg[:60]}"
    if unique or len(test) > 120 or len(reg) > 60:
        digest = hashlib.sha1(f"{test_id}\0{region}".encode()).hexdigest()[:10]
        stem = f"{stem}-{digest}"
    return f"{stem}.json"
