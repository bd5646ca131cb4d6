"""The ``neuron_budget`` marker: its signature, validation and the checks it makes."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..errors import NeuronPerfError
from ..settings import parse_tolerance
from .memory import MEMORY_LIMITS, memory_breaches, memory_limit, shown

if TYPE_CHECKING:
    from ..model import Measurement


class BudgetError(NeuronPerfError, ValueError):
    """A marker that cannot be honoured; raised at collection, before anything runs."""


@dataclass(frozen=True)
class Budget:
    max_device_us: float | None = None
    max_ops: int | None = None
    max_kernels: int | None = None
    max_host_us: float | None = None
    region: str | None = None
    # Allowed time regression against the stored baseline, as a fraction (0.25 = 25%).
    tolerance: float | None = None
    # torch.compile: 0 is a meaningful budget here ("no graph break").
    max_graph_breaks: int | None = None
    max_recompiles: int | None = None
    # Roofline (roofline.py): FLOPs of one call, deterministic, and the least fraction of
    # the bound that applies (compute or memory) the region must reach.
    max_flops: float | None = None
    min_roofline_fraction: float | None = None
    # Bytes (gate/memory.py): the highest level allocated above the region's start, and
    # what it leaves allocated at its end.
    max_peak_memory: int | None = None
    max_retained_memory: int | None = None

    @property
    def limits_memory(self) -> bool:
        return self.max_peak_memory is not None or self.max_retained_memory is not None

    def limits(self) -> dict[str, float]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name.startswith("max_") and getattr(self, f.name) is not None
        }

    def describe(self) -> str:
        parts = [
            f"{k}={shown(int(v)) if k in MEMORY_LIMITS else _fmt(v)}"
            for k, v in self.limits().items()
        ]
        if self.min_roofline_fraction is not None:
            parts.append(f"min_roofline_fraction={_fmt(self.min_roofline_fraction)}")
        if self.tolerance is not None:
            parts.append(f"tolerance={_fmt(round(self.tolerance * 100, 6))}%")
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
    tolerance: float | str | None = None,
    max_graph_breaks: int | None = None,
    max_recompiles: int | None = None,
    max_flops: float | None = None,
    min_roofline_fraction: float | None = None,
    max_peak_memory: int | str | None = None,
    max_retained_memory: int | str | None = None,
) -> Budget:
    """Absolute budgets for the measurements of a test. Each limit is checked against every
    measurement of the test, or only the one named ``region``. Times are medians over the
    measured rounds, in µs; ops and kernels are the worst round's counts. With no limit the
    marker still makes the test always measured. ``tolerance`` (per cent: ``25`` or
    ``"25%"``) overrides --neuron-profile-tolerance for the baseline comparison of these
    measurements. ``max_graph_breaks`` and ``max_recompiles`` (0 allowed) bound what
    torch.compile did in the region: resume frames after graph breaks in a round, and
    recompilations during warm-up and rounds. ``max_flops`` bounds the FLOPs of one call
    (counted, not timed: the same on every machine) and ``min_roofline_fraction`` (0 to 1)
    the share of the device's roofline the region must reach; both need the callable form
    ``neuron_profile(fn, ...)``, and the fraction needs the device's peaks.
    ``max_peak_memory`` bounds the highest memory allocated above the region's start and
    ``max_retained_memory`` what it leaves allocated at its end: bytes as an int, or a
    string with a unit (``"512 MiB"``; B, KB/KiB, MB/MiB, GB/GiB, all 1024-based); either
    turns memory profiling on for the measurements it applies to."""
    try:
        peak = memory_limit("max_peak_memory", max_peak_memory)
        retained = memory_limit("max_retained_memory", max_retained_memory)
    except ValueError as exc:
        raise BudgetError(str(exc)) from None
    for name, value in (("max_ops", max_ops), ("max_kernels", max_kernels)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise BudgetError(f"{name}={value!r}: expected a whole number >= 1")
    for name, value in (("max_graph_breaks", max_graph_breaks), ("max_recompiles", max_recompiles)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise BudgetError(f"{name}={value!r}: expected a whole number >= 0")
    for name, fvalue in (("max_device_us", max_device_us), ("max_host_us", max_host_us)):
        if fvalue is not None and (
            isinstance(fvalue, bool)
            or not isinstance(fvalue, int | float)
            or not math.isfinite(fvalue)
            or fvalue <= 0
        ):
            raise BudgetError(f"{name}={fvalue!r}: expected a number of microseconds > 0")
    if max_flops is not None and (
        isinstance(max_flops, bool)
        or not isinstance(max_flops, int | float)
        or not math.isfinite(max_flops)
        or max_flops <= 0
    ):
        raise BudgetError(f"max_flops={max_flops!r}: expected a number of FLOPs > 0, e.g. 1e9")
    if min_roofline_fraction is not None and (
        isinstance(min_roofline_fraction, bool)
        or not isinstance(min_roofline_fraction, int | float)
        or not 0 < min_roofline_fraction <= 1
    ):
        raise BudgetError(
            f"min_roofline_fraction={min_roofline_fraction!r}: expected a fraction > 0 and "
            "<= 1 (0.25 means a quarter of the bound that applies)"
        )
    if region is not None and (not isinstance(region, str) or not region):
        raise BudgetError(
            f"region={region!r}: expected the name of a measurement (a non-empty string)"
        )
    fraction = None
    if tolerance is not None:
        try:
            fraction = parse_tolerance(tolerance)
        except ValueError as exc:
            raise BudgetError(f"tolerance={tolerance!r}: {exc}") from None
    return Budget(
        max_device_us=max_device_us,
        max_ops=max_ops,
        max_kernels=max_kernels,
        max_host_us=max_host_us,
        region=region,
        tolerance=fraction,
        max_graph_breaks=max_graph_breaks,
        max_recompiles=max_recompiles,
        max_flops=max_flops,
        min_roofline_fraction=min_roofline_fraction,
        max_peak_memory=peak,
        max_retained_memory=retained,
    )


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
    limited = bool(budget.limits()) or budget.min_roofline_fraction is not None
    for m in selected:
        if limited and m.ops == 0:
            # Every limit would pass on nothing: the work ran elsewhere or not at all.
            out.append(
                Violation(
                    m.region,
                    "ops",
                    None,
                    0,
                    f"neuron_budget: region {m.region!r} ran no op, so its budget "
                    f"({budget.describe()}) checked nothing; the torch work ran outside the "
                    "measurement (before the region, on data prepared earlier) or not at all "
                    "(a generator, a lazy result, code that returned early)",
                )
            )
            continue
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
        for metric, count, what, prefix in (
            ("max_graph_breaks", m.graph_breaks, "graph breaks", "graph break:"),
            ("max_recompiles", m.recompiles, "recompilations", "recompiled:"),
        ):
            limit = getattr(budget, metric)
            if limit is not None and count > limit:
                reasons = [n for n in m.compile_notes if n.startswith(prefix)]
                why = "; ".join(reasons) if reasons else "Dynamo gave no reason during this run"
                out.append(
                    Violation(
                        m.region,
                        metric,
                        limit,
                        count,
                        f"neuron_budget: region {m.region!r} had {count} {what}, "
                        f"budget {metric}={limit} ({why})",
                    )
                )
        out.extend(_roofline_violations(budget, m))
        out.extend(
            Violation(m.region, metric, limit, value, sentence)
            for metric, limit, value, sentence in memory_breaches(
                m, budget.max_peak_memory, budget.max_retained_memory
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


_NOT_COUNTED = (
    "its FLOPs and bytes were not counted (a with-region runs once, under the profiler); "
    "measure it as neuron_profile(fn, *args)"
)


def _roofline_violations(budget: Budget, m: Measurement) -> list[Violation]:
    out: list[Violation] = []
    limit = budget.max_flops
    if limit is not None:
        if m.work is None:
            out.append(
                Violation(
                    m.region,
                    "max_flops",
                    limit,
                    None,
                    f"neuron_budget: region {m.region!r} has budget max_flops={limit:g} "
                    f"but {_NOT_COUNTED}",
                )
            )
        elif m.work.flops > limit:
            lower = " (at least: some ops uncounted)" if m.work.uncounted else ""
            out.append(
                Violation(
                    m.region,
                    "max_flops",
                    limit,
                    m.work.flops,
                    f"neuron_budget: region {m.region!r} did {_flop(m.work.flops)}{lower}, "
                    f"budget max_flops={limit:g}",
                )
            )
    fraction = budget.min_roofline_fraction
    if fraction is None:
        return out
    r = m.roofline
    if r is not None and r.fraction >= fraction:
        return out
    if m.work is None:
        why = _NOT_COUNTED
    elif m.peak_flops_per_s <= 0 or m.peak_bytes_per_s <= 0:
        why = (
            f"no peaks are known for {m.device_kind}; add '{m.device_kind} = FLOP_PER_S, "
            "BYTES_PER_S' to neuron_profile_peaks in the ini file"
        )
    elif r is None:
        why = "it recorded no device time or did no counted work"
    else:
        achieved, peak, unit = (
            (r.achieved_bytes_per_s, m.peak_bytes_per_s, "B/s")
            if r.bound == "memory"
            else (r.achieved_flops_per_s, m.peak_flops_per_s, "FLOP/s")
        )
        out.append(
            Violation(
                m.region,
                "min_roofline_fraction",
                fraction,
                r.fraction,
                f"neuron_budget: region {m.region!r} reached {r.fraction * 100:.1f}% of its "
                f"{r.bound} bound ({achieved / 1e9:.3g} G{unit} of {peak / 1e9:.3g} G{unit}), "
                f"budget min_roofline_fraction={_fmt(fraction)}",
            )
        )
        return out
    out.append(
        Violation(
            m.region,
            "min_roofline_fraction",
            fraction,
            None,
            f"neuron_budget: region {m.region!r} has budget min_roofline_fraction="
            f"{_fmt(fraction)} but {why}",
        )
    )
    return out


def _flop(v: float) -> str:
    for scale, unit in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:g} FLOP"


def tolerance_for(budgets: Sequence[Budget], region: str, default: float) -> float:
    """The marker's tolerance for ``region``: one naming the region wins over one that
    names none; without either, the session's setting."""
    for wanted in (region, None):
        for b in budgets:
            if b.region == wanted and b.tolerance is not None:
                return b.tolerance
    return default


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
