"""Host time sampled over a window of steady calls, one sample per round.

Each round's sample is the median of the calls in its share of the window; against each of
the three reference ticks (reference.py) a round also keeps the low decile of call/tick
(``relative``, ``relative_dispatch``, ``relative_compute``), which the CPU gate judges. The
memory and dispatch ticks are timed before every call, each call paired with its own; the
costlier compute tick COMPUTE_TICKS_PER_ROUND times a round, the calls against their median;
and where the caller asks for it (a millisecond region) the millisecond tick
LONG_TICKS_PER_ROUND times a round, the same way (``relative_long``).
Why a window, why the low decile, and the measurements behind both: docs/gate-quality.md.

A window is sampled in PASSES passes of equal length, pooled per round; where a time will be
judged against a baseline it stops after the first pass whose rounds settle the verdict
(sample_window, docs/cost.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from statistics import median
from typing import Any

from ..stats import quantile
from .reference import Reference
from .tick import LONG_US

RELATIVE_QUANTILE = 0.10
# The reference ticks a window keeps a round against (reference.py).
KINDS = ("memory", "dispatch", "compute", "long")
# Fewer calls and one stalled call is a round's decile: read 2,000x (docs/window-rounds.md).
MIN_CALLS_PER_ROUND = 10

# The environment key a callable's measurement and its baseline entry carry the window
# under (seconds, ``%g``): a baseline is judged only against the same sampling.
WINDOW_KEY = "window"


@dataclass(frozen=True)
class HostSamples:
    host_us: list[float]  # one per round
    reference_us: list[float]  # one per round, or empty without a reference
    relative: list[float]  # one per round: the calls' low decile in reference units, or empty
    dispatch_us: list[float]  # the same two for the dispatch-bound tick
    relative_dispatch: list[float]
    calls: int
    result: Any  # what the last call returned: the fixture hands it back to the test
    windows: int = 1  # more when pooled
    # The calls of at least tick.LONG_US, and per round the low decile of its calls: what
    # tick.scheduler_note needs to tell calls that waited for the scheduler.
    long_calls_us: tuple[float, ...] = ()
    fast_us: tuple[float, ...] = ()
    seconds: float = 0.0  # how long the sampling ran, all pooled windows together
    note: str = ""  # why an adaptive window stopped where it did (sample_window)
    # The compute-bound tick per round, and the calls' low decile against it.
    compute_us: list[float] = field(default_factory=list)
    relative_compute: list[float] = field(default_factory=list)
    # The same for the millisecond tick, where it was timed (a millisecond region).
    long_us: list[float] = field(default_factory=list)
    relative_long: list[float] = field(default_factory=list)


# A round times the compute-bound tick (about 60 µs) this many times, evenly over its
# share: 1-2% of a 20 ms block, where a tick before every call would double a fast region's.
COMPUTE_TICKS_PER_ROUND = 4
# The millisecond tick (about 1.3 ms) this many times a round: 3-4 ms of a 20 ms block, timed
# only for regions of about a millisecond or more, whose blocks hold a few calls anyway.
LONG_TICKS_PER_ROUND = 3
# Whole windows a regression's second look samples, pooled (host.second_look).
RECORD_WINDOWS = 3
# A window is sampled in this many passes of equal length (sample_window): an adaptive one
# runs at least one, so its floor is the window over PASSES.
PASSES = 5
# An adaptive window stops once the judged figure's interval lies inside the tolerance band
# by this share of the tolerance (gate.settled.window_settled, docs/cost.md).
STOP_SHARE = 0.25


@dataclass(frozen=True)
class Shape:
    """What a region is made of, as its profiled rounds and its work count tell it before
    its host window is sampled: which reference ticks will judge it follows from these."""

    ops: int
    flops: float | None = None
    bytes_moved: float | None = None


@dataclass(frozen=True)
class WindowPlan:
    """How host time is sampled for one measurement: ``seconds`` of window (0: one call per
    round) and, where the time is judged against a baseline, ``settled``: given the rounds
    sampled so far, why they already settle the verdict (the window then stops), or None
    to sample on. Without it the window runs whole. ``passes``: at most this many passes of
    ``seconds / PASSES`` each; ``what`` names the sampling in its note. ``shaped``: the plan
    to follow once the region's :class:`Shape` is known (a recording's stop rule reads it)."""

    seconds: float
    settled: Callable[[HostSamples], str | None] | None = None
    passes: int = PASSES
    what: str = "window"
    shaped: Callable[[Shape], WindowPlan] | None = None

    def given(self, shape: Shape) -> WindowPlan:
        """This plan for a region of ``shape``."""
        return self if self.shaped is None else self.shaped(shape)


def sample_host(
    call: Callable[[], Any],
    rounds: int,
    window_s: float,
    reference: Reference | None,
    clock: Callable[[], int] = time.perf_counter_ns,
    *,
    long_tick: bool = False,
) -> HostSamples:
    """``rounds`` samples over ``window_s`` seconds; at least one call per round, so a
    callable slower than its share of the window is timed once per round. A round that
    reaches its end with fewer than MIN_CALLS_PER_ROUND calls of a callable fast enough for
    them to fit its share makes them: after a stall past several ends, those rounds were
    one call each. With no window, one call per round. ``long_tick``: time the millisecond
    tick too."""
    spaced = _spaced_ticks(reference, long_tick)
    host: list[float] = []
    refs: dict[str, list[float]] = {kind: [] for kind in KINDS}
    relative: dict[str, list[float]] = {kind: [] for kind in KINDS}
    calls = 0
    long_calls: list[float] = []
    fast: list[float] = []
    result: Any = None
    if reference is not None and long_tick:
        reference.prepare_long()  # its tensors and warm-up stay outside the window
    start = clock()
    block_ns = window_s * 1e9 / rounds
    fastest_ns = float("inf")  # the window's fastest call so far
    for block in range(rounds):
        # Ends fixed from the start: one slow block does not push the rest later.
        end = start + (block + 1) * block_ns
        times: list[float] = []
        # The memory and dispatch ticks, one before each call; the spaced ticks of the round.
        ticks: dict[str, list[float]] = {"memory": [], "dispatch": []}
        spaced_ticks: dict[str, list[float]] = {kind: [] for kind in spaced}
        next_at: dict[str, float] = dict.fromkeys(spaced, float(clock()))
        while True:
            if reference is not None:
                for kind, (timer, per_round) in spaced.items():
                    if clock() >= next_at[kind]:
                        spaced_ticks[kind].append(timer())
                        next_at[kind] = clock() + block_ns / per_round
                ticks["memory"].append(reference.tick())
                ticks["dispatch"].append(reference.dispatch_tick())
            t0 = clock()
            result = call()
            took = clock() - t0
            times.append(took / 1e3)
            fastest_ns = min(fastest_ns, took)
            few = len(times) < MIN_CALLS_PER_ROUND and fastest_ns * MIN_CALLS_PER_ROUND < block_ns
            if clock() >= end and not few:
                break
        calls += len(times)
        host.append(median(times))
        fast.append(quantile(sorted(times), RELATIVE_QUANTILE))
        long_calls.extend(t for t in times if t >= LONG_US)
        for kind, kind_ticks in ticks.items():
            if kind_ticks and all(t > 0 for t in kind_ticks):
                refs[kind].append(median(kind_ticks))
                ratios = sorted(t / k for t, k in zip(times, kind_ticks, strict=True))
                relative[kind].append(quantile(ratios, RELATIVE_QUANTILE))
        for kind, timed in spaced_ticks.items():
            if timed and all(t > 0 for t in timed):
                # A few ticks a round: the calls against their median, or one tick that met a
                # busy moment drags a quarter of the calls' ratios into the decile.
                tick = median(timed)
                refs[kind].append(tick)
                relative[kind].append(fast[-1] / tick)
    return HostSamples(
        host,
        refs["memory"],
        relative["memory"],
        refs["dispatch"],
        relative["dispatch"],
        calls,
        result,
        long_calls_us=tuple(long_calls),
        fast_us=tuple(fast),
        seconds=(clock() - start) / 1e9,
        compute_us=refs["compute"],
        relative_compute=relative["compute"],
        long_us=refs["long"],
        relative_long=relative["long"],
    )


def _spaced_ticks(
    reference: Reference | None, long_tick: bool
) -> dict[str, tuple[Callable[[], float], int]]:
    """The ticks timed a few times a round rather than before each call, with how many."""
    if reference is None:
        return {}
    spaced = {"compute": (reference.compute_tick, COMPUTE_TICKS_PER_ROUND)}
    if long_tick:
        spaced["long"] = (reference.long_tick, LONG_TICKS_PER_ROUND)
    return spaced


def sample_window(
    call: Callable[[], Any],
    rounds: int,
    plan: WindowPlan,
    reference: Reference | None,
    clock: Callable[[], int] = time.perf_counter_ns,
    *,
    long_tick: bool = False,
) -> HostSamples:
    """One window of up to ``plan.passes`` passes of ``plan.seconds / PASSES``, pooled per
    round (so each round's sample stays one figure from blocks of the same length, whether
    the window ran whole or stopped early). With ``plan.settled`` it stops after the first
    pass whose pooled rounds settle the verdict; it also stops once the window's time is
    spent (a callable slower than a pass's blocks)."""
    if plan.seconds <= 0:
        return sample_host(call, rounds, 0.0, reference, clock, long_tick=long_tick)
    start = clock()
    passes: list[HostSamples] = []
    note = ""
    most = max(1, plan.passes)
    while len(passes) < most:
        passes.append(
            sample_host(call, rounds, plan.seconds / PASSES, reference, clock, long_tick=long_tick)
        )
        if clock() - start >= plan.seconds * most / PASSES * 1e9:
            break  # the window's time is spent: a callable slower than a pass's blocks
        if plan.settled is None or len(passes) == most:
            continue
        why = plan.settled(pooled(passes))
        if why is not None:
            note = f"{plan.what} stopped after {len(passes)} of {most} passes: {why}"
            break
    if plan.settled is not None and not note:
        note = (
            f"{plan.what} ran {len(passes)} of {most} passes, its whole time: the host time's "
            f"{'precision' if plan.what == 'recording' else 'verdict'} was not settled before"
        )
    return replace(pooled(passes), seconds=(clock() - start) / 1e9, note=note)


def pooled(windows: list[HostSamples]) -> HostSamples:
    """Several windows as one: per round, the median of the windows' figures for that round
    (so the round count stays what it was); calls add up; the last window's result.

    For recording a baseline: one window is one draw of the machine's moment, and a baseline
    that caught a lucky or unlucky one shifts every later verdict by as much."""
    if len(windows) == 1:
        return windows[0]

    def per_round(field: str) -> list[float]:
        columns = [getattr(w, field) for w in windows]
        if any(len(c) != len(columns[0]) for c in columns):
            return []
        return [median(values) for values in zip(*columns, strict=True)]

    return HostSamples(
        per_round("host_us"),
        per_round("reference_us"),
        per_round("relative"),
        per_round("dispatch_us"),
        per_round("relative_dispatch"),
        sum(w.calls for w in windows),
        windows[-1].result,
        sum(w.windows for w in windows),
        tuple(t for w in windows for t in w.long_calls_us),
        tuple(f for w in windows for f in w.fast_us),
        sum(w.seconds for w in windows),
        compute_us=per_round("compute_us"),
        relative_compute=per_round("relative_compute"),
        long_us=per_round("long_us"),
        relative_long=per_round("relative_long"),
    )
