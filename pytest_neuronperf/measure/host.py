"""A measurement's host time: its windows of unprofiled calls, and what they fill in.

This module's one job is the host-time half of a callable's measurement, above the one
window that window.py samples: how many windows a measurement takes and pooling them,
the Measurement fields the pooled samples fill in, and the second look that confirms a
host-time regression before it fails a test. The profiled rounds stay with the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..model import Measurement
from ..stats import Stats
from .progress import Writer, phase
from .reference import Reference
from .tick import scheduler_note
from .window import PASSES, RECORD_WINDOWS, HostSamples, WindowPlan, pooled, sample_window


def host_samples(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    sync: Callable[[], None],
    rounds: int,
    plan: WindowPlan,
    windows: int,
    reference: Reference | None,
    long_tick: bool = False,
) -> HostSamples:
    """``windows`` windows of ``rounds`` timed calls, pooled; one when no window is set.
    ``long_tick``: time the millisecond tick too (window.sample_host)."""

    def timed() -> Any:
        out = fn(*args, **kwargs)
        sync()
        return out

    windows = max(1, windows) if plan.seconds else 1
    return pooled(
        [sample_window(timed, rounds, plan, reference, long_tick=long_tick) for _ in range(windows)]
    )


def window_span(plan: WindowPlan, windows: int) -> str:
    """How the progress line names the windows ``host_samples`` will take."""
    windows = max(1, windows)
    if plan.seconds and plan.passes > PASSES:
        return f" over up to {plan.seconds * plan.passes / PASSES:g} s ({plan.what})"
    if plan.seconds and windows > 1:
        return f" over {windows} windows of {plan.seconds:g} s (recording a baseline)"
    return f" over {plan.seconds:g} s" if plan.seconds else ""


def host_fields(
    s: HostSamples, plan: WindowPlan, threads: int | None, floor: tuple[float, ...]
) -> dict[str, Any]:
    """The Measurement fields one host window fills in: ``window_s`` is how long it ran;
    ``floor``: more figures of what a call costs when it runs (Runner._floor)."""
    note = scheduler_note(s.long_calls_us, s.calls, s.host_us, (*s.fast_us, *floor), threads)
    return {
        "host_notes": (note,) if note else (),
        "host_calls": s.calls,
        "window_s": s.seconds if plan.seconds else 0.0,
        "window_note": s.note,
        "reference_us": Stats.of(s.reference_us) if s.reference_us else None,
        "host_relative": Stats.of(s.relative) if s.relative else None,
        "dispatch_reference_us": Stats.of(s.dispatch_us) if s.dispatch_us else None,
        "host_relative_dispatch": (Stats.of(s.relative_dispatch) if s.relative_dispatch else None),
        "compute_reference_us": Stats.of(s.compute_us) if s.compute_us else None,
        "host_relative_compute": Stats.of(s.relative_compute) if s.relative_compute else None,
        "long_reference_us": Stats.of(s.long_us) if s.long_us else None,
        "host_relative_long": Stats.of(s.relative_long) if s.relative_long else None,
    }


def second_look(
    m: Measurement,
    recheck: Callable[[Measurement], str | None],
    sample: Callable[[WindowPlan, int], HostSamples],
    plan: WindowPlan,
    *,
    threads: int | None,
    floor: tuple[float, ...],
    progress: Writer | None,
) -> Measurement:
    """A host-time regression is confirmed on a second look before it fails a test: as
    many windows as a recording pools, sampled right after and judged in the first's
    place, since a first window may have met a bad second (docs/gate-quality.md).
    ``recheck`` says how ``m`` regressed, or None; ``sample(plan, windows)`` samples again."""
    first = recheck(m)
    if first is None:
        return m
    what = f"{m.test_id} {m.region!r}"
    with phase(progress, f"{what} host time regressed {first}: a second look"):
        # Whole windows, as a recording samples them: this look decides.
        whole = WindowPlan(plan.seconds)
        again = sample(whole, RECORD_WINDOWS)
    note = (
        f"host time regressed {first} in the first window; judged on "
        f"{RECORD_WINDOWS} more windows sampled right after, pooled"
    )
    return replace(
        m,
        host_us=Stats.of(again.host_us),
        recheck_note=note,
        **host_fields(again, whole, threads, floor),
    )
