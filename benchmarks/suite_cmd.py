"""The pytest command line that every benchmark's inner pytest run starts from."""

from __future__ import annotations

import sys


def pytest_cmd(*args: str, off: tuple[str, ...] = ("cacheprovider",)) -> list[str]:
    """`python -m pytest -q` in this interpreter, plugins in *off* disabled, then *args*."""
    disabled = [flag for name in off for flag in ("-p", f"no:{name}")]
    return [sys.executable, "-m", "pytest", "-q", *disabled, *args]
