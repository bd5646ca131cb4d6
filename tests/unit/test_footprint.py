"""trace/footprint.py: how many rank traces are read at once, and the file refused as too
large, at the boundary of the memory given."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pytest_neuronperf.trace.events import TraceError
from pytest_neuronperf.trace.footprint import MEMORY_FACTOR, needed_bytes, workers_for


def test_a_gzip_trace_needs_its_uncompressed_size_times_the_factor(tmp_path: Path) -> None:
    text = b'{"traceEvents": []}' + b" " * 100_000
    plain, packed = tmp_path / "a.json", tmp_path / "b.json.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    assert packed.stat().st_size < 1_000
    assert needed_bytes(plain) == needed_bytes(packed) == int(len(text) * MEMORY_FACTOR)


def test_readers_fit_the_budget_and_a_file_that_alone_does_not_is_refused(tmp_path: Path) -> None:
    files = []
    for i in range(4):
        f = tmp_path / f"r{i}.json"
        f.write_bytes(b" " * 1000)
        files.append(f)
    need = needed_bytes(files[0])
    assert workers_for(files, need, cpus=8) == 1  # holds at the boundary
    assert workers_for(files, 2 * need + 1, cpus=8) == 2
    assert workers_for(files, 100 * need, cpus=3) == 3  # never more than the CPUs
    assert workers_for(files, 100 * need, cpus=8) == 4  # nor than the files
    with pytest.raises(TraceError, match=r"r0\.json: too large to read here .*record fewer steps"):
        workers_for(files, need - 1, cpus=8)


def test_a_misnamed_or_damaged_gzip_is_counted_by_its_own_size(tmp_path: Path) -> None:
    # Its last four bytes are no size: "}}}}" would read as 2.1 GB.
    fake = tmp_path / "t.json.gz"
    fake.write_bytes(b'{"traceEvents": []}' + b"}" * 20)
    assert needed_bytes(fake) == int(fake.stat().st_size * MEMORY_FACTOR)
    # A gzip cut short: its trailer is deflate data, believed at most to deflate's ratio.
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(b"x" * 100_000)[:40])
    assert needed_bytes(cut) <= 40 * 1032 * MEMORY_FACTOR
