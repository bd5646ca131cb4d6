"""files.py: a writer replaces only a regular file or a missing path (issue 24 item 5: a
report at ``/dev/full`` turned the device into a regular file)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_neuronperf.files import write_text


def null_device(where: Path) -> Path:
    """A character device like /dev/null, made in the test's own directory (root only)."""
    try:
        os.mknod(where, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root (CI runs as root)")
    return where


def test_a_character_device_is_written_through_and_stays_a_device(tmp_path: Path) -> None:
    device = null_device(tmp_path / "null")
    write_text(device, '{"schema": "pytest-neuronperf/report"}\n')
    assert stat.S_ISCHR(device.lstat().st_mode)
    assert os.listdir(tmp_path) == ["null"]  # no temporary file left beside it


def test_a_regular_file_and_a_missing_path_are_replaced(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text("before")
    write_text(old, "after")
    write_text(tmp_path / "new" / "new.json", "made")
    assert old.read_text() == "after"
    assert (tmp_path / "new" / "new.json").read_text() == "made"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["new", "new.json", "old.json"]
