"""Which reference ticks judge a region's host time, and the agreement among them.

Each tick (measure/reference.py) follows one kind of cost: the memory-bound tick a region
that streams data, the dispatch-bound tick a region of a few small ops, the compute-bound
tick (a small matmul) a region whose time is arithmetic. A slower region moves against
every tick that follows it; a drift in what one tick times moves the region against that
one only. So a change counts only when every tick that judges the region agrees, and the
figure reported is the smallest of their changes.

A region whose recorded host median is LONG_REGION_US or more, and whose recording and
measurement were both timed against the millisecond tick, is judged against that tick
alone: on models of 1.3-24 ms each microsecond tick in turn failed unchanged code or missed
+25% slowdowns from one run to the next, where a matmul of about a millisecond followed them
across processes (docs/gate-quality.md). Other regions are judged by the ticks of what their
time is made of, read from their recording: the memory tick always; the dispatch tick where
its ops, at the dispatch tick's cost each, make at least DISPATCH_SHARE of its time; the
compute tick where its counted work does at least COMPUTE_INTENSITY FLOPs per byte moved, or
was not counted (its kind unknown). A tick that does not follow a region only drifts beside
it: the dispatch tick ran 65% slower in some processes and hid +50% slowdowns of a 1 MB
multiply-and-sum, and the small ticks sped up and failed an unchanged matmul
(docs/gate-quality.md, with the figures).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from ..baselines.entry import Entry
from ..measure.reference import LONG_REGION_US
from ..model import Figures, Measurement, Work
from ..stats import Stats, TimeChange, TimeVerdict, compare_times
from .spread import Offsets, offsets

MEMORY, DISPATCH, COMPUTE = "memory-bound", "dispatch-bound", "compute-bound"
LONG = "millisecond"
# The share of a region's time its ops' dispatch must make for the dispatch tick to judge
# it: README's RMSNorm 16x1024 (6 ops, ~24 µs, a 1.2 µs tick) is 30%, RMSNorm 64x1024 19%,
# a 1 MB multiply-and-sum 5%, a Llama-style block 3%.
DISPATCH_SHARE = 0.125
# FLOPs per byte moved from which a region's time is mostly arithmetic: a 96x96 matmul does
# 16, a 256x256 one 43, an elementwise op or a reduction 0.1-1, RMSNorm about 1.
COMPUTE_INTENSITY = 8.0

# A tick's kind -> the Figures fields holding its per-round tick and the region against it.
TICK_FIELDS: dict[str, tuple[str, str]] = {
    MEMORY: ("reference_us", "host_relative"),
    DISPATCH: ("dispatch_reference_us", "host_relative_dispatch"),
    COMPUTE: ("compute_reference_us", "host_relative_compute"),
    LONG: ("long_reference_us", "host_relative_long"),
}


def judging_kinds(entry: Entry, m: Measurement | None) -> tuple[str, ...]:
    """The ticks whose agreement a region's host-time change needs (kinds_against), for
    measurement ``m``, or for a window still being sampled (None) that times the same ticks
    as the recording."""
    if m is None:
        return kinds_against(entry, None, now_long=entry.host_relative_long is not None)
    return kinds_against(entry, m.work, now_long=m.host_relative_long is not None)


def kinds_against(entry: Entry, work: Work | None, *, now_long: bool) -> tuple[str, ...]:
    """The millisecond tick alone for a millisecond region timed against it on both sides
    (``now_long``: the measurement was); else the ticks of what its time is made of (the
    recording's figures; the work counted now where it was, else the entry's: counts are
    exact on both sides)."""
    if now_long and entry.host_relative_long is not None and long_region(entry.host_us.median):
        return (LONG,)
    flops, moved = entry.flops, entry.bytes_moved
    if work is not None:
        flops, moved = work.flops, work.bytes_moved
    tick = entry.dispatch_reference_us
    return kinds_of(
        entry.ops, entry.host_us.median, tick.median if tick is not None else None, flops, moved
    )


def kinds_of(
    ops: int, host_us: float, dispatch_us: float | None, flops: float | None, moved: float | None
) -> tuple[str, ...]:
    """The ticks that judge a region of ``ops`` ops taking ``host_us`` a call, beside a
    dispatch tick of ``dispatch_us``, doing ``flops`` over ``moved`` bytes (None: not
    counted): the memory tick always; the dispatch tick where the ops, at the tick's cost
    each, make at least DISPATCH_SHARE of the time; the compute tick where the work is
    arithmetic-heavy or its kind unknown."""
    kinds = [MEMORY]
    if dispatch_us is not None and ops * dispatch_us >= DISPATCH_SHARE * host_us:
        kinds.append(DISPATCH)
    if flops is None or not moved or flops / moved >= COMPUTE_INTENSITY:
        kinds.append(COMPUTE)
    return tuple(kinds)


def long_region(host_us: float) -> bool:
    """Whether a region of ``host_us`` a call is judged against the millisecond tick."""
    return host_us >= LONG_REGION_US


def relatives_of(f: Figures) -> dict[str, Stats | None]:
    """A measurement's or an entry's rounds against each tick, by the tick's kind."""
    return {kind: getattr(f, rel) for kind, (_, rel) in TICK_FIELDS.items()}


def relative_changes(
    entry: Entry,
    now: Mapping[str, Stats | None],
    tolerance: float,
    kinds: tuple[str, ...],
) -> list[tuple[str, TimeChange]]:
    """The change against each of ``kinds`` that both sides were timed against."""
    against: list[tuple[str, TimeChange]] = []
    for kind in kinds:
        ref_field, rel_field = TICK_FIELDS[kind]
        then_ref, then_rel, now_rel = (
            getattr(entry, ref_field),
            getattr(entry, rel_field),
            now[kind],
        )
        if then_ref is None or then_rel is None or now_rel is None:
            continue
        # At the baseline's speed of that reference, so that medians read as µs.
        scale = then_ref.median
        then_us = [v * scale for v in then_rel.samples]
        now_us = [v * scale for v in now_rel.samples]
        against.append((kind, compare_times(then_us, now_us, tolerance)))
    return against


def tick_offsets(entry: Entry, kind: str) -> Offsets:
    """How far the entry's recording processes ran apart against the tick of ``kind``."""
    rel = getattr(entry, TICK_FIELDS[kind][1])
    return offsets(rel.samples, entry.processes) if rel is not None else Offsets()


def recorded_spread(entry: Entry, *, host_too: bool = False) -> Offsets:
    """How far the entry's recording processes ran apart against what will judge its time:
    on the cpu backend host time, elsewhere device time and, with ``host_too``
    (--neuron-profile-compare-host), host time as well; host time by the widest over the
    ticks that judge it, else by its raw rounds."""
    # cpu is the one host-timed backend (gate/pairs.py reads it so too); an entry written
    # without its backend is read as the cpu's, as it was before backends were recorded.
    host_timed = entry.environment.get("backend", "cpu") == "cpu"
    parts = [] if host_timed else [offsets(entry.device_us.samples, entry.processes)]
    if host_timed or host_too:
        kinds = [k for k in judging_kinds(entry, None) if getattr(entry, TICK_FIELDS[k][1])]
        parts += [tick_offsets(entry, k) for k in kinds] or [
            offsets(entry.host_us.samples, entry.processes)
        ]
    return Offsets(min(o.fast for o in parts), max(o.slow for o in parts))


def agreed(against: list[tuple[str, TimeChange]]) -> TimeChange | None:
    """One verdict from the changes against several ticks: a change only where all agree,
    the figure of the one nearest no change, its reason naming each; None without any."""
    if not against:
        return None
    if len(against) == 1 or any(c.verdict == "unjudged" for _, c in against):
        return against[0][1]
    changes = [c for _, c in against]
    verdict: TimeVerdict = changes[0].verdict
    if any(c.verdict != verdict for c in changes):
        verdict = "same"
    # The one nearer no change, on a log scale, is the one the verdict rests on.
    nearer = min(changes, key=_distance)
    reason = ", ".join(f"{kind} {c.percent()}" for kind, c in against)
    return replace(nearer, verdict=verdict, reason=reason)


def _distance(c: TimeChange) -> float:
    return abs(math.log(c.ratio)) if c.ratio > 0 else math.inf
