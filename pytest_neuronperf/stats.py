"""Robust summary statistics over round samples."""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values (numpy's default method)."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return float(sorted_values[lo])
    return float(sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo))


def median(values: Sequence[float]) -> float:
    return quantile(sorted(values), 0.5)


@dataclass(frozen=True)
class Stats:
    """Median-centred summary of per-round samples (µs). The samples are kept: the
    baseline comparison needs them to judge noise."""

    samples: tuple[float, ...]
    # The summary a file showed beside these samples (codec.py), written back as it was
    # where it agrees with them: recomputed from samples rounded to 1 ns it can move by
    # 1 ns, a diff on every update. As read; to_dict checks it.
    shown: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        return cls(tuple(float(v) for v in values))

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        return quantile(sorted(self.samples), 0.5)

    @property
    def min(self) -> float:
        return min(self.samples) if self.samples else math.nan

    @property
    def max(self) -> float:
        return max(self.samples) if self.samples else math.nan

    @property
    def iqr(self) -> float:
        s = sorted(self.samples)
        return quantile(s, 0.75) - quantile(s, 0.25)

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median: 0.05 reads as "±5% noise"."""
        m = self.median
        return self.iqr / m if m and not math.isnan(m) else 0.0

    def summary(self) -> dict[str, float]:
        """Median, min, max and IQR as a file shows them (to 1 ns), from one sort."""
        s = sorted(self.samples)
        if not s:
            return {"median": math.nan, "min": math.nan, "max": math.nan, "iqr": math.nan}
        return {
            "median": _round(quantile(s, 0.5)),
            "min": _round(s[0]),
            "max": _round(s[-1]),
            "iqr": _round(quantile(s, 0.75) - quantile(s, 0.25)),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **_agreeing(self.summary(), self.shown, self.n),
            "n": self.n,
            # round() keeps NaN and infinities as they are: no check needed per sample.
            "samples": [round(v, 3) for v in self.samples],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stats:
        return cls(tuple(float(v) for v in d.get("samples", [])))


SUMMARY_KEYS = ("median", "min", "max", "iqr", "n")
# The summary is written rounded to 1 ns from unrounded samples; recomputed from the
# rounded samples it may differ by that much twice over (median of two, then rounding).
_SUMMARY_SLACK = 0.0021


def _agreeing(fresh: dict[str, float], shown: Mapping[str, Any] | None, n: int) -> dict[str, float]:
    """The summary a file showed, where every figure of it agrees with ``fresh`` (and its
    count with ``n``); else ``fresh``."""
    if not shown or shown.get("n") != n:
        return fresh
    kept: dict[str, float] = {}
    for key, value in fresh.items():
        stored = shown.get(key)
        if stored is None and math.isnan(value):
            kept[key] = value
            continue
        if isinstance(stored, bool) or not isinstance(stored, int | float):
            return fresh
        if not abs(stored - value) <= _SUMMARY_SLACK:
            return fresh
        kept[key] = stored
    return kept


def _round(v: float) -> float:
    # Three decimals of a µs is a nanosecond: finer digits are noise that bloats diffs.
    return round(v, 3) if not math.isnan(v) else v


# --- The regression decision -------------------------------------------------------------
#
# Method: percentile bootstrap of the ratio of medians, current / baseline. Each of
# ``RESAMPLES`` draws resamples both round samples with replacement and takes the ratio of
# their medians; the 2.5th and 97.5th percentiles of those ratios are the 95% interval.
# A regression is called only when the whole interval lies above 1 + tolerance: the point
# estimate crossing the tolerance is not enough, because on a shared CPU the medians of two
# A/A runs drift by several per cent. Medians, not means, because single rounds are hit by
# preemption 10x over. The generator is seeded from a constant: one pair of samples always
# gets the same verdict, so a rerun of CI with the same data cannot flip it. The draws depend
# on the sample sizes alone, so they are made once per size and reused (_plan).

RESAMPLES = 2000
CONFIDENCE = 0.95
# Below this many rounds on either side the interval is meaningless (one sample has no
# spread): times are then reported but never fail a test.
MIN_ROUNDS = 5
_SEED = 20240917


TimeVerdict = Literal["regressed", "improved", "same", "unjudged"]


@dataclass(frozen=True)
class TimeChange:
    """How a current sample compares with a baseline sample."""

    verdict: TimeVerdict
    ratio: float  # median(current) / median(baseline)
    low: float  # interval bounds of the ratio; equal to ratio when unjudged
    high: float
    baseline_median: float
    current_median: float
    tolerance: float  # as a fraction: 0.10 for 10%
    reason: str = ""

    def percent(self, value: float | None = None) -> str:
        v = self.ratio if value is None else value
        return f"{(v - 1) * 100:+.0f}%"

    def interval(self) -> str:
        return f"{CONFIDENCE * 100:.0f}% CI {self.percent(self.low)}..{self.percent(self.high)}"


def ratio_interval(
    baseline: Sequence[float],
    current: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = _SEED,
) -> tuple[float, float, float]:
    """(ratio of medians, low, high): the bootstrap interval of median(current) /
    median(baseline). Deterministic for given samples and seed."""
    b = sorted(float(v) for v in baseline)
    c = sorted(float(v) for v in current)
    if not b or not c:
        raise ValueError("ratio_interval needs at least one sample on each side")
    point = _ratio(quantile(c, 0.5), quantile(b, 0.5))
    # Each side draws from its own stream: equal sizes must not share resamples.
    now = _resample_medians(c, _plan(len(c), resamples, seed))
    then = _resample_medians(b, _plan(len(b), resamples, seed + 1))
    ratios = sorted(map(_ratio, now, then))
    alpha = (1 - confidence) / 2
    return point, quantile(ratios, alpha), quantile(ratios, 1 - alpha)


@functools.lru_cache(maxsize=256)
def _plan(n: int, resamples: int, seed: int) -> tuple[list[int], list[int], list[float]]:
    """Per resample of ``n`` values: the positions (in sorted order) whose interpolation is
    the resample's median. Resampling sorted values by index and sorting the indices gives
    the resample sorted, so the draws depend on ``n`` alone and are made once per size."""
    rng = random.Random(seed)
    pos = (n - 1) * 0.5
    lo_at, hi_at = math.floor(pos), math.ceil(pos)
    lo, hi, frac = [], [], []
    for _ in range(resamples):
        idx = sorted(int(rng.random() * n) for _ in range(n))
        lo.append(idx[lo_at])
        hi.append(idx[hi_at])
        frac.append(pos - lo_at)
    return lo, hi, frac


def _resample_medians(
    sorted_values: list[float], plan: tuple[list[int], list[int], list[float]]
) -> list[float]:
    v = sorted_values
    lo, hi, frac = plan
    return [v[a] + (v[z] - v[a]) * f for a, z, f in zip(lo, hi, frac, strict=True)]


def median_interval(
    samples: Sequence[float], *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES
) -> tuple[float, float, float]:
    """(median, low, high): the percentile bootstrap interval of the median of ``samples``,
    drawn as ratio_interval draws (fixed seed, once per sample size)."""
    s = sorted(float(v) for v in samples)
    if not s:
        raise ValueError("median_interval needs at least one sample")
    medians = sorted(_resample_medians(s, _plan(len(s), resamples, _SEED)))
    alpha = (1 - confidence) / 2
    return quantile(s, 0.5), quantile(medians, alpha), quantile(medians, 1 - alpha)


def compare_times(
    baseline: Sequence[float], current: Sequence[float], tolerance: float
) -> TimeChange:
    """Regressed when the interval of the ratio lies wholly above ``1 + tolerance``;
    improved when it lies wholly below ``1 / (1 + tolerance)`` (the same distance on a log
    scale); otherwise the same. ``tolerance`` is a fraction (0.10 = 10%)."""
    if not tolerance > 0:
        raise ValueError(f"tolerance must be > 0, got {tolerance!r}")
    bm, cm = median(baseline), median(current)
    if len(baseline) < MIN_ROUNDS or len(current) < MIN_ROUNDS:
        point = _ratio(cm, bm) if baseline and current else math.nan
        return TimeChange(
            "unjudged",
            point,
            point,
            point,
            bm,
            cm,
            tolerance,
            f"{min(len(baseline), len(current))} rounds; at least {MIN_ROUNDS} on each side "
            "are needed to judge time",
        )
    point, low, high = ratio_interval(baseline, current)
    verdict: TimeVerdict
    if low > 1 + tolerance:
        verdict = "regressed"
    elif high < 1 / (1 + tolerance):
        verdict = "improved"
    else:
        verdict = "same"
    return TimeChange(verdict, point, low, high, bm, cm, tolerance)


def _ratio(num: float, den: float) -> float:
    # A region that took no measurable time on both sides is unchanged; from nothing to
    # something is infinitely slower, which the interval then reports.
    if den > 0:
        return num / den
    return 1.0 if num <= 0 else math.inf
