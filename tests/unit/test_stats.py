"""The bootstrap interval of the ratio of medians (stats.py)."""

from __future__ import annotations

import random
import statistics

from pytest_neuronperf import stats
from pytest_neuronperf.stats import compare_times, ratio_interval


def _plain_bootstrap(b: list[float], c: list[float], n: int = 4000) -> tuple[float, float]:
    """The textbook percentile bootstrap, written independently of stats.py."""
    rng = random.Random(7)
    ratios = sorted(
        statistics.median(rng.choices(c, k=len(c))) / statistics.median(rng.choices(b, k=len(b)))
        for _ in range(n)
    )
    return ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]


def test_the_interval_matches_a_plain_bootstrap_loop() -> None:
    rng = random.Random(3)
    for shift in (1.0, 1.15, 1.5):
        b = [100 + rng.gauss(0, 8) for _ in range(20)]
        c = [shift * (100 + rng.gauss(0, 8)) for _ in range(15)]
        _, low, high = ratio_interval(b, c)
        plain_low, plain_high = _plain_bootstrap(b, c)
        # Two bootstraps of the same data differ by their draws only: a few per cent at most.
        assert abs(low - plain_low) < 0.03 and abs(high - plain_high) < 0.03, (shift, low, high)


def test_equal_sizes_draw_independent_resamples() -> None:
    # The same samples on both sides: were both sides resampled with one index stream, every
    # ratio would be exactly 1 and the interval would claim certainty it does not have.
    same = [100.0, 104.0, 97.0, 110.0, 95.0, 101.0, 99.0, 130.0]
    point, low, high = ratio_interval(same, same)
    assert point == 1.0 and low < 0.97 and high > 1.03


def test_draws_are_made_once_per_sample_size_and_verdicts_are_deterministic() -> None:
    stats._plan.cache_clear()
    b = [10.0 + i % 3 for i in range(12)]
    c = [11.0 + i % 4 for i in range(12)]
    first = compare_times(b, c, 0.05)
    misses = stats._plan.cache_info().misses
    assert compare_times(b, c, 0.05) == first
    assert stats._plan.cache_info().misses == misses  # the second call drew nothing new
