"""The ``neuron_budget`` marker: its signature, validation and the checks it makes."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from .model import Measurement


class BudgetError(ValueError):
    """A marker that cannot be honoured; raised at collection, before anything runs."""


@dataclass(frozen=True)
class Budget:
    max_device_us: float | None = None
    max_ops: int | None = None
    max_kernels: int | None = None
    max_host_us: float | None = None
    region: str | None = None

    def limits(self) -> dict[str, float]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name.startswith("max_") and getattr(self, f.name) is not None
        }

    def describe(self) -> str:
        parts = [f"{k}={_fmt(v)}" for k, v in self.limits().items()]
        if self.region is not None:
            parts.append(f"region={self.region!r}")
        return ", ".join(parts) or "measure only"


def neuron_budget(
    *,
    max_device_us: float | None = None,
    max_ops: int | None = None,
    max_kernels: int | None = None,
    max_host_us: float | None = None,
    region: str | None = None,
) -> Budget:
    """Absolute budgets for the measurements of a test. Each limit is checked against every
    measurement of the test, or only the one named ``region``. Times are medians over the
    measured rounds, in µs; ops and kernels are the worst round's counts. With no limit the
    marker still makes the test always measured."""
    for name, value in (("max_ops", max_ops), ("max_kernels", max_kernels)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise BudgetError(f"{name}={value!r}: expected a whole number >= 1")
    for name, fvalue in (("max_device_us", max_device_us), ("max_host_us", max_host_us)):
        if fvalue is not None and (
            isinstance(fvalue, bool)
            or not isinstance(fvalue, int | float)
            or not math.isfinite(fvalue)
            or fvalue <= 0
        ):
            raise BudgetError(f"{name}={fvalue!r}: expected a number of microseconds > 0")
    if region is not None and (not isinstance(region, str) or not region):
        raise BudgetError(
            f"region={region!r}: expected the name of a measurement (a non-empty string)"
        )
    return Budget(max_device_us, max_ops, max_kernels, max_host_us, region)


MARKER_SIGNATURE = inspect.signature(neuron_budget)
MARKER_HELP = (
    "neuron_budget(" + ", ".join(MARKER_SIGNATURE.parameters) + "): "
    "fail the test when a measurement of the neuron_profile fixture exceeds these limits"
)


def budget_from_marker(args: Sequence[Any], kwargs: dict[str, Any], where: str) -> Budget:
    if args:
        raise BudgetError(f"{where}: neuron_budget takes keyword arguments only, got {args!r}")
    unknown = sorted(set(kwargs) - set(MARKER_SIGNATURE.parameters))
    if unknown:
        raise BudgetError(
            f"{where}: neuron_budget has no argument {', '.join(unknown)}; "
            f"known: {', '.join(MARKER_SIGNATURE.parameters)}"
        )
    try:
        return neuron_budget(**kwargs)
    except BudgetError as exc:
        raise BudgetError(f"{where}: neuron_budget {exc}") from None


@dataclass(frozen=True)
class Violation:
    region: str
    metric: str
    limit: float | None
    value: float | None
    sentence: str


def check(budget: Budget, measurements: Sequence[Measurement]) -> list[Violation]:
    if not measurements:
        return [
            Violation(
                "",
                "measured",
                None,
                None,
                "neuron_budget: the test measured nothing; call neuron_profile(fn, ...) "
                "or open neuron_profile.region(...) in it",
            )
        ]
    selected = [m for m in measurements if budget.region is None or m.region == budget.region]
    if not selected:
        names = ", ".join(repr(m.region) for m in measurements)
        return [
            Violation(
                str(budget.region),
                "region",
                None,
                None,
                f"neuron_budget: region {budget.region!r} was never measured; "
                f"the test measured {names}",
            )
        ]
    out: list[Violation] = []
    for m in selected:
        if budget.max_ops is not None and m.ops > budget.max_ops:
            out.append(
                Violation(
                    m.region,
                    "max_ops",
                    budget.max_ops,
                    m.ops,
                    f"neuron_budget: region {m.region!r} dispatched {m.ops} ops, "
                    f"budget max_ops={budget.max_ops}",
                )
            )
        if budget.max_kernels is not None and m.kernels > budget.max_kernels:
            out.append(
                Violation(
                    m.region,
                    "max_kernels",
                    budget.max_kernels,
                    m.kernels,
                    f"neuron_budget: region {m.region!r} ran {m.kernels} kernels, "
                    f"budget max_kernels={budget.max_kernels}",
                )
            )
        for metric, stats, what in (
            ("max_device_us", m.device_us, "device"),
            ("max_host_us", m.host_us, "host"),
        ):
            limit = getattr(budget, metric)
            if limit is not None and stats.median > limit:
                out.append(
                    Violation(
                        m.region,
                        metric,
                        limit,
                        stats.median,
                        f"neuron_budget: region {m.region!r} took "
                        f"{stats.median:.1f} µs of {what} time (median of "
                        f"{stats.n} rounds), budget {metric}={_fmt(limit)}",
                    )
                )
    return out


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
