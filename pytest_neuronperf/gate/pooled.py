"""One region's measurements from several processes as one, the way a baseline pools its
recording processes: each per-round figure's rounds concatenated, in turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..model import ROUND_SAMPLES, Measurement
from ..stats import Stats


def pooled(ms: Sequence[Measurement]) -> Measurement:
    """The first measurement with every process's rounds; a figure some process did not
    time is dropped, so that no figure's rounds come from fewer processes than another's."""
    merged: dict[str, Stats | None] = {}
    for name in ROUND_SAMPLES:
        series: list[Stats | None] = [getattr(m, name) for m in ms]
        kept = [s for s in series if s is not None]
        merged[name] = (
            Stats(tuple(v for s in kept for v in s.samples)) if len(kept) == len(series) else None
        )
    rounds = sum(m.rounds for m in ms)
    return replace(ms[0], rounds=rounds, **merged)  # type: ignore[arg-type]
