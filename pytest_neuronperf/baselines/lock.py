"""An exclusive lock on a directory, held across processes, with a deadline.

``flock`` on the directory itself: it adds no file to a directory that is committed, and
the system releases it when its holder exits, however it exits, so a lock is never left
stale. Where a directory cannot be locked (Windows; NFS, which emulates flock with locks
that need a file open for writing) a lock file in the temporary directory, named after
the directory's path, stands in: it excludes the runs of one machine."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import NeuronPerfError

# Between tries: an update holds the lock for milliseconds to seconds (a slow disk).
_POLL_S = 0.02


class LockTimeout(NeuronPerfError, TimeoutError):
    """The lock was held by another process for the whole deadline."""


@contextmanager
def exclusive(directory: Path, timeout: float) -> Iterator[None]:
    """Hold the lock of ``directory`` (which must exist) inside the block; LockTimeout
    after ``timeout`` seconds of waiting."""
    fd = _open_lockable(directory)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{directory} is locked by another process")
            time.sleep(_POLL_S)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def stand_in(directory: Path) -> Path:
    """The lock file used where the directory itself cannot be locked."""
    digest = hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"pytest-neuronperf-{digest}.lock"


def _open_lockable(directory: Path) -> int:
    if sys.platform != "win32":
        fd = os.open(directory, os.O_RDONLY)
        try:
            # A probe: taken and released at once when free, refused when not supported.
            if _try_lock(fd):
                _unlock(fd)
            return fd
        except OSError:
            os.close(fd)
    return os.open(stand_in(directory), os.O_RDWR | os.O_CREAT, 0o666)


if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
