"""The machine-readable report: every measurement, its verdicts and the environment, as one
JSON document with a versioned schema (``schemas/report-1.schema.json``)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..model import Record

SCHEMA_ID = "pytest-neuronperf/report"
SCHEMA_VERSION = 1


def schema() -> dict[str, Any]:
    text = resources.files("pytest_neuronperf.reports").joinpath(
        f"schemas/report-{SCHEMA_VERSION}.schema.json"
    )
    loaded: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return loaded


def document(
    records: Sequence[Record],
    *,
    backend_note: str = "",
    exit_status: int | None = None,
    now: datetime | None = None,
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
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
