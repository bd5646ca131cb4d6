"""The baseline store: one JSON file per device kind, loaded, validated, merged and
written atomically. No pytest here; the plugin decides when to read and when to write.

File layout (``<dir>/<device kind>.json``, e.g. ``.neuronperf/cpu_x86_64.json``)::

    {"device_kind": "cpu:x86_64", "schema_version": 1,
     "entries": {"<test id>": {"<region>": {<Entry>}}}}

Keys are sorted and lists of numbers stay on one line, so refreshing one test's entry is a
diff of a few lines in code review.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from ..errors import NeuronPerfError
from ..files import Refused, read_bytes
from ..names import safe_filename
from .conflict import sides
from .entry import Entry
from .lock import LockTimeout, exclusive

SCHEMA_VERSION = 1
DEFAULT_DIR = ".neuronperf"

Key = tuple[str, str]  # (test id, region)


class BaselineError(NeuronPerfError, ValueError):
    """A baseline file that cannot be used; the message names the file and what to do."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NewerSchemaError(BaselineError):
    """Written by a newer pytest-neuronperf: never read, never overwritten."""


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

    def scoped(self, prefix: str) -> Baselines:
        """The entries whose test id starts with ``prefix``, without it: what one rootdir of
        a store shared by several sees (session/baselines.py, docs/baseline-store.md)."""
        if not prefix:
            return self
        n = len(prefix)
        entries = {t[n:]: r for t, r in self.entries.items() if t.startswith(prefix)}
        return Baselines(self.path, self.device_kind, entries, self.damaged)

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
    return safe_filename(device_kind) + ".json"


def load(directory: Path, device_kind: str, *, allow_damaged: bool = False) -> Baselines:
    """The baselines of ``device_kind`` under ``directory``; empty when there is no file.

    A file that is not UTF-8 JSON, not our layout or for another device kind raises
    BaselineError, or with ``allow_damaged`` (an update that will rewrite it) comes back
    empty with ``damaged`` saying why. A newer schema always raises NewerSchemaError:
    rewriting it would throw away what the newer version recorded."""
    path = directory / file_name(device_kind)
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return Baselines(path, device_kind)
    except OSError as exc:
        raise BaselineError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        return parse(_text(data, path), path, device_kind)
    except NewerSchemaError:
        raise
    except BaselineError as exc:
        both = _both_sides(data, path, device_kind)
        if both is not None and allow_damaged:
            return both
        if both is not None:
            raise BaselineError(
                path,
                f"has git conflict markers ({both.damaged}); run 'neuronperf merge-baseline "
                f"{path}' to keep both sides' entries, or rerun with --neuron-profile-update",
            ) from None
        if allow_damaged:
            return Baselines(path, device_kind, damaged=exc.reason.removesuffix(f"; {_FIX}"))
        raise


def _both_sides(data: bytes, path: Path, device_kind: str) -> Baselines | None:
    """A file with git conflict markers whose two sides each read: their entries together,
    HEAD's (ours) where both hold one; ``damaged`` says so. None for any other file."""
    try:
        split = sides(data.decode("utf-8"))
        if split is None:
            return None
        ours, theirs = (parse(text, path, device_kind) for text in split)
    except (UnicodeDecodeError, BaselineError):
        return None
    entries = {t: dict(regions) for t, regions in theirs.entries.items()}
    differ = 0
    for test_id, regions in ours.entries.items():
        for region, entry in regions.items():
            other = entries.setdefault(test_id, {}).get(region)
            differ += other is not None and other != entry
            entries[test_id][region] = entry
    merged = Baselines(path, device_kind, entries)
    why = (
        f"git conflict markers: both sides read, {len(merged.keys())} entries kept, "
        f"{differ} that differ taken from HEAD's side"
    )
    return Baselines(path, device_kind, merged.entries, damaged=why)


def merge_conflict(path: Path, *, timeout: float = 60.0) -> Baselines:
    """Resolve the git conflict in the baseline file at ``path`` in place, under its
    directory's lock: both sides' entries, HEAD's where both hold one (``damaged`` of the
    result says how many). BaselineError when it has no conflict whose sides both read."""
    try:
        with exclusive(path.parent, timeout):
            data = path.read_bytes()
            both = _both_sides(data, path, _kind_of_ours(data))
            if both is None:
                raise BaselineError(
                    path,
                    "has no git conflict whose two sides both read as baselines; fix it by "
                    "hand, or delete it and rerun with --neuron-profile-update",
                )
            write(Baselines(path, both.device_kind, both.entries))
            return both
    except LockTimeout:
        raise BaselineError(path, "is being updated by another run; try again") from None
    except OSError as exc:
        raise BaselineError(path, f"cannot be merged ({exc.strerror or exc})") from None


def _kind_of_ours(data: bytes) -> str:
    """The device kind HEAD's side of a conflicted file names ("" when it names none)."""
    try:
        split = sides(data.decode("utf-8"))
        doc = json.loads(split[0]) if split is not None else None
    except (ValueError, RecursionError):
        return ""
    kind = doc.get("device_kind") if isinstance(doc, dict) else None
    return kind if isinstance(kind, str) else ""


def keep_damaged(path: Path) -> Path:
    """Copy a damaged file to ``<name>.damaged`` (``.damaged.1``, … when taken) before it
    is replaced: a damaged file is never lost to an update that ran part of the suite."""
    data = path.read_bytes()
    for n in range(1000):
        kept = path.with_name(f"{path.name}.damaged{'' if n == 0 else f'.{n}'}")
        try:
            fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return kept
    raise OSError(f"no free name for a copy of {path.name}")


_FIX = (
    "fix or delete it, or rerun with --neuron-profile-update to replace it with this "
    "run's measurements"
)


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(
            path, f"is not UTF-8 text (byte {exc.start}: {exc.reason}); {_FIX}"
        ) from None


def parse(text: str, path: Path, device_kind: str) -> Baselines:
    fix = _FIX
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        # ValueError besides JSONDecodeError: an integer past Python's 4300-digit limit.
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
    a copy, which is not atomic. The file keeps its mode (and, where allowed, its owner);
    a new one gets the umask's mode, as a file created in place would."""
    path = baselines.path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        before: os.stat_result | None = path.lstat()
    except FileNotFoundError:
        before = None
    if before is not None and not stat.S_ISREG(before.st_mode):
        # A link, a device or a FIFO is not replaced by a regular file behind one's back.
        raise Refused("is not a regular file (a link, device or FIFO): not replaced")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open applies the umask to 0o666; mkstemp would make it 0600 whatever the umask,
    # which breaks a baseline shared between users (CI writing as root in a container).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(dumps(baselines))
            f.flush()
            os.fsync(f.fileno())
        if before is not None:
            _keep_owner_and_mode(tmp, before)
        os.replace(tmp, path)
    except BaseException:
        # Includes KeyboardInterrupt: the old file stays, the half-written one goes.
        tmp.unlink(missing_ok=True)
        raise


# Written once into a baseline directory that has no .gitignore: what a writer may leave.
GITIGNORE = """\
# pytest-neuronperf: temporary files of a writer that was killed, copies of damaged files.
.*.tmp
*.damaged
*.damaged.*
"""


def tidy(directory: Path, name: str) -> None:
    """Under the directory's lock: remove the temporary files of writers of ``name`` that
    died before their rename (a live writer holds the lock, so none is this machine's and
    alive), and add a .gitignore that keeps such files out of ``git add`` if there is none."""
    for tmp in directory.glob(f".{name}.*.tmp"):
        pid = tmp.name[len(name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                tmp.unlink()
    with contextlib.suppress(OSError):  # one there already, or a read-only directory
        fd = os.open(directory / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(GITIGNORE)


def _alive(pid: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - os.kill there terminates the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or no pid at all: leave it be
    return True


def _keep_owner_and_mode(tmp: Path, before: os.stat_result) -> None:
    if hasattr(os, "chown") and (before.st_uid, before.st_gid) != _owner(tmp):
        # Root (CI in a container) may give the file back to its owner; others cannot.
        with contextlib.suppress(OSError):
            os.chown(tmp, before.st_uid, before.st_gid)
    # After chown, which may clear the set-id bits.
    os.chmod(tmp, stat.S_IMODE(before.st_mode))


def _owner(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_uid, st.st_gid


# How long an update waits for another one writing the same file (a slow disk).
LOCK_TIMEOUT_S = 60.0


def update_file(
    directory: Path,
    device_kind: str,
    merge: Callable[[Baselines], Baselines | None],
    *,
    timeout: float = LOCK_TIMEOUT_S,
) -> Baselines | None:
    """Read the stored file, ``merge`` it and replace it, under a lock: two runs updating
    one file at once each see the other's entries instead of losing them.

    ``merge`` gets the file as stored now (a damaged one reads as empty, ``damaged`` set)
    and returns the Baselines to write, or None to leave the file as it is. Returns what
    was written. Raises BaselineError when the file cannot be read (a newer schema,
    permissions), the lock is not had within ``timeout`` seconds, or writing fails (an
    OSError such as a read-only directory); the file is then as it was."""
    path = directory / file_name(device_kind)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # The directory is locked, not the file: the file is replaced, a new inode each time.
        with exclusive(directory, timeout):
            tidy(directory, path.name)
            current = load(directory, device_kind, allow_damaged=True)
            result = merge(current)
            if result is not None:
                write(result)
            return result
    except LockTimeout:
        raise BaselineError(
            path,
            f"is being updated by another run: its directory stayed locked for {timeout:g} s "
            "(a lock is released when the run holding it exits); try again",
        ) from None
    except OSError as exc:
        raise BaselineError(path, f"cannot be written ({exc.strerror or exc})") from None


def _dump(value: Any, level: int) -> str:
    pad = "  " * (level + 1)
    end = "  " * level
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{_string(str(k))}: {_dump(v, level + 1)}" for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            # Round samples on one line: a refreshed entry changes one line, not ten.
            return "[" + ", ".join(map(_scalar, value)) + "]"
        return "[\n" + ",\n".join(pad + _dump(v, level + 1) for v in value) + "\n" + end + "]"
    return _scalar(value)


# json.dumps of a str, without building an encoder per value (a 1,000-entry file holds
# 200,000 scalars: json.dumps each was most of the time a write took).
_string = encode_basestring_ascii


def _scalar(v: Any) -> str:
    """``json.dumps(v)``, with null for NaN and infinities (JSON has no NaN; a region
    without rounds has no median)."""
    kind = type(v)
    if kind is float:
        return float.__repr__(v) if math.isfinite(v) else "null"
    if kind is int:
        return int.__repr__(v)
    if kind is str:
        return _string(v)
    if v is None:
        return "null"
    if isinstance(v, float) and not math.isfinite(v):
        return "null"
    return json.dumps(v)
