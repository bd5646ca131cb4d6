"""Counts as people read them: ``1 op``, ``6 ops``, ``1 graph break``."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun, singular for one (``many``: where adding an s is wrong)."""
    return f"{count} {one if count == 1 else (many or one + 's')}"
