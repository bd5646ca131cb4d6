"""The ``--tolerance`` value of the report tools (compare, history), read one way."""

from __future__ import annotations

from ..settings import defaults, parse_tolerance


def read_tolerance(value: str | None) -> float:
    """The fraction ``--tolerance`` gives (per cent on the command line), or the session
    default when it is not given; ValueError saying what is wrong otherwise."""
    return defaults().tolerance if value is None else parse_tolerance(value)
