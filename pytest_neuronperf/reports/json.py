"""The machine-readable report: every measurement, its verdicts, the environment and where
it came from (git, CI), as one JSON document with a versioned schema
(``schemas/report-2.schema.json``); and reading such documents back, version 1 or 2, for
``neuronperf compare`` and ``history``."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import NeuronPerfError
from ..model import Record
from .provenance import Ci, Git, Provenance

SCHEMA_ID = "pytest-neuronperf/report"
# 2 added git and ci (where the report came from); readers take both.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)


class ReportError(NeuronPerfError, ValueError):
    """A file that is not a report this version can read; the message says which and why.
    ``not_a_report``: the file is some other JSON (or none), not a damaged report."""

    def __init__(self, message: str, *, not_a_report: bool = False) -> None:
        super().__init__(message)
        self.not_a_report = not_a_report


def schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    text = resources.files("pytest_neuronperf.reports").joinpath(
        f"schemas/report-{version}.schema.json"
    )
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


def document(
    records: Sequence[Record],
    *,
    backend_note: str = "",
    exit_status: int | None = None,
    now: datetime | None = None,
    provenance: Provenance | None = None,
) -> dict[str, Any]:
    from .. import __version__

    environments = sorted({json.dumps(r.measurement.environment, sort_keys=True) for r in records})
    counts: dict[str, int] = {}
    for r in records:
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.baseline:
            counts[f"baseline {r.baseline}"] = counts.get(f"baseline {r.baseline}", 0) + 1
    return {
        "schema": SCHEMA_ID,
        "schema_version": SCHEMA_VERSION,
        "generated_at": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "pytest_neuronperf": __version__,
        "backend_note": backend_note,
        "exit_status": exit_status,
        "git": provenance.git.to_dict() if provenance and provenance.git else None,
        "ci": provenance.ci.to_dict() if provenance and provenance.ci else None,
        "environments": [json.loads(e) for e in environments],
        "summary": {"measurements": len(records), "by_status": dict(sorted(counts.items()))},
        "measurements": [_clean(r.to_dict()) for r in records],
    }


def dumps(doc: dict[str, Any]) -> str:
    # allow_nan=False: NaN is not JSON, and a reader would choke on it far from here.
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory, so a reader never sees half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file private (0600); a report is for sharing, as open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


@dataclass(frozen=True)
class Report:
    """A report read back: what compare and history need of it."""

    path: Path
    version: int
    generated_at: str
    records: tuple[Record, ...]
    provenance: Provenance
    backend_note: str = ""
    exit_status: int | None = None

    @property
    def device_kinds(self) -> list[str]:
        return sorted({r.measurement.device_kind for r in self.records})

    def name(self) -> str:
        """The file, with its commit and branch where the report records them."""
        g = self.provenance.git
        if g is None:
            return str(self.path)
        return f"{self.path} ({g.commit[:7]}{' on ' + g.branch if g.branch else ''})"


def load(path: Path) -> Report:
    """Reads a report of schema version 1 or 2. Raises ReportError, one line naming the
    file and what to do, for a file that is missing, not JSON or not such a report."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot be read ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno})", not_a_report=True
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_ID:
        raise ReportError(
            f'{path}: not a pytest-neuronperf report (no "schema": "{SCHEMA_ID}"); '
            "write one with --neuron-profile-json=PATH",
            not_a_report=True,
        )
    version = doc.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise ReportError(
            f"{path}: report schema version {version!r}, this pytest-neuronperf reads "
            f"{' and '.join(map(str, READABLE_VERSIONS))}; upgrade pytest-neuronperf"
        )
    raw = doc.get("measurements")
    if not isinstance(raw, list):
        raise ReportError(f"{path}: 'measurements' is missing or not a list")
    records = []
    for i, item in enumerate(raw):
        try:
            records.append(Record.from_dict(item))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReportError(f"{path}: measurement {i} is malformed ({exc!r})") from None
    try:
        git = Git.from_dict(doc["git"]) if doc.get("git") else None
        ci = Ci.from_dict(doc["ci"]) if doc.get("ci") else None
    except (KeyError, TypeError) as exc:
        raise ReportError(f"{path}: 'git' or 'ci' is malformed ({exc!r})") from None
    return Report(
        path,
        int(version),
        str(doc.get("generated_at", "")),
        tuple(records),
        Provenance(git, ci),
        str(doc.get("backend_note", "")),
        status if isinstance(status := doc.get("exit_status"), int) else None,
    )
