"""A long phase's progress lines in pytest's own output, and pytest's dots after them.

pytest's terminal reporter keeps the file whose dots the current line holds
(``currentfspath``: a path; a string under -v, whose lines pytest starts again itself).
Our lines end that line; the file's name is written again when its next result comes, so
that the dots go on after it, neither alone on a line nor after a name left dangling
between two of our lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..escape import terminal
from ..reports.fit import terminal_width, wrap

# The file whose dots our lines interrupted, until its next result is written.
_INTERRUPTED = pytest.StashKey[Path]()


def write_progress(config: pytest.Config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        return
    line = terminal(line)  # a region or test name may hold control characters
    lines = wrap(line, terminal_width(config))
    if capture is None:
        _write(config, reporter, lines)
        return
    # Output capture holds file descriptor 1 during a test: step outside it briefly.
    with capture.global_and_fixture_disabled():
        _write(config, reporter, lines)


def _write(config: pytest.Config, reporter: Any, lines: list[str]) -> None:
    before = getattr(reporter, "currentfspath", None)
    for part in lines:
        reporter.write_line(part)
    if isinstance(before, Path):
        config.stash[_INTERRUPTED] = before


def resume_progress(config: pytest.Config, report: pytest.TestReport) -> None:
    """Before pytest writes ``report``'s result: the interrupted file's name again, where
    the result is that file's and nothing has started a line since."""
    before = config.stash.get(_INTERRUPTED, None)
    if before is None:
        return
    del config.stash[_INTERRUPTED]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    start = getattr(reporter, "startpath", None)
    same_file = config.rootpath / report.nodeid.split("::")[0] == before
    if reporter is None or reporter.currentfspath is not None or not same_file:
        return
    try:
        shown = os.path.relpath(before, start) if isinstance(start, Path) else str(before)
    except ValueError:  # another drive
        shown = str(before)
    reporter.write(f"{shown} ")
    reporter.currentfspath = before
