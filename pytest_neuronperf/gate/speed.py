"""A region's times at the speed of the process that recorded its baseline entry.

A time budget is a fixed number of µs; a CPU process's speed is not: one unchanged region's
medians ran 0.65-4.1x apart across processes (benchmarks/RESULTS.md). Where an entry is
compared, its reference ticks say how fast the recording process ran, and each round
against the tick timed beside it says what the region would have taken at that speed: the
figures the baseline rule judges (gate/compare.py), here for a budget to judge. Host time
takes the ticks that judge the region (gate/ticks.py), and is over a limit only when it is
over at every one of them; device time takes the tick timed before each profiled round.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..baselines.entry import Entry
from ..measure.reference import against_reference
from ..model import Measurement
from ..stats import MIN_ROUNDS, Stats, median_interval
from .ticks import TICK_FIELDS, judging_kinds


@dataclass(frozen=True)
class AtSpeed:
    """One time's rounds at the recording's speed, and the tick that scaled them."""

    stats: Stats
    tick: str


def at_recording_speed(entry: Entry, m: Measurement) -> dict[str, AtSpeed]:
    """``m``'s device and host times at ``entry``'s recording speed, where both sides timed
    the ticks that scale them."""
    out: dict[str, AtSpeed] = {}
    device = _scaled(m.device_us, m.device_reference_us, entry.device_reference_us)
    if device is not None:
        out["device_us"] = AtSpeed(device, "memory-bound")
    by_tick = [
        (kind, scaled)
        for kind in judging_kinds(entry, m)
        if (scaled := _scaled(m.host_us, *_host_ticks(entry, m, kind))) is not None
    ]
    if by_tick:
        # Over a limit only at every tick: the one whose interval reaches lowest decides.
        kind, host = min(by_tick, key=lambda kind_stats: _lowest(kind_stats[1]))
        out["host_us"] = AtSpeed(host, kind)
    return out


def _host_ticks(entry: Entry, m: Measurement, kind: str) -> tuple[Stats | None, Stats | None]:
    tick_field, _ = TICK_FIELDS[kind]
    now: Stats | None = getattr(m, tick_field)
    then: Stats | None = getattr(entry, tick_field)
    return now, then


def _scaled(rounds: Stats, now_tick: Stats | None, then_tick: Stats | None) -> Stats | None:
    if now_tick is None or then_tick is None:
        return None
    scaled = against_reference(rounds.samples, now_tick.samples, then_tick.median)
    return Stats.of(scaled) if scaled is not None else None


def _lowest(s: Stats) -> float:
    """The low end of the median's interval; the median itself with too few rounds."""
    return median_interval(s.samples)[1] if s.n >= MIN_ROUNDS else s.median
