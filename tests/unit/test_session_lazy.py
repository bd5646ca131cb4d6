"""session/lazy.py: the run's one session object, and the one place that starts measuring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_neuronperf

PACKAGE = Path(pytest_neuronperf.__file__).parent


def test_only_the_session_object_starts_the_measuring_session() -> None:
    """roles.start registers the measuring session with pytest: one caller, so one start."""
    callers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").endswith("roles"):
                continue
            if any(alias.name == "start" for alias in node.names):
                callers.append(path.relative_to(PACKAGE).as_posix())
    assert callers == ["session/lazy.py"]
