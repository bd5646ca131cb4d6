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


Clock = Callable[[], float]


class Watch:
    """One sleeping daemon thread for every phase of the process: a ``threading.Timer`` per
    phase cost ~190 µs to start and cancel, six times per measurement. ``clock`` and
    ``threaded=False`` (lines said only by fire_due()) let a test drive time itself."""

    def __init__(self, clock: Clock = time.monotonic, *, threaded: bool = True) -> None:
        self.clock = clock
        self._threaded = threaded
        self._cond = threading.Condition()
        # Armed phases: token -> (deadline, writer, line); a token is removed once said.
        self._armed: dict[int, tuple[float, Writer, str]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def arm(self, after_s: float, write: Writer, line: str) -> int:
        with self._cond:
            self._next += 1
            self._armed[self._next] = (self.clock() + after_s, write, line)
            if self._threaded and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="neuronperf-progress")
                self._thread.daemon = True
                self._thread.start()
            self._cond.notify()
            return self._next

    def disarm(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)

    def pending(self) -> int:
        """Phases armed and not yet said or ended."""
        with self._cond:
            return len(self._armed)

    def fire_due(self) -> None:
        """Say the line of every phase whose deadline has passed."""
        with self._cond:
            jobs = self._take_due()
        for _, write, line in jobs:
            write(line)

    def _take_due(self) -> list[tuple[float, Writer, str]]:
        now = self.clock()
        due = [t for t, (at, _, _) in self._armed.items() if at <= now]
        return [self._armed.pop(t) for t in due]

    def _run(self) -> None:
        while True:
            with self._cond:
                jobs = self._take_due()
                if not jobs:
                    now = self.clock()
                    wait = min((at for at, _, _ in self._armed.values()), default=now + 3600)
                    self._cond.wait(wait - now)
                    continue
            # Outside the lock: the writer may take pytest's capture lock.
            for _, write, line in jobs:
                write(line)


WATCH = Watch()


@contextmanager
def phase(
    write: Writer | None, what: str, after_s: float = 2.0, watch: Watch = WATCH
) -> Iterator[None]:
    if write is None:
        yield
        return
    # The line comes from the watch thread while the main thread is inside the user's code,
    # which is the point: it is shown before the slow phase ends.
    t0 = watch.clock()
    token = watch.arm(after_s, write, f"neuronperf: {what}: still running...")
    try:
        yield
    finally:
        watch.disarm(token)
        elapsed = watch.clock() - t0
        if elapsed >= after_s:
            write(f"neuronperf: {what}: took {elapsed:.1f} s")
