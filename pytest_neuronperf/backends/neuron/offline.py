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

from ...model import Measurement, Record, Status
from ...stats import Stats
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


# The offline report knows no more of the device than that it is a NeuronCore.
DEVICE_KIND = "neuron"


@dataclass(frozen=True)
class ModelRow:
    model: str
    executions: int
    device_us: float
    median_us: float


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

    def records(self) -> list[Record]:
        """Each model as a region of the run report's layout (reports/json.py): its
        executions are the region's kernels, their summed time its one device sample;
        ``test_id`` is the file's name, so that main's profile pairs with the pull
        request's in ``neuronperf compare``."""
        test_id = Path(self.source).name or Path(self.source).resolve().name  # '.'
        env = {"backend": "neuron-runtime-trace", "device_kind": DEVICE_KIND, "torch": "?"}
        return [
            Record(
                Measurement(
                    test_id=test_id,
                    region=m.model,
                    backend="neuron-runtime-trace",
                    device_kind=DEVICE_KIND,
                    ops=0,
                    kernels=m.executions,
                    kernel_counts={m.model: m.executions},
                    device_us=Stats.of([m.device_us]),
                    host_us=Stats.of([]),
                    rounds=1,
                    environment=env,
                ),
                status=Status.TRACE,
                gated="device_us",
            )
            for m in self.models
        ]

    def extras(self) -> list[dict[str, Any]]:
        """The Neuron fields the layout has no place for, per record (optional in the
        schema): executions and the median execution."""
        return [{"executions": m.executions, "median_us": m.median_us} for m in self.models]

    def source_dict(self) -> dict[str, Any]:
        return {
            "kind": "neuron-runtime-trace",
            "path": self.source,
            "files": list(self.files),
            "rows": self.rows,
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
