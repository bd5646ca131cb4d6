"""Counts and times as people read them: ``1 op``, ``6 ops``, ``host`` for ``host_us``."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun, singular for one (``many``: where adding an s is wrong)."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


# A time field as a reader says it: "host" in a cell, "host time" in a sentence.
TIME_WORDS = {"host_us": "host", "device_us": "device"}
