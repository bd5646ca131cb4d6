"""The Neuron Runtime's execution trace -> device executions -> per-round figures. Pure but
for reading Parquet (pyarrow, imported lazily: the ``neuron`` extra).

What this stands on (docs/neuron.md; no such file has been seen from hardware):

- ``neuron-explorer view --ingest-only`` writes the system profile as the
  ``SystemProfileEvents`` table (``profile-schema-reference.rst``): ``name``, ``start_ts`` /
  ``end_ts`` (ns, host wall clock), ``flow_id`` (list of strings), ``process_id``,
  ``nc_idx`` (logical core), ``pcore_idx`` (physical core), ``extra_attributes_json``.
  Large tables may be split into numbered files (``SystemProfileEvents_0.parquet`` ...).
- Each NEFF execution on a NeuronCore is an ``nc_exec_running`` event; ``model_id`` sits
  in ``extra_attributes_json`` (older Perfetto exports showed ``model_name`` there too).
- With logical cores (LNC=2, Trn2's default) an execution appears once per physical core:
  rows sharing a flow id are one execution spanning [min start, max end]. A third-party
  harness verified this on trn2 with neuron-explorer 2.32.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import NeuronPerfError

EXEC_EVENT = "nc_exec_running"
SYSTEM_TABLE = "SystemProfileEvents"
REQUIRED = ("name", "start_ts", "end_ts")
OPTIONAL = ("flow_id", "process_id", "nc_idx", "pcore_idx", "extra_attributes_json")
INSTALL_EXTRA = "pip install 'pytest-neuronperf[neuron]'"


class RuntimeTraceError(NeuronPerfError, ValueError):
    """A runtime trace that cannot be read or does not fit the rounds; one line, naming
    the file or the round and what is wrong."""


@dataclass(frozen=True)
class Execution:
    """One NEFF execution on one logical NeuronCore."""

    model: str
    start_ns: int
    end_ns: int
    rows: int  # trace rows merged into it (one per physical core under LNC=2)
    nc: int | None

    @property
    def dur_us(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3


def model_name(extra: Any) -> str:
    """The execution's model, from ``extra_attributes_json``: its ``model_name`` (the NEFF)
    where given, else ``model <model_id>``."""
    attrs: Any = None
    if isinstance(extra, str) and extra.strip():
        try:
            attrs = json.loads(extra)
        except json.JSONDecodeError:
            attrs = None
    elif isinstance(extra, Mapping):
        attrs = extra
    if not isinstance(attrs, Mapping):
        return "unknown model"
    if attrs.get("model_name"):
        return str(attrs["model_name"])
    if attrs.get("model_id") not in (None, ""):
        return f"model {attrs['model_id']}"
    return "unknown model"


def _flows(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value if v is not None and str(v) != "")


def _ns(row: Mapping[str, Any], key: str, at: int) -> int:
    value = row.get(key)
    if value is None or isinstance(value, bool):
        raise RuntimeTraceError(f"{EXEC_EVENT} row {at}: no {key}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RuntimeTraceError(f"{EXEC_EVENT} row {at}: {key}={value!r} is no integer") from None


@dataclass
class _Group:
    start: int
    end: int
    rows: int
    model: str
    nc: int | None


def executions(rows: Iterable[Mapping[str, Any]], pid: int | None = None) -> list[Execution]:
    """``nc_exec_running`` rows -> executions, sorted by start.

    Rows sharing any flow id are one execution (LNC=2 writes one per physical core), over
    [min start, max end]. Rows without a flow id merge when they are on the same logical
    core, run the same model and overlap in time: a core runs one NEFF at a time, so only
    the physical halves of one execution overlap there. With ``pid``, other processes'
    rows are dropped (a row without ``process_id`` is kept)."""
    parent: dict[int, int] = {}
    groups: dict[int, _Group] = {}
    by_flow: dict[str, int] = {}
    loose: list[_Group] = []

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for at, row in enumerate(rows):
        if row.get("name", EXEC_EVENT) != EXEC_EVENT:
            continue
        if pid is not None and row.get("process_id") not in (None, pid):
            continue
        start, end = _ns(row, "start_ts", at), _ns(row, "end_ts", at)
        if end < start:
            raise RuntimeTraceError(f"{EXEC_EVENT} row {at}: end_ts {end} before start_ts {start}")
        nc = row.get("nc_idx")
        group = _Group(start, end, 1, model_name(row.get("extra_attributes_json")), nc)
        flows = _flows(row.get("flow_id"))
        if not flows:
            loose.append(group)
            continue
        me = len(parent)
        parent[me] = me
        groups[me] = group
        for flow in flows:
            other = by_flow.setdefault(flow, me)
            a, b = find(other), find(me)
            if a != b:
                parent[b] = a
                ga, gb = groups.pop(a), groups.pop(b)
                groups[a] = _Group(
                    min(ga.start, gb.start), max(ga.end, gb.end), ga.rows + gb.rows, ga.model, ga.nc
                )
    merged = list(groups.values()) + _merge_overlapping(loose)
    out = [Execution(g.model, g.start, g.end, g.rows, g.nc) for g in merged]
    out.sort(key=lambda e: (e.start_ns, e.end_ns, e.model))
    return out


def _merge_overlapping(rows: list[_Group]) -> list[_Group]:
    out: list[_Group] = []
    rows = sorted(rows, key=lambda g: (str(g.nc), g.model, g.start))
    for g in rows:
        last = out[-1] if out else None
        if last is not None and (last.nc, last.model) == (g.nc, g.model) and g.start < last.end:
            last.end = max(last.end, g.end)
            last.rows += g.rows
        else:
            out.append(_Group(g.start, g.end, g.rows, g.model, g.nc))
    return out


@dataclass(frozen=True)
class RoundExecutions:
    """The executions inside one round's host window."""

    executions: tuple[Execution, ...]

    @property
    def device_us(self) -> float:
        return sum(e.dur_us for e in self.executions)

    @property
    def models(self) -> Counter[str]:
        return Counter(e.model for e in self.executions)


def per_window(
    execs: Sequence[Execution], windows: Sequence[tuple[int, int]], labels: Sequence[str]
) -> list[RoundExecutions]:
    """Executions inside each window (``time.time_ns()`` at the round's start and after its
    synchronize). One that overlaps a window without lying inside it straddles the edge:
    the round's figure would be wrong either way, so it is an error."""
    out = []
    for (lo, hi), label in zip(windows, labels, strict=True):
        inside = []
        for e in execs:
            if e.end_ns <= lo or e.start_ns >= hi:
                continue
            if e.start_ns < lo or e.end_ns > hi:
                raise RuntimeTraceError(
                    f"{label}: an execution of {e.model} ({e.start_ns}..{e.end_ns} ns) "
                    f"straddles the round's host window ({lo}..{hi} ns): the round did not "
                    "synchronize before its end, or host and trace clocks disagree"
                )
            inside.append(e)
        out.append(RoundExecutions(tuple(inside)))
    return out


def models_differ(rounds: Sequence[RoundExecutions], labels: Sequence[str]) -> str | None:
    """A sentence naming the rounds that ran other models than the first round, or None."""
    first = set(rounds[0].models) if rounds else set()
    odd = [
        f"{label} ran {_models_text(r)}"
        for r, label in zip(rounds, labels, strict=True)
        if set(r.models) != first
    ]
    if not odd:
        return None
    return (
        f"rounds differ in which models ran on the device: {labels[0]} ran "
        f"{_models_text(rounds[0])}; " + "; ".join(odd)
    )


def _models_text(r: RoundExecutions) -> str:
    if not r.executions:
        return "no execution"
    return ", ".join(f"{m} ×{n}" for m, n in sorted(r.models.items()))


def system_event_files(profile_dir: Path) -> list[Path]:
    """The ``SystemProfileEvents`` Parquet file(s) of one ingested profile directory."""
    return sorted(profile_dir.glob(f"{SYSTEM_TABLE}*.parquet"))


def read_exec_rows(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The ``nc_exec_running`` rows of ``SystemProfileEvents`` Parquet files, with the
    columns this module reads (those present)."""
    try:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeTraceError(
            f"reading Neuron's runtime trace needs pyarrow: {INSTALL_EXTRA}"
        ) from None
    rows: list[dict[str, Any]] = []
    for path in paths:
        try:
            names = set(pq.read_schema(path).names)
            missing = [c for c in REQUIRED if c not in names]
            if missing:
                raise RuntimeTraceError(
                    f"{path}: not a {SYSTEM_TABLE} table (no column {', '.join(missing)})"
                )
            columns = [c for c in REQUIRED + OPTIONAL if c in names]
            table = pq.read_table(path, columns=columns)
            table = table.filter(pc.equal(table["name"], EXEC_EVENT))
        except RuntimeTraceError:
            raise
        except OSError as exc:
            raise RuntimeTraceError(f"{path}: cannot read: {exc}") from None
        except Exception as exc:  # pyarrow's own errors (ArrowInvalid & co) on a bad file
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RuntimeTraceError(f"{path}: not a readable Parquet file: {text}") from None
        rows.extend(table.to_pylist())
    return rows
