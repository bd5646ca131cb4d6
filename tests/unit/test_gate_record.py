"""When a recording has sampled enough (gate/record.py), the passes it samples, and which
pooled entries it names for their recording processes' spread."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import helpers
import pytest

from pytest_neuronperf.baselines.store import Baselines
from pytest_neuronperf.baselines.update import plan_update
from pytest_neuronperf.gate.record import recording_plan, recording_settled, spread_apart
from pytest_neuronperf.measure.window import PASSES, HostSamples, Shape, sample_window
from pytest_neuronperf.stats import median_interval


def samples(
    spread: float,
    *,
    rounds: int = 10,
    dispatch_spread: float | None = None,
    compute_spread: float | None = None,
) -> HostSamples:
    """Rounds against each tick spread evenly ±``spread`` around 1 (the dispatch and
    compute ticks' by ``dispatch_spread`` and ``compute_spread`` where given); 100 µs a
    call, a dispatch tick of 2 µs."""

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
        relative_compute=rounds_of(spread if compute_spread is None else compute_spread),
    )


def test_a_recording_stops_once_every_judged_figure_is_pinned_down_for_the_tolerance() -> None:
    steady = samples(0.01)
    why = recording_settled(steady, shape=None, tolerance=0.1)
    assert why == (
        "the figures that will judge it (memory-bound, dispatch-bound, compute-bound) known to "
        "±0.6% (95% CI of the median), inside ±2.5% (0.25 of the tolerance)"
    )
    # Rounds spread ±10%: the median's interval is wider than a quarter of 10%: sample on.
    wide = samples(0.10)
    _, _, high = median_interval(wide.relative)
    assert high - 1 > 0.025
    assert recording_settled(wide, shape=None, tolerance=0.1) is None
    # A looser tolerance asks less of the same rounds.
    assert recording_settled(wide, shape=None, tolerance=0.5) is not None
    # One figure wide is enough to sample on, whichever tick it is against.
    assert recording_settled(samples(0.01, dispatch_spread=0.10), shape=None, tolerance=0.1) is None


def test_the_boundary_is_a_quarter_of_the_tolerance_either_side() -> None:
    s = samples(0.06)
    median, low, high = median_interval(s.relative)
    widest = max(high / median, median / low) - 1
    # A tolerance whose quarter is just that width settles; a hair less does not.
    assert recording_settled(s, shape=None, tolerance=widest / 0.25 * 1.001) is not None
    assert recording_settled(s, shape=None, tolerance=widest / 0.25 * 0.999) is None


def test_without_reference_ticks_the_raw_rounds_decide_and_few_rounds_settle_at_once() -> None:
    raw = HostSamples([100.0 + i * 10 for i in range(10)], [], [], [], [], 100, None)
    assert recording_settled(raw, shape=None, tolerance=0.1) is None
    steady = HostSamples([100.0 + i * 0.1 for i in range(10)], [], [], [], [], 100, None)
    assert recording_settled(steady, shape=None, tolerance=0.1) is not None
    assert recording_settled(samples(0.5, rounds=4), shape=None, tolerance=0.1) == (
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


def test_a_recording_samples_passes_of_the_windows_length_up_to_one_window() -> None:
    """Each pass is a fifth of the window, as when comparing (the same kind of figure); a
    recording takes up to one window of them."""
    looks: list[int] = []

    def never(s: HostSamples) -> str | None:
        looks.append(s.calls)
        return None

    clock = FakeClock(cost=2_000)
    plan = replace(recording_plan(0.05, 0.1), settled=never)
    s = sample_window(clock.work, 10, plan, None, clock=clock)
    assert s.seconds == pytest.approx(0.05, rel=1e-3)
    assert len(looks) == PASSES - 1
    assert s.note == (
        f"recording ran {PASSES} of {PASSES} passes, its whole time: the host time's precision "
        "was not settled before"
    )
    # Settled on its first look: one pass, a fifth of the window.
    s = sample_window(clock.work, 10, replace(plan, settled=lambda s: "enough"), None, clock=clock)
    assert s.seconds == pytest.approx(0.05 / PASSES, rel=1e-3)
    assert s.note == f"recording stopped after 1 of {PASSES} passes: enough"


# 100 µs a call beside a 2 µs dispatch tick: ops at or past 6.25 make 1/8 of the time.
MEMORY_ONLY = Shape(ops=6, flops=100.0, bytes_moved=1_000.0)


def test_only_the_ticks_that_will_judge_the_region_must_be_pinned_down() -> None:
    """A region judged by the memory tick alone records once that figure is known, however
    wide its rounds against the other ticks; each other tick counts where it judges."""
    noisy_others = samples(0.01, dispatch_spread=0.10, compute_spread=0.10)
    assert recording_settled(noisy_others, shape=None, tolerance=0.1) is None
    why = recording_settled(noisy_others, shape=MEMORY_ONLY, tolerance=0.1)
    assert why is not None and why.startswith("the figures that will judge it (memory-bound) ")
    # Seven ops at the dispatch tick's 2 µs are 14% of 100 µs: the dispatch tick judges.
    dispatch_heavy = replace(MEMORY_ONLY, ops=7)
    assert recording_settled(noisy_others, shape=dispatch_heavy, tolerance=0.1) is None
    # 8 FLOPs a byte is arithmetic-heavy: the compute tick judges; just under it does not.
    arithmetic = replace(MEMORY_ONLY, flops=8_000.0)
    assert recording_settled(noisy_others, shape=arithmetic, tolerance=0.1) is None
    under = replace(MEMORY_ONLY, flops=7_990.0)
    assert recording_settled(noisy_others, shape=under, tolerance=0.1) is not None
    # Work not counted: its kind unknown, the compute tick judges.
    uncounted = replace(MEMORY_ONLY, flops=None, bytes_moved=None)
    assert recording_settled(noisy_others, shape=uncounted, tolerance=0.1) is None


def test_the_recording_plan_takes_the_regions_shape_once_known() -> None:
    plan = recording_plan(1.0, 0.1)
    assert (plan.seconds, plan.passes, plan.what) == (1.0, PASSES, "recording")
    noisy_others = samples(0.01, dispatch_spread=0.10, compute_spread=0.10)
    assert plan.settled is not None and plan.settled(noisy_others) is None
    shaped = plan.given(MEMORY_ONLY)
    assert shaped.settled is not None and shaped.settled(noisy_others) is not None
    assert shaped.given(replace(MEMORY_ONLY, ops=50)) is shaped
    assert (shaped.seconds, shaped.passes, shaped.what) == (1.0, PASSES, "recording")


def test_a_millisecond_region_is_recorded_once_the_millisecond_tick_pins_it_down() -> None:
    """The figures that will judge it: against the millisecond tick alone, however wide
    its rounds against the microsecond ticks; below a millisecond, those again."""
    wide = samples(0.10)
    long = replace(
        wide,
        host_us=[2_000.0] * 10,
        long_us=[1_000.0] * 10,
        relative_long=[2.0 + 0.001 * i for i in range(10)],
    )
    why = recording_settled(long, shape=Shape(ops=1), tolerance=0.1)
    assert why is not None and why.startswith("the figures that will judge it (millisecond)")
    assert recording_settled(replace(long, relative_long=wide.relative), shape=None,
                             tolerance=0.1) is None  # fmt: skip
    short = replace(long, host_us=[999.0] * 10)
    assert recording_settled(short, shape=Shape(ops=1), tolerance=0.1) is None


def test_a_pooled_region_is_named_at_its_markers_tolerance() -> None:
    # Two recording processes 20% apart against the memory tick: about -9%..+9% from their
    # pooled median, and one at the same speed as its first.
    current = Baselines(
        Path("x.json"),
        "cpu:x86_64",
        {"t::a": {"r": helpers.process_entry(1.0)}, "t::b": {"r": helpers.process_entry(1.0)}},
    )
    measured = {
        ("t::a", "r"): (helpers.process_entry(1.2, 3), False),
        ("t::b", "r"): (helpers.process_entry(1.0, 5), False),
    }
    plan = plan_update(current, measured, (), pool=True)
    assert plan.pooled == (("t::a", "r"), ("t::b", "r"))
    (named,) = spread_apart(plan, {}, 0.05)
    assert named[:2] == ("t::a", "r") and named[2].startswith("-")
    # Its marker's 15% holds it, whatever the session's; another's 1% names that one too.
    assert spread_apart(plan, {("t::a", "r"): 0.15}, 0.05) == []
    assert [t for t, _, _ in spread_apart(plan, {("t::b", "r"): 1e-9}, 0.05)] == ["t::a", "t::b"]
    assert spread_apart(plan, {}, 0.15) == []


def test_a_device_recording_names_host_time_apart_only_when_host_time_is_compared() -> None:
    cuda = {"backend": "cuda", "torch": "2.13.0", "device_kind": "cuda:H100"}
    current = Baselines(
        Path("x.json"), "cuda:H100", {"t::a": {"r": helpers.process_entry(1.0, environment=cuda)}}
    )
    # Host time 20% apart, device time the same in both processes.
    measured = {("t::a", "r"): (helpers.process_entry(1.2, 3, environment=cuda,
                device_us=helpers.process_entry(1.0).device_us), False)}  # fmt: skip
    plan = plan_update(current, measured, (), pool=True)
    assert plan.pooled == (("t::a", "r"),)
    assert spread_apart(plan, {}, 0.05) == []
    assert [t for t, _, _ in spread_apart(plan, {}, 0.05, host_too=True)] == ["t::a"]
