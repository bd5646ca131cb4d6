"""When a recording's window has sampled enough: the figures a later run is judged against
are known precisely enough for the tolerance they will be judged at.

A recording samples passes, as the compare window does, and stops after the first pass
whose pooled rounds pin down each figure that will judge the region: the 95% interval of
its median lies within STOP_SHARE of the tolerance either side of the median (2.5% at 10%).
Those figures are the rounds against each reference tick that judges the region
(gate/ticks.py: known once its profiled rounds and work count give its shape), or the raw
host rounds where no tick was timed. The ceiling is one window, as when comparing: a region
still unsettled by then is no steadier after more passes on the same process, and
``neuronperf record --processes N`` pools processes for it (figures: docs/cost.md).

And once processes are pooled: which entries' recording processes ran further apart than
the tolerance they will be judged at (spread_apart), for the recording's footer.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from statistics import median

from ..baselines.store import Key
from ..baselines.update import UpdatePlan
from ..measure.window import PASSES, STOP_SHARE, HostSamples, Shape, WindowPlan
from ..stats import MIN_ROUNDS, median_interval
from .ticks import COMPUTE, DISPATCH, LONG, MEMORY, kinds_of, long_region, recorded_spread


def recording_plan(seconds: float, tolerance: float, shape: Shape | None = None) -> WindowPlan:
    """The recording's window: up to one window of passes, stopping once the figures that
    will judge a region of ``shape`` are pinned down (every tick's while it is not known)."""
    return WindowPlan(
        seconds,
        settled=partial(recording_settled, shape=shape, tolerance=tolerance),
        passes=PASSES,
        what="recording",
        shaped=None if shape is not None else partial(recording_plan, seconds, tolerance),
    )


def recording_settled(s: HostSamples, *, shape: Shape | None, tolerance: float) -> str | None:
    """Why the rounds sampled so far are enough to record, or None to sample on."""
    judged = _judged_series(s, shape)
    if any(len(v) < MIN_ROUNDS for v in judged.values()):
        return "too few rounds for time to be judged"
    margin = 1 + tolerance * STOP_SHARE
    widest = 0.0
    for values in judged.values():
        mid, low, high = median_interval(values)
        if not low > 0 or high / mid > margin or mid / low > margin:
            return None
        widest = max(widest, high / mid - 1, 1 - low / mid)
    return (
        f"the figures that will judge it ({', '.join(judged)}) known to ±{widest * 100:.1f}% "
        f"(95% CI of the median), inside ±{tolerance * STOP_SHARE * 100:.2g}% "
        f"({STOP_SHARE:g} of the tolerance)"
    )


def _judged_series(s: HostSamples, shape: Shape | None) -> dict[str, list[float]]:
    """The rounds against each tick that will judge a region of ``shape`` (every tick's
    when it is not known; the millisecond tick's alone for a millisecond region timed
    against it), or the raw rounds where no tick was timed."""
    series = {MEMORY: s.relative, DISPATCH: s.relative_dispatch, COMPUTE: s.relative_compute}
    if s.relative_long and s.host_us and long_region(median(s.host_us)):
        return {LONG: s.relative_long}
    if shape is not None and s.host_us:
        tick = median(s.dispatch_us) if s.dispatch_us else None
        kinds = kinds_of(shape.ops, median(s.host_us), tick, shape.flops, shape.bytes_moved)
        series = {kind: series[kind] for kind in kinds}
    return {kind: v for kind, v in series.items() if v} or {"raw": s.host_us}


def spread_apart(
    plan: UpdatePlan,
    tolerances: Mapping[Key, float],
    tolerance: float,
    *,
    host_too: bool = False,
) -> list[tuple[str, str, str]]:
    """The test, region and spread of each entry this run pooled whose recording processes
    ran further apart than its tolerance (``tolerances``' where its marker set one, else
    ``tolerance``): a later change counts only past the tolerance beyond that spread.
    ``host_too``: host time is judged on a device backend too (recorded_spread)."""
    out = []
    for key in plan.pooled:
        entry = plan.result.get(*key)
        spread = recorded_spread(entry, host_too=host_too) if entry is not None else None
        if spread is not None and spread.wider_than(tolerances.get(key, tolerance)):
            out.append((key[0], key[1], spread.text()))
    return out
