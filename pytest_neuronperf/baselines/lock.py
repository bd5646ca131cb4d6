"""An exclusive lock on a directory, held across processes, with a deadline.

``flock`` on the directory itself: it adds no file to a directory that is committed, and
the system releases it when its holder exits, however it exits, so a lock is never left
stale. Where a directory cannot be locked (Windows; NFS, which emulates flock with locks
that need a file open for writing) a lock file named after the user and the directory's
path stands in, in the user's runtime directory or else the temporary one: it excludes the
runs of one user on one machine."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
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
    """The lock file used where the directory itself cannot be locked: in the user's own
    runtime directory where there is one, and named after the user, so that no other user
    can create it first (and hold it, or plant a link there)."""
    digest = hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:16]
    uid = os.getuid() if hasattr(os, "getuid") else 0
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    home = Path(runtime) if runtime and _owned_dir(Path(runtime)) else Path(tempfile.gettempdir())
    return home / f"pytest-neuronperf-{uid}-{digest}.lock"


def _owned_dir(path: Path) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return path.is_dir() and (not hasattr(os, "getuid") or st.st_uid == os.getuid())


def open_stand_in(directory: Path) -> int:
    """The stand-in lock file, opened without following a link and refused unless it is a
    regular file of this user."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    path = stand_in(directory)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise OSError(
            exc.errno, f"{path} is not a lock file of this user ({exc.strerror})"
        ) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        os.close(fd)
        raise OSError(errno.EPERM, f"{path} is not a lock file of this user; remove it")
    return fd


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
    return open_stand_in(directory)


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
