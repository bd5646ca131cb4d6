"""How much memory reading a trace takes, and whether it fits here.

Measured (benchmarks/RESULTS.md, bench_big_trace.py): the offline report of a 1.1 GB trace
peaks at 2.7x-2.9x the file's size, while the input bytes and msgspec's typed records are
alive together inside the decode. ``MEMORY_FACTOR`` keeps a margin above that.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .events import TraceError

# Peak resident memory of reading one trace, as a multiple of its uncompressed size.
MEMORY_FACTOR = 3.5
# The share of the available memory the readers may take together.
MEMORY_SHARE = 0.8
_GZIP_MAGIC = b"\x1f\x8b"
_DEFLATE_MAX_RATIO = 1032


def needed_bytes(path: Path) -> int:
    """About what reading ``path`` takes at its peak: its uncompressed size times
    MEMORY_FACTOR. A gzip's trailer holds that size (modulo 4 GiB), believed up to
    deflate's largest ratio: a damaged or misnamed file's last bytes are no size."""
    size = path.stat().st_size
    if size >= 18:
        with path.open("rb") as f:
            magic = f.read(2)
            f.seek(-4, os.SEEK_END)
            trailer = int.from_bytes(f.read(4), "little")
        if magic == _GZIP_MAGIC:
            size = max(size, min(trailer, size * _DEFLATE_MAX_RATIO))
    return int(size * MEMORY_FACTOR)


def available_bytes() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def check_fits(path: Path) -> None:
    """TraceError when reading ``path`` would not fit in the memory available now."""
    workers_for([path], int(available_bytes() * MEMORY_SHARE), 1)


def workers_for(files: Sequence[Path], budget: int, cpus: int) -> int:
    """How many readers fit: never more than CPUs or files, at least one; TraceError when
    the largest file alone does not fit in ``budget``."""
    largest = max(files, key=needed_bytes)
    need = needed_bytes(largest)
    if need > budget:
        raise TraceError(
            f"{largest}: too large to read here (needs about {need / 2**30:.1f} GiB, "
            f"{budget / 2**30:.1f} GiB available); record fewer steps "
            "(torch.profiler.schedule(active=...)) or fewer threads of detail "
            "(record_shapes=False, with_stack=False)"
        )
    return max(1, min(cpus, len(files), budget // max(need, 1)))
