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


class _Watch:
    """One sleeping daemon thread for every phase of the process: a ``threading.Timer`` per
    phase cost ~190 µs to start and cancel, six times per measurement."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        # Armed phases: token -> (deadline, writer, line); a token is removed once said.
        self._armed: dict[int, tuple[float, Writer, str]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def arm(self, after_s: float, write: Writer, line: str) -> int:
        with self._cond:
            self._next += 1
            self._armed[self._next] = (time.monotonic() + after_s, write, line)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="neuronperf-progress")
                self._thread.daemon = True
                self._thread.start()
            self._cond.notify()
            return self._next

    def disarm(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [t for t, (at, _, _) in self._armed.items() if at <= now]
                jobs = [self._armed.pop(t) for t in due]
                if not jobs:
                    wait = min((at for at, _, _ in self._armed.values()), default=now + 3600)
                    self._cond.wait(wait - now)
                    continue
            # Outside the lock: the writer may take pytest's capture lock.
            for _, write, line in jobs:
                write(line)


_WATCH = _Watch()


@contextmanager
def phase(write: Writer | None, what: str, after_s: float = 2.0) -> Iterator[None]:
    if write is None:
        yield
        return
    # The line comes from the watch thread while the main thread is inside the user's code,
    # which is the point: it is shown before the slow phase ends.
    t0 = time.monotonic()
    token = _WATCH.arm(after_s, write, f"neuronperf: {what}: still running...")
    try:
        yield
    finally:
        _WATCH.disarm(token)
        elapsed = time.monotonic() - t0
        if elapsed >= after_s:
            write(f"neuronperf: {what}: took {elapsed:.1f} s")
