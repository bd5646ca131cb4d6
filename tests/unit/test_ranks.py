"""trace/ranks.py: how many rank traces are read at once, and the file refused as too
large, at the boundary of the memory given."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pytest_neuronperf.trace.events import TraceError
from pytest_neuronperf.trace.ranks import MEMORY_FACTOR, needed_bytes, workers_for


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
