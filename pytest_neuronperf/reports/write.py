"""The session's report files: JSON, Markdown (and the GitHub step summary), HTML."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..model import OpRow, Record
from ..settings import Settings
from . import export, html, json, markdown
from .json import write_atomic
from .provenance import collect

# (test id, region) -> the stored per-op rows and op counts, for the HTML charts.
StoredOps = Mapping[tuple[str, str], tuple[Sequence[OpRow], Mapping[str, int]]]
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def write_reports(
    records: Sequence[Record],
    settings: Settings,
    root: Path,
    *,
    backend_note: str = "",
    exit_status: int | None = None,
    stored: StoredOps | None = None,
    environ: Mapping[str, str] = os.environ,
) -> list[str]:
    """Write the reports the settings ask for, relative paths under ``root``. Returns one
    line per file that could not be written: one unwritable place costs that file only."""
    problems: list[str] = []
    # The git commit and CI run the JSON and HTML reports record (None when not asked for).
    where = collect(root) if settings.json_path or settings.html_path else None

    def attempt(path: Path, text: str, *, append: bool = False) -> None:
        try:
            if append:
                with open(path, "a", encoding="utf-8") as fh:  # appended: other steps' too
                    fh.write(text)
            else:
                write_atomic(path, text)
        except OSError as exc:
            problems.append(f"report NOT written: {_shown(path, root)} ({_why(exc, path, root)})")

    if settings.json_path is not None:
        doc = json.document(
            records, backend_note=backend_note, exit_status=exit_status, provenance=where
        )
        attempt(root / settings.json_path, json.dumps(doc))
    summary = environ.get(SUMMARY_ENV)
    if settings.markdown_path is not None or summary:
        text = markdown.render(records, backend_note)
        if settings.markdown_path is not None:
            attempt(root / settings.markdown_path, text)
        if summary:
            attempt(Path(summary), text, append=True)
    if settings.html_path is not None:
        page = html.render(records, backend_note, stored or {}, provenance=where)
        attempt(root / settings.html_path, page)
    if settings.export is not None:
        fmt, path = settings.export
        attempt(root / path, export.dumps(export.render(records, export.as_format(fmt))))
    return problems


def _shown(path: Path, root: Path) -> Path:
    return path.relative_to(root) if path.is_relative_to(root) else path


def _why(exc: OSError, path: Path, root: Path) -> str:
    """The system's words, or the file standing where a directory should be (mkdir says
    only "File exists" then)."""
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        return f"{_shown(blocking, root)} is a file, not a directory"
    return exc.strerror or str(exc)
