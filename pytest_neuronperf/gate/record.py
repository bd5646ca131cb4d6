"""When a recording's window has sampled enough: the figures a later run is judged against
are known precisely enough for the tolerance they will be judged at.

A recording used to pool three whole windows (3 s a region at the default 1 s). It now
samples passes, as the compare window does, and stops after the first pass whose pooled
rounds pin down each figure the gate will judge: the 95% interval of its median lies within
STOP_SHARE of the tolerance either side of the median (2.5% at 10%). Those figures are the
rounds against each reference tick, or the raw host rounds where no tick was timed. The
ceiling is the old three windows; the figures behind it: docs/cost.md.
"""

from __future__ import annotations

from ..measure.window import STOP_SHARE, HostSamples
from ..stats import MIN_ROUNDS, median_interval


def recording_settled(s: HostSamples, *, tolerance: float) -> str | None:
    """Why the rounds sampled so far are enough to record, or None to sample on."""
    series = {
        "memory-bound": s.relative,
        "dispatch-bound": s.relative_dispatch,
        "compute-bound": s.relative_compute,
    }
    judged = {kind: v for kind, v in series.items() if v} or {"raw": s.host_us}
    if any(len(v) < MIN_ROUNDS for v in judged.values()):
        return "too few rounds for time to be judged"
    margin = 1 + tolerance * STOP_SHARE
    widest = 0.0
    for values in judged.values():
        median, low, high = median_interval(values)
        if not low > 0 or high / median > margin or median / low > margin:
            return None
        widest = max(widest, high / median - 1, 1 - low / median)
    return (
        f"every judged figure's median known to ±{widest * 100:.1f}% (95% CI), inside "
        f"±{tolerance * STOP_SHARE * 100:.2g}% ({STOP_SHARE:g} of the tolerance)"
    )
