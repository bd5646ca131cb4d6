"""Robust summary statistics over round samples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "median": _round(self.median),
            "min": _round(self.min),
            "max": _round(self.max),
            "iqr": _round(self.iqr),
            "n": self.n,
            "samples": [_round(v) for v in self.samples],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stats:
        return cls(tuple(float(v) for v in d.get("samples", [])))


def _round(v: float) -> float:
    # Three decimals of a µs is a nanosecond: finer digits are noise that bloats diffs.
    return round(v, 3) if not math.isnan(v) else v
