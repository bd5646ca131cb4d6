"""Say what a long measurement is doing, in pytest's own output.

A phase that runs past a threshold (a first call that compiles, many rounds) gets one line
while it runs and one when it ends; short phases print nothing, so ordinary runs look as
they always did and no second progress bar competes with pytest's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Writer = Callable[[str], None]


@contextmanager
def phase(write: Writer | None, what: str, after_s: float = 2.0) -> Iterator[None]:
    if write is None:
        yield
        return
    # The line comes from a timer thread while the main thread is inside the user's code,
    # which is the point: it is shown before the slow phase ends.
    timer = threading.Timer(after_s, write, args=(f"neuronperf: {what}: still running...",))
    timer.daemon = True
    t0 = time.monotonic()
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        elapsed = time.monotonic() - t0
        if elapsed >= after_s:
            write(f"neuronperf: {what}: took {elapsed:.1f} s")
