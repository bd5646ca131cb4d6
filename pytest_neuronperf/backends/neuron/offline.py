"""``neuronperf report`` for Neuron profiles: executions per model and device time.

Accepts a ``SystemProfileEvents*.parquet`` file, a directory holding such files (an
ingested ``<name>@latest/`` profile, or a ``--data-path`` with profiles below it), or a
Neuron profile output directory (``profile_output_dir`` with ``ntrace.pb`` sessions), which
``neuron-explorer`` ingests first. Bad input raises RuntimeTraceError (one line); the CLI
prints it (cli/report.py). Every process's executions count here: offline there is no "our"
process.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from .config import find_explorer
from .explorer import ingest_all, session_dirs
from .runtime import (
    SYSTEM_TABLE,
    Execution,
    RuntimeTraceError,
    executions,
    read_exec_rows,
)


def is_neuron_input(path: Path) -> bool:
    """Whether ``neuronperf report PATH`` means a Neuron profile (cheap: no pyarrow)."""
    if path.suffix == ".parquet":
        return True
    if not path.is_dir():
        return False
    return bool(_parquet_files(path) or session_dirs(path))


def _parquet_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for depth in ("", "*/", "*/*/", "*/*/*/"):
        found.extend(root.glob(f"{depth}{SYSTEM_TABLE}*.parquet"))
    return sorted(set(found))


@dataclass(frozen=True)
class ModelRow:
    model: str
    executions: int
    device_us: float
    median_us: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "executions": self.executions,
            "device_us": self.device_us,
            "median_us": self.median_us,
        }


@dataclass(frozen=True)
class NeuronReport:
    source: str
    files: tuple[str, ...]
    rows: int  # nc_exec_running rows read (before merging physical cores)
    models: tuple[ModelRow, ...]

    @property
    def executions(self) -> int:
        return sum(m.executions for m in self.models)

    @property
    def device_us(self) -> float:
        return sum(m.device_us for m in self.models)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": "neuron-runtime-trace",
            "files": list(self.files),
            "rows": self.rows,
            "executions": self.executions,
            "device_us": self.device_us,
            "models": [m.to_dict() for m in self.models],
        }


def model_rows(execs: list[Execution]) -> tuple[ModelRow, ...]:
    by_model: dict[str, list[float]] = defaultdict(list)
    for e in execs:
        by_model[e.model].append(e.dur_us)
    rows = [ModelRow(m, len(d), sum(d), median(d)) for m, d in by_model.items()]
    rows.sort(key=lambda r: (-r.device_us, r.model))
    return tuple(rows)


def neuron_report(path: Path, explorer: str | None = None) -> NeuronReport:
    """Raises RuntimeTraceError (one line) on bad input."""
    if not path.exists():
        raise RuntimeTraceError(f"{path}: no such file or directory")
    files = [path] if path.is_file() else _parquet_files(path)
    if not files:
        files = _ingest(path, explorer)
    rows = read_exec_rows(files)
    execs = executions(rows)
    if not execs:
        raise RuntimeTraceError(
            f"{path}: no nc_exec_running events (was the profile captured with "
            "ProfileMode.RUNTIME, and did the workload run on the device?)"
        )
    return NeuronReport(str(path), tuple(str(f) for f in files), len(rows), model_rows(execs))


def _ingest(path: Path, explorer: str | None) -> list[Path]:
    sessions = session_dirs(path)
    if not sessions:
        raise RuntimeTraceError(
            f"{path}: neither SystemProfileEvents Parquet nor a Neuron runtime trace "
            "(ntrace.pb / trace_info.pb) inside"
        )
    explorer = explorer or find_explorer()
    if explorer is None:
        raise RuntimeTraceError(
            f"{path}: a raw Neuron profile; reading it needs the neuron-explorer binary "
            "(aws-neuronx-tools; add /opt/aws/neuron/bin to PATH), or pass the "
            "SystemProfileEvents.parquet it wrote"
        )
    data_path = Path(tempfile.mkdtemp(prefix="neuronperf-explorer-"))
    return ingest_all(explorer, sessions, data_path, "neuronperf-report")
