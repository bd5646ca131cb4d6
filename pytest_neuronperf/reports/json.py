"""The machine-readable report: every measurement, its verdicts, the environment and where
it came from (git, CI), as one JSON document with a versioned schema
(``schemas/report-2.schema.json``); and reading such documents back, version 1 or 2, for
``neuronperf compare`` and ``history``."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import NeuronPerfError
from ..files import Refused, read_bytes, write_text
from ..model import Record
from .provenance import Ci, Git, Provenance
from .status import outcome

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
    # Not the package's __init__: that would pull in the fixture and every backend.
    from importlib.metadata import version

    __version__ = version("pytest-neuronperf")

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
        # "outcome": the one word the other reports show (status.outcome); read back, ignored.
        "measurements": [{**_clean(r.to_dict()), "outcome": outcome(r)} for r in records],
    }


def offline_document(
    records: Sequence[Record], source: dict[str, Any], extras: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """``neuronperf report --json``: a saved trace's regions in the run report's layout,
    so that ``compare`` and ``history`` read it; ``source`` says what was read, and each
    record's ``extras`` (fields only that reader has, optional in the schema) join its
    measurement."""
    doc = document(records)
    doc["source"] = _clean(source)
    for item, more in zip(doc["measurements"], extras, strict=True):
        item["measurement"].update(_clean(more))
    return doc


def dumps(doc: dict[str, Any]) -> str:
    # allow_nan=False: NaN is not JSON, and a reader would choke on it far from here.
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Replace a regular file in one step, so a reader never sees half; write through
    anything else at ``path`` (files.write_text)."""
    write_text(path, text)


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


# The types the schema gives the fields read besides the measurements (None: null).
_FIELDS: dict[str, tuple[type | None, ...]] = {
    "generated_at": (str,),
    "backend_note": (str,),
    "git": (dict, None),
    "ci": (dict, None),
}
_GIT: dict[str, tuple[type | None, ...]] = {
    "commit": (str,),
    "branch": (str, None),
    "dirty": (bool,),
    "commit_time": (str,),
}
_CI: dict[str, tuple[type | None, ...]] = {"provider": (str,), "run_id": (str,), "url": (str,)}


def _check_fields(doc: dict[str, Any], path: Path) -> None:
    """ReportError naming the first field whose type the schema does not allow."""
    checks = [(doc, _FIELDS, "")]
    for key, inner in (("git", _GIT), ("ci", _CI)):
        if isinstance(doc.get(key), dict):
            checks.append((doc[key], inner, f"{key}."))
    for obj, fields, prefix in checks:
        for key, types in fields.items():
            value = obj.get(key)
            if key not in obj or (value is None and None in types):
                continue
            if not isinstance(value, tuple(t for t in types if t is not None)):
                raise ReportError(
                    f"{path}: '{prefix}{key}' is {type(value).__name__}, not what the report "
                    "schema allows; the file was not written by pytest-neuronperf as it is"
                )


# What to do about a path that holds no report.
_WRITE_ONE = "write one with --neuron-profile-json=PATH"


def load(path: Path) -> Report:
    """Reads a report of schema version 1 or 2. Raises ReportError, one line naming the
    file and what to do, for a file that is missing, not JSON or not such a report."""
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file; {_WRITE_ONE}") from None
    except IsADirectoryError:
        raise ReportError(f"{path}: is a directory; give a report file ({_WRITE_ONE})") from None
    except Refused as exc:
        # In a directory of reports, a FIFO or a device is no report: skipped, not read.
        raise ReportError(f"{path}: {exc}", not_a_report=not path.is_file()) from None
    except OSError as exc:
        raise ReportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: cannot be read ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno})", not_a_report=True
        ) from None
    except (ValueError, RecursionError) as exc:  # a 4,300-digit integer, deep nesting
        raise ReportError(f"{path}: not JSON a report can hold ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_ID:
        raise ReportError(
            f'{path}: not a pytest-neuronperf report (no "schema": "{SCHEMA_ID}"); {_WRITE_ONE}',
            not_a_report=True,
        )
    version = doc.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
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
    _check_fields(doc, path)
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
