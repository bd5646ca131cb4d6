"""The baseline store: one JSON file per device kind, loaded, validated, merged and
written atomically. No pytest here; the plugin decides when to read and when to write.

File layout (``<dir>/<device kind>.json``, e.g. ``.neuronperf/cpu_x86_64.json``)::

    {"device_kind": "cpu:x86_64", "schema_version": 1,
     "entries": {"<test id>": {"<region>": {<Entry>}}}}

Keys are sorted and lists of numbers stay on one line, so refreshing one test's entry is a
diff of a few lines in code review.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .model import Measurement, OpRow
from .stats import Stats

SCHEMA_VERSION = 1
DEFAULT_DIR = ".neuronperf"

Key = tuple[str, str]  # (test id, region)


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message names the file and what to do."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NewerSchemaError(BaselineError):
    """Written by a newer pytest-neuronperf: never read, never overwritten."""


@dataclass(frozen=True)
class Entry:
    """What a baseline keeps of one measurement."""

    ops: int
    kernels: int
    op_counts: dict[str, int]
    kernel_counts: dict[str, int]
    device_us: Stats
    host_us: Stats
    rounds: int
    environment: dict[str, str] = field(default_factory=dict)
    # Per-op device time, for the HTML report's current-beside-baseline chart. Never
    # compared: the op multiset and the region's samples are what the gate judges.
    per_op: tuple[OpRow, ...] = ()
    # FLOPs and bytes moved of one execution (roofline.py); None when not counted. Compared
    # exactly, like ops: they are deterministic, so any increase is real.
    flops: int | None = None
    bytes_moved: int | None = None
    # The reference workload timed beside each round (reference.py), paired with host_us
    # and device_us samples; None when not timed.
    reference_us: Stats | None = None
    device_reference_us: Stats | None = None
    # Per round, the low decile of the calls' times in reference units (window.py): what the
    # cpu gate judges. None for entries recorded before it existed or without a reference.
    host_relative: Stats | None = None
    # The same two against the dispatch-bound tick (reference.py).
    dispatch_reference_us: Stats | None = None
    host_relative_dispatch: Stats | None = None
    # Recording processes whose rounds the samples hold, oldest first, ``rounds`` each
    # (--neuron-profile-pool, see pooled_with).
    processes: int = 1

    @classmethod
    def of(cls, m: Measurement) -> Entry:
        return cls(
            ops=m.ops,
            kernels=m.kernels,
            op_counts=dict(m.op_counts),
            kernel_counts=dict(m.kernel_counts),
            device_us=m.device_us,
            host_us=m.host_us,
            rounds=m.rounds,
            environment=dict(m.environment),
            per_op=m.per_op,
            flops=m.work.flops if m.work is not None else None,
            bytes_moved=m.work.bytes_moved if m.work is not None else None,
            reference_us=m.reference_us,
            device_reference_us=m.device_reference_us,
            host_relative=m.host_relative,
            dispatch_reference_us=m.dispatch_reference_us,
            host_relative_dispatch=m.host_relative_dispatch,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ops": self.ops,
            "kernels": self.kernels,
            "op_counts": dict(sorted(self.op_counts.items())),
            "kernel_counts": dict(sorted(self.kernel_counts.items())),
            "device_us": self.device_us.to_dict(),
            "host_us": self.host_us.to_dict(),
            "rounds": self.rounds,
            "environment": dict(sorted(self.environment.items())),
            **({"flops": self.flops} if self.flops is not None else {}),
            **({"bytes_moved": self.bytes_moved} if self.bytes_moved is not None else {}),
            **_optional_stats("reference_us", self.reference_us),
            **_optional_stats("device_reference_us", self.device_reference_us),
            **_optional_stats("host_relative", self.host_relative),
            **_optional_stats("dispatch_reference_us", self.dispatch_reference_us),
            **_optional_stats("host_relative_dispatch", self.host_relative_dispatch),
            # Left out for one process, so that entries from before pooling keep their bytes.
            **({"processes": self.processes} if self.processes != 1 else {}),
            "per_op": {
                r.name: {"calls": r.calls, "device_us": round(r.device_us, 3)} for r in self.per_op
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Entry:
        if not isinstance(d, Mapping):
            raise ValueError("expected an object")
        return cls(
            ops=_count(d, "ops"),
            kernels=_count(d, "kernels"),
            op_counts=_counts(d, "op_counts"),
            kernel_counts=_counts(d, "kernel_counts"),
            device_us=_stats(d, "device_us"),
            host_us=_stats(d, "host_us"),
            rounds=_count(d, "rounds"),
            environment={str(k): str(v) for k, v in _mapping(d, "environment").items()},
            per_op=_per_op(d.get("per_op", {})),
            flops=_count(d, "flops") if "flops" in d else None,
            bytes_moved=_count(d, "bytes_moved") if "bytes_moved" in d else None,
            reference_us=_reference(d, "reference_us"),
            device_reference_us=_reference(d, "device_reference_us"),
            host_relative=_reference(d, "host_relative"),
            dispatch_reference_us=_reference(d, "dispatch_reference_us"),
            host_relative_dispatch=_reference(d, "host_relative_dispatch"),
            processes=_processes(d),
        )

    def pooled_with(self, new: Entry, cap: int) -> Entry | None:
        """This entry's rounds and ``new``'s as one baseline spanning their recording
        processes, keeping the newest ``cap`` processes; None when the two do not measure
        the same thing (counts, work, environment, rounds or the figures kept differ), so
        that ``new`` replaces this one instead.

        Why: a process keeps an offset of its own, measured here at up to ±10% for one
        region, so a baseline from one process is one draw of it, and every later verdict
        moves by as much. The rounds are concatenated, not averaged: the median then sits
        among the processes, and the bootstrap interval of the baseline widens by how far
        they disagree."""
        if (
            self.ops != new.ops
            or self.kernels != new.kernels
            or self.op_counts != new.op_counts
            or self.kernel_counts != new.kernel_counts
            or self.rounds != new.rounds
            or self.environment != new.environment
            or (self.flops, self.bytes_moved) != (new.flops, new.bytes_moved)
            or new.processes != 1
            or cap < 2
        ):
            return None
        keep = min(self.processes, cap - 1)
        merged: dict[str, Stats | None] = {}
        for name in SAMPLED:
            old, now = getattr(self, name), getattr(new, name)
            if (old is None) != (now is None):
                return None
            if old is None or now is None:
                merged[name] = None
                continue
            if old.n != self.processes * self.rounds or now.n != new.rounds:
                # Rounds that do not split into processes cannot be dropped oldest first.
                return None
            merged[name] = Stats(old.samples[(self.processes - keep) * self.rounds :] + now.samples)
        return replace(new, processes=keep + 1, **merged)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Baselines:
    """The entries of one file. ``path`` is where it was read from or will be written."""

    path: Path
    device_kind: str
    entries: dict[str, dict[str, Entry]] = field(default_factory=dict)
    # Set when the file on disk was unreadable and only --neuron-profile-update may
    # replace it; the entries are then empty.
    damaged: str = ""

    def get(self, test_id: str, region: str) -> Entry | None:
        return self.entries.get(test_id, {}).get(region)

    def keys(self) -> list[Key]:
        return sorted((t, r) for t, regions in self.entries.items() for r in regions)

    def merged(self, updates: Mapping[Key, Entry], removals: Iterable[Key] = ()) -> Baselines:
        entries = {t: dict(regions) for t, regions in self.entries.items()}
        for (test_id, region), entry in updates.items():
            entries.setdefault(test_id, {})[region] = entry
        for test_id, region in removals:
            entries.get(test_id, {}).pop(region, None)
            if not entries.get(test_id, True):
                del entries[test_id]
        return Baselines(self.path, self.device_kind, entries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "device_kind": self.device_kind,
            "entries": {
                t: {r: e.to_dict() for r, e in sorted(regions.items())}
                for t, regions in sorted(self.entries.items())
            },
        }


def file_name(device_kind: str) -> str:
    """``cpu:x86_64`` -> ``cpu_x86_64.json``: a name every file system and URL takes."""
    from .measure import safe_filename

    return safe_filename(device_kind) + ".json"


def load(directory: Path, device_kind: str, *, allow_damaged: bool = False) -> Baselines:
    """The baselines of ``device_kind`` under ``directory``; empty when there is no file.

    A file that is not valid JSON, not our layout or for another device kind raises
    BaselineError, or with ``allow_damaged`` (an update that will rewrite it) comes back
    empty with ``damaged`` saying why. A newer schema always raises NewerSchemaError:
    rewriting it would throw away what the newer version recorded."""
    path = directory / file_name(device_kind)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Baselines(path, device_kind)
    except OSError as exc:
        raise BaselineError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        return parse(text, path, device_kind)
    except NewerSchemaError:
        raise
    except BaselineError as exc:
        if allow_damaged:
            return Baselines(path, device_kind, damaged=exc.reason)
        raise


def parse(text: str, path: Path, device_kind: str) -> Baselines:
    fix = (
        "fix or delete it, or rerun with --neuron-profile-update to replace it with this "
        "run's measurements"
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(path, f"is not valid JSON ({exc}); {fix}") from None
    if not isinstance(data, dict):
        raise BaselineError(path, f"is not a pytest-neuronperf baseline file; {fix}")
    version = data.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise BaselineError(
            path, f"has no valid schema_version (got {version!r}): not a baseline file; {fix}"
        )
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            path,
            f"has schema_version {version}, newer than this pytest-neuronperf understands "
            f"(up to {SCHEMA_VERSION}); upgrade pytest-neuronperf to compare against it. "
            "It is left untouched, even by --neuron-profile-update",
        )
    kind = data.get("device_kind")
    if kind != device_kind:
        raise BaselineError(
            path,
            f"holds baselines for device kind {kind!r}, not {device_kind!r}; baselines are "
            f"never compared across device kinds. {fix}",
        )
    raw = data.get("entries")
    if not isinstance(raw, dict):
        raise BaselineError(path, f"has no 'entries' object; {fix}")
    entries: dict[str, dict[str, Entry]] = {}
    for test_id, regions in raw.items():
        if not isinstance(regions, dict):
            raise BaselineError(path, f"entry {test_id!r} is not an object of regions; {fix}")
        for region, d in regions.items():
            try:
                entries.setdefault(test_id, {})[region] = Entry.from_dict(d)
            except (KeyError, TypeError, ValueError) as exc:
                raise BaselineError(
                    path, f"entry {test_id!r} region {region!r} is malformed ({exc}); {fix}"
                ) from None
    return Baselines(path, device_kind, entries)


def dumps(baselines: Baselines) -> str:
    return _dump(baselines.to_dict(), 0) + "\n"


def write(baselines: Baselines) -> None:
    """Replace the file in one step: readers see the old content or the new, never half.
    The temporary file sits in the same directory because a rename across file systems is
    a copy, which is not atomic."""
    path = baselines.path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(dumps(baselines))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # Includes KeyboardInterrupt: the old file stays, the half-written one goes.
        Path(tmp).unlink(missing_ok=True)
        raise


def stale(
    baselines: Baselines,
    *,
    collected: set[str],
    complete_modules: set[str],
    file_exists: Callable[[str], bool],
    measured: Mapping[str, set[str]],
) -> list[Key]:
    """Entries known to be gone. Only what this run can know: a test whose module was
    collected in full (``-k`` and ``--deselect`` still count as full; ``file.py::test``
    does not) and no longer holds it, a test whose file is gone, and regions that a test
    which ran and passed (``measured``: test id -> regions) no longer measures."""
    out: list[Key] = []
    for test_id, regions in sorted(baselines.entries.items()):
        module = module_of(test_id)
        gone = (module in complete_modules and test_id not in collected) or not file_exists(module)
        for region in sorted(regions):
            if gone or (test_id in measured and region not in measured[test_id]):
                out.append((test_id, region))
    return out


# Recording processes a pooled entry keeps (--neuron-profile-pool): the newest this many.
POOL_CAP = 5


@dataclass(frozen=True)
class UpdatePlan:
    """What --neuron-profile-update does to one file."""

    result: Baselines
    added: tuple[Key, ...] = ()
    changed: tuple[Key, ...] = ()
    unchanged: tuple[Key, ...] = ()
    removed: tuple[Key, ...] = ()
    # Entries this run's rounds were added to (--neuron-profile-pool).
    pooled: tuple[Key, ...] = ()

    @property
    def touches_file(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.pooled)


def plan_update(
    current: Baselines,
    measured: Mapping[Key, tuple[Entry, bool]],
    stale_keys: Iterable[Key],
    *,
    pool: bool = False,
) -> UpdatePlan:
    """``measured`` maps each key that ran and passed to (entry, whether it must be
    rewritten); an entry that still holds is kept as stored, so its lines do not churn.
    With ``pool``, a stored entry that measures the same thing gains this run's rounds as
    one more recording process (Entry.pooled_with) whatever its times did."""
    added, changed, unchanged, pooled, updates = [], [], [], [], {}
    for key, (entry, rewrite) in sorted(measured.items()):
        stored = current.get(*key)
        merged = stored.pooled_with(entry, POOL_CAP) if pool and stored is not None else None
        if merged is not None:
            pooled.append(key)
            entry = merged
        elif stored is None:
            added.append(key)
        elif rewrite or pool:
            changed.append(key)
        else:
            unchanged.append(key)
            continue
        updates[key] = entry
    removed = sorted(k for k in set(stale_keys) if current.get(*k) is not None and k not in updates)
    return UpdatePlan(
        current.merged(updates, removed),
        tuple(added),
        tuple(changed),
        tuple(unchanged),
        tuple(removed),
        tuple(pooled),
    )


def partially_selected(args: Iterable[str], invocation_dir: Path, rootpath: Path) -> set[str]:
    """Modules (as node-id paths) that command-line arguments such as ``file.py::test``
    collect only in part: the tests of such a module that did not run may still exist."""
    out = set()
    for arg in args:
        if "::" not in arg:
            continue
        path = (invocation_dir / arg.split("::", 1)[0]).resolve()
        try:
            out.add(path.relative_to(rootpath.resolve()).as_posix())
        except ValueError:
            continue
    return out


def module_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def _dump(value: Any, level: int) -> str:
    pad = "  " * (level + 1)
    end = "  " * level
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{pad}{json.dumps(str(k))}: {_dump(v, level + 1)}" for k, v in sorted(value.items())
        ]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            # Round samples on one line: a refreshed entry changes one line, not ten.
            return "[" + ", ".join(_scalar(v) for v in value) + "]"
        return "[\n" + ",\n".join(pad + _dump(v, level + 1) for v in value) + "\n" + end + "]"
    return _scalar(value)


def _scalar(v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        # JSON has no NaN; a region without rounds has no median.
        return "null"
    return json.dumps(v)


def _mapping(d: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = d.get(key, {})
    if not isinstance(value, Mapping):
        raise ValueError(f"{key} must be an object")
    return value


def _count(d: Mapping[str, Any], key: str) -> int:
    return _whole(d[key], key)


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    return value


def _counts(d: Mapping[str, Any], key: str) -> dict[str, int]:
    return {str(k): _whole(v, f"{key}[{k!r}]") for k, v in _mapping(d, key).items()}


def _stats(d: Mapping[str, Any], key: str) -> Stats:
    value = _mapping(d, key)
    samples = value.get("samples")
    if not isinstance(samples, list) or not all(
        isinstance(s, int | float) and not isinstance(s, bool) for s in samples
    ):
        raise ValueError(f"{key}.samples must be a list of numbers")
    return Stats.of(samples)


def _per_op(d: Any) -> tuple[OpRow, ...]:
    if not isinstance(d, Mapping):
        raise ValueError("'per_op' must be an object of op name -> {calls, device_us}")
    rows = []
    for name, row in d.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"'per_op' entry {name!r} must be an object")
        rows.append(
            OpRow(str(name), float(row.get("calls", 0)), float(row.get("device_us", 0)), 0.0)
        )
    return tuple(rows)


# The Entry fields that hold one sample per round, pooled by Entry.pooled_with.
SAMPLED = (
    "device_us",
    "host_us",
    "reference_us",
    "device_reference_us",
    "host_relative",
    "dispatch_reference_us",
    "host_relative_dispatch",
)


def _processes(d: Mapping[str, Any]) -> int:
    value = d.get("processes", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"processes must be a whole number >= 1, got {value!r}")
    return value


def _optional_stats(key: str, stats: Stats | None) -> dict[str, Any]:
    return {key: stats.to_dict()} if stats is not None else {}


def _reference(d: Mapping[str, Any], key: str) -> Stats | None:
    if key not in d:
        return None
    stats = _stats(d, key)
    # Rounds are divided by these: a zero or negative one is a damaged file.
    if not stats.samples or any(not v > 0 for v in stats.samples):
        raise ValueError(f"{key} samples must all be > 0")
    return stats
