"""Calls that waited for the scheduler: host times quantised at the kernel's tick.

Measured on a 2-core VM with two CPU burners (docs/threads.md): with torch's 2 threads,
calls that normally take 2-12 µs took 4.0, 8.0, ... 56 ms, all within a few per cent of a
multiple of the 4 ms tick (CONFIG_HZ=250), and 6-7 of 10 window medians sat on that grid;
on one thread 0.04-0.46% of calls did (the process preempted for a tick), and no median.
A round sample on the grid while a fast call costs a tenth of a tick or less measures the
scheduler, not the code: the detail line says so.
"""

from __future__ import annotations

from collections.abc import Sequence

# The ticks of common kernels (CONFIG_HZ 100, 250, 300, 1000), largest first: a 4 ms grid
# also lies on the 1 ms one, so the largest that explains the long calls is the tick.
TICKS_US = (10_000.0, 4_000.0, 3_333.3, 1_000.0)
# Calls at least this long are kept for the check (window.py); shorter ones cannot be a tick.
LONG_US = 500.0
# Within this share of a tick of a whole multiple counts as on the grid.
GRID = 0.10
# Of the calls a tick could explain, this share must lie on its grid.
EXPLAINED = 0.7
# A round sample this many times a fast call of the same window, and a millisecond or more,
# waited whatever the grid: in bench_gate on 2 threads under two burners such rounds were
# 86-1004x, the stalls no longer tick-aligned (27.9-36.0 ms); on 1 thread, 150 measurements
# under the same load, no round passed 3.6x.
WAITED = 20.0


def on_grid(us: float, tick: float) -> bool:
    k = round(us / tick)
    return k >= 1 and abs(us - k * tick) <= GRID * tick


def tick_of(long_calls: Sequence[float]) -> float | None:
    """The tick that the long calls sit on, or None when they sit on none. Calls shorter
    than a tick count against it: 1, 2, 3 and 4 ms calls are the 1 ms tick's, not 4 ms's."""
    candidates = [t for t in long_calls if t >= (1 - GRID) * min(TICKS_US)]
    if len(candidates) < 3:
        return None
    for tick in TICKS_US:
        if sum(on_grid(t, tick) for t in candidates) >= EXPLAINED * len(candidates):
            return tick
    return None


def scheduler_note(
    long_calls: Sequence[float],
    calls: int,
    rounds_us: Sequence[float],
    fast_us: Sequence[float],
    threads: int | None,
) -> str:
    """One sentence for the detail line, or "". ``long_calls``: the calls of at least
    LONG_US; ``calls``: how many were timed; ``rounds_us``: the round samples; ``fast_us``:
    figures of what the code costs when it runs (per round the low decile of its calls, the
    profiled rounds on cpu).

    Flagged: a round sample on the grid while the code costs a tenth of a tick or less; or,
    where every call waited (no fast figure then), most round samples on the grid at three
    or more different multiples, which code whose cost is its own does not do. Calls alone
    on the grid are not enough: on one thread at load 6, 1-5% of calls sat there in 33 of 75
    bench_gate measurements whose round samples none did (docs/threads.md)."""
    if calls < 1 or not rounds_us:
        return ""
    fast = min(fast_us, default=None)
    why = (
        f"with {threads} threads a parallel op waits until every one of them gets a core; "
        "measure with --neuron-profile-threads=1 or on a quieter machine"
        if threads is not None and threads > 1
        else "the process was preempted by others on a busy machine"
    )
    tail = f": {why}; such samples time the scheduler, not the code"
    tick = tick_of(long_calls)
    if tick is not None:
        hit = [r for r in rounds_us if on_grid(r, tick)]
        calls_hit = sum(on_grid(t, tick) for t in long_calls)
        waited_some = fast is not None and fast <= tick / 10 and bool(hit)
        waited_all = len(hit) >= 0.6 * len(rounds_us) and len({round(r / tick) for r in hit}) >= 3
        if waited_some or waited_all:
            cost = f", while a fast call took {fast:,.1f} µs" if waited_some and fast else ""
            return (
                f"scheduler: {len(hit)} of {len(rounds_us)} round samples and {calls_hit:,} of "
                f"{calls:,} calls ({calls_hit / calls * 100:.1f}%) took whole multiples of the "
                f"{tick / 1000:.3g} ms scheduler tick{cost}{tail}"
            )
    if fast is None or fast <= 0:
        return ""
    slow = [r for r in rounds_us if r >= max(min(TICKS_US), WAITED * fast)]
    if not slow:
        return ""
    return (
        f"scheduler: {len(slow)} of {len(rounds_us)} round samples took {WAITED:g} times a "
        f"fast call or more ({max(slow):,.0f} µs against {fast:,.1f} µs): most of their "
        f"calls waited for a core{tail}"
    )
