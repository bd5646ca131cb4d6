"""Byte counts as people write them: ``"512 MiB"`` in, ``"4.0 MiB"`` out.

Units as pytest-memray parses them: B, KB/KiB, MB/MiB, GB/GiB (and TB/TiB), any case, a
space or none between number and unit; KB and KiB alike are 1024 bytes there, and here.
"""

from __future__ import annotations

import math
import re

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kmgt]?)(i?b)?\s*$", re.I)


def parse_bytes(value: object) -> int:
    """A byte count from an int (bytes) or a string with a unit; ValueError saying the forms
    accepted. A fraction of a byte rounds down: a limit is never looser than written."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"expected bytes as an int or a string such as '512 MiB', got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"expected a number of bytes >= 0, got {value!r}")
        return value
    m = _PATTERN.match(value)
    if m is None or (m.group(2) and not m.group(3)):
        raise ValueError(
            f"expected a size such as '512 MiB', '4 KB' or '100 B' (units B, KB/KiB, MB/MiB, "
            f"GB/GiB), got {value!r}"
        )
    amount = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not math.isfinite(amount):
        raise ValueError(f"expected a finite size, got {value!r}")
    return int(amount)


def format_bytes(n: float) -> str:
    """``4194304`` -> ``4.0 MiB``; a sign kept for changes (``-512 B``)."""
    sign = "-" if n < 0 else ""
    v = abs(n)
    for scale, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if v >= scale:
            return f"{sign}{v / scale:.1f} {unit}"
    return f"{sign}{v:.0f} B"
