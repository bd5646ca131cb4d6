"""How far a pooled baseline's recording processes disagreed, and the time changes that do
not get past it.

A fresh process keeps a speed offset of its own (docs/gate-quality.md, "Pooling over
recording processes"); one compare run is one process, so its change against the pool
carries that offset, and its bootstrap interval, drawn from its own rounds, does not show
it. A baseline pooled over several processes shows how far apart they ran: a change counts
only where it lies past the tolerance even for a process as far off as the farthest of
them, the slowest for a regression, the fastest for an improvement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..stats import TimeChange, median


@dataclass(frozen=True)
class Offsets:
    """The fastest and the slowest recording process's median over the pooled median."""

    fast: float = 1.0
    slow: float = 1.0

    def text(self) -> str:
        return f"{(self.fast - 1) * 100:+.0f}%..{(self.slow - 1) * 100:+.0f}%"

    def wider_than(self, tolerance: float) -> bool:
        """Whether a recording process ran past the tolerance from the pooled median: one
        of them would itself have been called changed."""
        return self.slow > 1 + tolerance or self.fast < 1 / (1 + tolerance)


def offsets(samples: Sequence[float], processes: int) -> Offsets:
    """The offsets of ``processes`` recording processes whose rounds ``samples`` holds, in
    turn, as many each; none for one process or rounds that do not split evenly."""
    if processes < 2 or not samples or len(samples) % processes:
        return Offsets()
    rounds = len(samples) // processes
    pooled = median(samples)
    if not pooled > 0:
        return Offsets()
    medians = [median(samples[i * rounds : (i + 1) * rounds]) for i in range(processes)]
    return Offsets(min(medians) / pooled, max(medians) / pooled)


def held_back(
    change: TimeChange, parts: Sequence[tuple[str, TimeChange, Offsets]]
) -> list[tuple[str, Offsets]]:
    """The parts a regressed or improved ``change`` rests on (each named, with its own
    change and its processes' offsets) whose change does not get past those offsets: the
    change counts only where there are none."""
    if change.verdict not in ("regressed", "improved"):
        return []
    return [(name, o) for name, c, o in parts if beyond(c, o).verdict != change.verdict]


def beyond(change: TimeChange, spread: Offsets) -> TimeChange:
    """``change``, but "same" where its interval does not clear the tolerance past the
    recording processes' own offset: a regression must lie above ``1 + tolerance`` times
    the slowest process's, an improvement below the fastest's over ``1 + tolerance``."""
    up = (1 + change.tolerance) * spread.slow
    down = spread.fast / (1 + change.tolerance)
    if (change.verdict == "regressed" and not change.low > up) or (
        change.verdict == "improved" and not change.high < down
    ):
        return replace(change, verdict="same")
    return change
