"""When a recording has sampled enough (gate/record.py), and the passes it samples."""

from __future__ import annotations

import pytest

from pytest_neuronperf.gate.record import recording_settled
from pytest_neuronperf.measure.window import (
    PASSES,
    RECORD_WINDOWS,
    HostSamples,
    WindowPlan,
    sample_window,
)
from pytest_neuronperf.stats import median_interval


def samples(
    spread: float, *, rounds: int = 10, dispatch_spread: float | None = None
) -> HostSamples:
    """Rounds against each tick spread evenly ±``spread`` around 1 (the dispatch tick's
    by ``dispatch_spread`` where given)."""

    def rounds_of(width: float) -> list[float]:
        return [1 + width * (2 * i / (rounds - 1) - 1) for i in range(rounds)]

    other = spread if dispatch_spread is None else dispatch_spread
    return HostSamples(
        [100.0] * rounds,
        [10.0] * rounds,
        rounds_of(spread),
        [2.0] * rounds,
        rounds_of(other),
        1_000,
        None,
        compute_us=[20.0] * rounds,
        relative_compute=rounds_of(spread),
    )


def test_a_recording_stops_once_every_judged_figure_is_pinned_down_for_the_tolerance() -> None:
    steady = samples(0.01)
    why = recording_settled(steady, tolerance=0.1)
    assert why == (
        "every judged figure's median known to ±0.6% (95% CI), inside ±2.5% (0.25 of the tolerance)"
    )
    # Rounds spread ±10%: the median's interval is wider than a quarter of 10%: sample on.
    wide = samples(0.10)
    _, _, high = median_interval(wide.relative)
    assert high - 1 > 0.025
    assert recording_settled(wide, tolerance=0.1) is None
    # A looser tolerance asks less of the same rounds.
    assert recording_settled(wide, tolerance=0.5) is not None
    # One figure wide is enough to sample on, whichever tick it is against.
    assert recording_settled(samples(0.01, dispatch_spread=0.10), tolerance=0.1) is None


def test_the_boundary_is_a_quarter_of_the_tolerance_either_side() -> None:
    s = samples(0.06)
    median, low, high = median_interval(s.relative)
    widest = max(high / median, median / low) - 1
    # A tolerance whose quarter is just that width settles; a hair less does not.
    assert recording_settled(s, tolerance=widest / 0.25 * 1.001) is not None
    assert recording_settled(s, tolerance=widest / 0.25 * 0.999) is None


def test_without_reference_ticks_the_raw_rounds_decide_and_few_rounds_settle_at_once() -> None:
    raw = HostSamples([100.0 + i * 10 for i in range(10)], [], [], [], [], 100, None)
    assert recording_settled(raw, tolerance=0.1) is None
    steady = HostSamples([100.0 + i * 0.1 for i in range(10)], [], [], [], [], 100, None)
    assert recording_settled(steady, tolerance=0.1) is not None
    assert recording_settled(samples(0.5, rounds=4), tolerance=0.1) == (
        "too few rounds for time to be judged"
    )


class FakeClock:
    def __init__(self, cost: int) -> None:
        self.now, self.cost = 0, cost

    def __call__(self) -> int:
        return self.now

    def work(self) -> int:
        self.now += self.cost
        return self.now


def test_a_recording_samples_passes_of_the_windows_length_up_to_its_ceiling() -> None:
    """Each pass is a fifth of the window, as when comparing (the same kind of figure);
    a recording may take up to RECORD_WINDOWS windows of them, as it always took."""
    most = RECORD_WINDOWS * PASSES
    looks: list[int] = []

    def never(s: HostSamples) -> str | None:
        looks.append(s.calls)
        return None

    clock = FakeClock(cost=2_000)
    plan = WindowPlan(0.05, never, passes=most, what="recording")
    s = sample_window(clock.work, 10, plan, None, clock=clock)
    assert s.seconds == pytest.approx(0.05 * RECORD_WINDOWS, rel=1e-3)
    assert len(looks) == most - 1
    assert s.note == (
        f"recording ran {most} of {most} passes, its whole time: the host time's precision "
        "was not settled before"
    )
    # Settled on its first look: one pass, a fifth of the window.
    s = sample_window(clock.work, 10, WindowPlan(0.05, lambda s: "enough", passes=most,
                                                 what="recording"), None, clock=clock)  # fmt: skip
    assert s.seconds == pytest.approx(0.05 / PASSES, rel=1e-3)
    assert s.note == f"recording stopped after 1 of {most} passes: enough"
