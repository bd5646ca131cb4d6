"""Files read and written by a path a user or a repository gives: a reader takes a regular
file only, up to a stated size (gzip included, counted as it expands); a writer replaces
only a regular file or a missing path, and writes through anything else (a device, a FIFO,
a symbolic link such as ``/dev/stdout``), so no system file becomes a regular file."""

from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import sys
import tempfile
from pathlib import Path

from .errors import NeuronPerfError

MAX_READ_ENV = "NEURONPERF_MAX_READ_MB"
# A large chrome trace is a few hundred MB; past this a reader refuses instead of filling
# the memory (a link to /dev/zero, a gzip bomb).
DEFAULT_MAX_READ_MB = 2048
_MIB = 1 << 20


class Refused(NeuronPerfError, OSError, ValueError):
    """A path a reader will not read: its message says why and what to do. An OSError, so
    that a reader's handler of unreadable files takes it; a ValueError, as bad input."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EINVAL, reason)

    def __str__(self) -> str:
        return str(self.strerror)


def max_read_bytes() -> int:
    """The cap on what one file may hold (or expand to), from NEURONPERF_MAX_READ_MB."""
    raw = os.environ.get(MAX_READ_ENV, "")
    try:
        mb = float(raw) if raw else DEFAULT_MAX_READ_MB
    except ValueError:
        mb = DEFAULT_MAX_READ_MB
    return int(mb * _MIB) if 0 < mb < 1 << 40 else DEFAULT_MAX_READ_MB * _MIB


def _limit(cap: int) -> str:
    return f"the {cap / _MIB:g} MiB limit on what neuronperf reads (raise it with {MAX_READ_ENV})"


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file at ``path``; Refused for anything else (a FIFO, a
    device, a socket) or one past the cap, IsADirectoryError for a directory, and the
    system's OSError when it cannot be opened."""
    # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer that never comes.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        if not stat.S_ISREG(mode):
            raise Refused("is not a regular file (a device, FIFO or socket): not read")
        cap = max_read_bytes()
        data = f.read(cap + 1)
    if len(data) > cap:
        raise Refused(f"is larger than {_limit(cap)}")
    return data


def gunzip(data: bytes) -> bytes:
    """``data`` decompressed, stopping at the cap: a small file that expands without end
    costs no more memory than the cap. EOFError when truncated, OSError or zlib.error when
    corrupt, Refused past the cap."""
    cap = max_read_bytes()
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
        out = f.read(cap + 1)
    if len(out) > cap:
        raise Refused(f"expands past {_limit(cap)}")
    return out


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path``: a regular file or a missing path is replaced in one step
    (a temporary file in the same directory, then a rename, so a reader never sees half);
    anything else that exists (``/dev/stdout``, a FIFO, a device, a symbolic link) is
    written through, as a shell's ``>`` would, and stays what it was."""
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        sys.stdout.flush()  # /dev/stdout: what was printed before comes first
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file private (0600); a report is for sharing, as open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
