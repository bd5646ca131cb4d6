"""Byte sizes as pytest-memray writes them, and as the reports print them."""

from __future__ import annotations

import pytest

from pytest_neuronperf.units import format_bytes, parse_bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (4096, 4096),
        ("100 B", 100),
        ("100B", 100),
        ("4 KB", 4 * 1024),
        ("4 KiB", 4 * 1024),
        ("4kb", 4 * 1024),
        ("512 MiB", 512 * 1024 * 1024),
        ("512 MB", 512 * 1024 * 1024),
        ("1.5 GiB", 3 * 1024**3 // 2),
        ("2 GB", 2 * 1024**3),
        ("12", 12),
    ],
)
def test_sizes_parse_as_pytest_memray_reads_them(text: object, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["", "MiB", "12 parsecs", "4 K", "-1 MB", -1, 1.5, True, None])
def test_anything_else_is_refused_with_the_forms_accepted(bad: object) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_bytes(bad)


def test_bytes_print_in_binary_units_with_a_sign_for_changes() -> None:
    assert format_bytes(4 * 1024 * 1024) == "4.0 MiB"
    assert format_bytes(512) == "512 B"
    assert format_bytes(-1536) == "-1.5 KiB"
    assert format_bytes(3 * 1024**3) == "3.0 GiB"
