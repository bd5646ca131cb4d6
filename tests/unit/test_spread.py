"""gate/spread.py: how far a pooled baseline's recording processes ran apart, and the
changes that do not get past it."""

from __future__ import annotations

import random
import statistics

import pytest

from pytest_neuronperf.gate.spread import Offsets, beyond, held_back, offsets
from pytest_neuronperf.stats import TimeChange


def change(verdict: str, low: float, high: float, tolerance: float = 0.1) -> TimeChange:
    ratio = (low + high) / 2
    return TimeChange(verdict, ratio, low, high, 100.0, 100.0 * ratio, tolerance)  # type: ignore[arg-type]


def test_offsets_are_each_process_median_over_the_pooled_one() -> None:
    rng = random.Random(7)
    speeds = (1.0, 1.24, 0.92)
    samples = [100 * s * rng.uniform(0.98, 1.02) for s in speeds for _ in range(10)]
    pooled = statistics.median(samples)
    medians = [statistics.median(samples[i * 10 : (i + 1) * 10]) for i in range(3)]
    got = offsets(samples, 3)
    assert got == Offsets(min(medians) / pooled, max(medians) / pooled)
    assert (
        got.text()
        == f"{(min(medians) / pooled - 1) * 100:+.0f}%..+{(max(medians) / pooled - 1) * 100:.0f}%"
    )


@pytest.mark.parametrize(
    ("samples", "processes"),
    [
        ([100.0, 120.0, 90.0], 1),  # one process: nothing to set apart
        ([100.0] * 10 + [130.0] * 9, 2),  # rounds that do not split into the processes
        ([], 3),
        ([0.0] * 6, 3),  # a region that took no measurable time
    ],
)
def test_no_offsets_without_processes_to_tell_apart(samples: list[float], processes: int) -> None:
    assert offsets(samples, processes) == Offsets(1.0, 1.0)


def test_the_pooled_median_lies_among_the_processes() -> None:
    # So that a spread never narrows the band: the slowest is never below the pool.
    rng = random.Random(11)
    for _ in range(300):
        processes, rounds = rng.randint(2, 5), rng.randint(1, 12)
        samples = [rng.lognormvariate(0, 0.3) for _ in range(processes * rounds)]
        o = offsets(samples, processes)
        assert o.fast <= 1.0 <= o.slow


@pytest.mark.parametrize(
    ("verdict", "low", "high", "spread", "kept"),
    [
        # A regression must clear the tolerance past the slowest process.
        ("regressed", 1.20, 1.30, Offsets(0.92, 1.24), False),
        ("regressed", 1.40, 1.50, Offsets(0.92, 1.24), True),
        ("regressed", 1.20, 1.30, Offsets(0.60, 1.05), True),  # the fastest plays no part
        ("regressed", 1.1 * 1.24, 1.50, Offsets(0.92, 1.24), False),  # on the edge: not past
        # An improvement must clear it below the fastest.
        ("improved", 0.70, 0.80, Offsets(0.80, 1.05), False),
        ("improved", 0.60, 0.70, Offsets(0.80, 1.05), True),
        ("improved", 0.70, 0.80, Offsets(0.98, 1.60), True),  # the slowest plays no part
        ("improved", 0.70, 0.88 / 1.1, Offsets(0.88, 1.0), False),  # on the edge
        # One process, or processes that agreed: the tolerance alone, as before pooling.
        ("regressed", 1.11, 1.20, Offsets(), True),
        ("improved", 0.80, 0.90, Offsets(), True),
    ],
)
def test_a_change_counts_only_past_the_processes_offset(
    verdict: str, low: float, high: float, spread: Offsets, kept: bool
) -> None:
    c = change(verdict, low, high)
    assert beyond(c, spread).verdict == (verdict if kept else "same")
    assert beyond(c, spread).ratio == c.ratio  # the figure stays; only the verdict moves


@pytest.mark.parametrize("verdict", ["same", "unjudged"])
def test_a_change_that_was_not_called_is_left_as_it_is(verdict: str) -> None:
    c = change(verdict, 1.5, 1.6)
    assert beyond(c, Offsets(0.5, 2.0)) == c
    assert held_back(c, [("memory-bound", c, Offsets(0.5, 2.0))]) == []


def test_held_back_names_each_part_that_does_not_get_past_its_own_processes() -> None:
    memory = change("regressed", 1.30, 1.40)
    compute = change("regressed", 1.20, 1.30)
    parts = [
        ("memory-bound", memory, Offsets(0.95, 1.10)),  # 1.30 > 1.21: past
        ("compute-bound", compute, Offsets(0.90, 1.20)),  # 1.20 < 1.32: within
    ]
    agreed = change("regressed", 1.20, 1.30)
    assert held_back(agreed, parts) == [("compute-bound", Offsets(0.90, 1.20))]
    assert held_back(agreed, parts[:1]) == []


@pytest.mark.parametrize(
    ("spread", "wider"),
    [
        (Offsets(1.0, 1.0), False),
        (Offsets(0.95, 1.1), False),  # the slowest process exactly at the tolerance
        (Offsets(0.95, 1.1001), True),
        (Offsets(1 / 1.1, 1.05), False),  # the fastest exactly at the tolerance
        (Offsets(1 / 1.1 - 0.0001, 1.05), True),
        (Offsets(0.7, 1.0), True),
    ],
)
def test_a_spread_is_wider_than_the_tolerance_only_past_either_edge(
    spread: Offsets, wider: bool
) -> None:
    assert spread.wider_than(0.1) is wider
