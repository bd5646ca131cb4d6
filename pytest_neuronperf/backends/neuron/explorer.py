"""Where Neuron's profiler writes, and ``neuron-explorer`` turning a session into Parquet.

Documented layout (``how-to-profile-workload.rst``, 2.32/2.33): under ``profile_output_dir``
one ``<instance-id>_pid_<pid>/`` per process, one ``<timestamp>/`` session below it holding
``ntrace.pb`` and ``trace_info.pb`` (RUNTIME mode), ``.neff`` / ``.ntff`` (DEVICE mode) and
``trace.json`` (the framework trace ``NeuronProfiler.export_trace`` places there). A profile
ingested with ``--data-path`` lands in ``<data-path>/profiles/global/<display-name>@latest/``
(``how-to-analyze-profile-output.rst``). The ``--ignore-*-trace`` flags skip the device
tables the system-profile figures do not need (the third-party harness's command).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from .runtime import RuntimeTraceError, system_event_files

SESSION_FILES = ("ntrace.pb", "trace_info.pb")
INGEST_TIMEOUT_S = 900


def session_dirs(root: Path, pid: int | None = None) -> list[Path]:
    """Directories under ``root`` (itself included, three levels down) holding a runtime
    trace; with ``pid``, those under the process's own ``*_pid_<pid>`` directory when there
    is one."""
    found: set[Path] = set()
    for depth in ("", "*/", "*/*/", "*/*/*/"):
        for name in SESSION_FILES:
            found.update(p.parent for p in root.glob(f"{depth}{name}"))
    dirs = sorted(found)
    if pid is not None:
        mine = [d for d in dirs if any(part.endswith(f"_pid_{pid}") for part in d.parts)]
        if mine:
            return mine
    return dirs


def ingested_dir(data_path: Path, name: str) -> Path:
    return data_path / "profiles" / "global" / f"{name}@latest"


def ingest_command(explorer: str, session: Path, data_path: Path, name: str) -> list[str]:
    return [
        explorer,
        "view",
        "-d",
        str(session),
        "--ingest-only",
        "--data-path",
        str(data_path),
        "--display-name",
        name,
        "--ignore-instruction-trace",
        "--ignore-dma-trace",
        "--ignore-event-trace",
    ]


def ingest(
    explorer: str,
    session: Path,
    data_path: Path,
    name: str,
    timeout_s: float = INGEST_TIMEOUT_S,
) -> list[Path]:
    """Run the ingest and return the ``SystemProfileEvents`` Parquet files it wrote."""
    command = ingest_command(explorer, session, data_path, name)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeTraceError(f"{' '.join(command[:2])} -d {session}: {exc}") from None
    if done.returncode != 0:
        raise RuntimeTraceError(
            f"{' '.join(command[:2])} -d {session} --ingest-only exited {done.returncode}: "
            f"{_last_line(done.stderr or done.stdout)}"
        )
    files = system_event_files(ingested_dir(data_path, name))
    if not files:
        raise RuntimeTraceError(
            f"{' '.join(command[:2])} -d {session} --ingest-only wrote no "
            f"SystemProfileEvents Parquet under {ingested_dir(data_path, name)}"
        )
    return files


def ingest_all(explorer: str, sessions: Sequence[Path], data_path: Path, prefix: str) -> list[Path]:
    files: list[Path] = []
    for i, session in enumerate(sessions):
        files.extend(ingest(explorer, session, data_path, f"{prefix}-{i}"))
    return files


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
