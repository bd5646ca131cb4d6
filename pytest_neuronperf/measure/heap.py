"""glibc's malloc thresholds held fixed while host-timed code is measured (docs/heap.md).

glibc moves its mmap and trim thresholds up as the process frees large blocks, so whether a
region's megabyte-sized temporaries go back to the OS after every call (and fault in again
on the next) depends on what the process freed before: one unchanged region ran at one of
two speeds, chosen per process. Fixed thresholds keep them on the heap in every process.
"""

from __future__ import annotations

import ctypes
import functools
import os

# mallopt's parameter numbers (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# The largest mmap threshold every 64-bit glibc accepts: blocks below it come from the heap.
MMAP_THRESHOLD = 32 << 20
# Free memory the heap keeps before it gives any back: a few regions' worth of temporaries.
TRIM_THRESHOLD = 128 << 20


def glibc() -> bool:
    """Whether this process runs on glibc, the only allocator whose thresholds are fixed."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):  # no such name here: not glibc
        return False


@functools.cache
def fix_heap() -> bool:
    """Set both thresholds, once per process: glibc has no call that reads them back, so
    they stay for the rest of it. True when glibc took both."""
    if not glibc():
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    took_mmap: bool = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    took_trim: bool = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return took_mmap and took_trim
