"""--neuron-profile-recheck: a test whose time moved past the tolerance is run again in
fresh pytest processes, which measure it under the session's settings and write nothing but
a JSON report each; their regions are pooled with this process's and judged again.

A process keeps a speed offset of its own (docs/gate-quality.md, "Rechecking in fresh
processes"): one process's change against the baseline carries it, and so does a second
look inside that process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..model import Measurement, Record
from ..settings import SPECS, Settings

# Settings a fresh process must share to measure what this one measured, each as text its
# parser reads back; they go as environment variables (the command line would beat the ini
# file, settings.py), named by their Spec.
_MEASURING: tuple[tuple[str, Callable[[Settings], str]], ...] = (
    ("backend", lambda s: s.backend),
    ("rounds", lambda s: str(s.rounds)),
    ("warmup", lambda s: str(s.warmup)),
    ("window", lambda s: repr(s.window)),
    ("threads", lambda s: str(s.threads)),
    ("heap", lambda s: s.heap),
    ("compare_host", lambda s: str(int(s.compare_host))),
    ("count_work", lambda s: str(int(s.count_work))),
    ("reference", lambda s: str(int(s.reference))),
    ("memory", lambda s: str(int(s.memory))),
    ("tolerance", lambda s: f"{s.tolerance * 100!r}%"),
    ("neuron_config", lambda s: "; ".join(f"{k}={v}" for k, v in s.neuron_config)),
    ("update", lambda _: "0"),
    ("pool", lambda _: "0"),
)
# Files a fresh process must not write: they are this session's to write at its end.
_OUTPUTS = ("trace_dir", "markdown_path", "html_path", "export")
_SPECS = {spec.field: spec for spec in SPECS}


@dataclass(frozen=True)
class Remeasured:
    """Each fresh process's measurements by region, in the order they ran; ``problem``
    says why fewer than asked came back."""

    processes: tuple[dict[str, Measurement], ...]
    problem: str = ""


def child_env(settings: Settings, base: Mapping[str, str], profile_dir: Path) -> dict[str, str]:
    env = dict(base)
    env.update((_SPECS[field].env, value(settings)) for field, value in _MEASURING)
    # The same baseline file: an entry holding memory turns memory profiling on (memory_for).
    env[_SPECS["profile_dir"].env] = str(profile_dir)
    return env


def child_argv(config: pytest.Config, nodeid: str, json_path: Path) -> list[str]:
    """pytest on one test id, from this session's rootdir and ini file; addopts left out,
    where a -n or --junitxml would start workers or write this session's files."""
    argv = [sys.executable, "-m", "pytest", nodeid, "-q", "-p", "no:cacheprovider"]
    argv += [f"--rootdir={config.rootpath}", "-o", "addopts="]
    if config.inipath is not None:
        argv += ["-c", str(config.inipath)]
    argv += ["--neuron-profile", f"--neuron-profile-json={json_path}"]
    # An empty value sets a path to none.
    return [*argv, "--neuron-profile-recheck=0", *(f"{_SPECS[f].cli}=" for f in _OUTPUTS)]


Run = Callable[[list[str], dict[str, str]], int]


def _run(argv: list[str], env: dict[str, str]) -> int:
    # The fresh process's output is not this test's: its verdict is what comes back.
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    return done.returncode


def remeasure(
    config: pytest.Config,
    settings: Settings,
    nodeid: str,
    profile_dir: Path,
    processes: int,
    run: Run = _run,
) -> Remeasured:
    """``nodeid`` measured in ``processes`` fresh processes, one after another; stops at
    the first that exits other than 0 or 1 (its tests passed, or failed on a verdict) or
    writes no report."""
    env = child_env(settings, os.environ, profile_dir)
    got: list[dict[str, Measurement]] = []
    with tempfile.TemporaryDirectory(prefix="neuronperf-recheck-") as tmp:
        for i in range(processes):
            path = Path(tmp) / f"{i}.json"
            status = run(child_argv(config, nodeid, path), env)
            if status not in (0, 1):
                return Remeasured(tuple(got), f"fresh process {i + 1} exited with status {status}")
            if not path.is_file():
                return Remeasured(tuple(got), f"fresh process {i + 1} wrote no report")
            got.append(_measurements(path))
    return Remeasured(tuple(got))


def _measurements(path: Path) -> dict[str, Measurement]:
    rows = json.loads(path.read_text(encoding="utf-8")).get("measurements", [])
    return {(m := Record.from_dict(row).measurement).region: m for row in rows}
