"""Names derived from test ids and regions: file names, modules."""

from __future__ import annotations

import re


def safe_filename(text: str) -> str:
    """A name any file system accepts, still recognisable to a person."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return cleaned[:150] or "region"


def module_of(test_id: str) -> str:
    """``tests/test_x.py::test_y[p]`` -> ``tests/test_x.py``."""
    return test_id.split("::", 1)[0]
