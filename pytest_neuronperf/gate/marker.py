"""The ``neuron_budget`` marker: its signature and validation, loaded at collection.
The checks it makes are in budget.py."""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..errors import NeuronPerfError
from ..settings import parse_tolerance
from .collectives import PerKind, describe_limit, parse_max_collectives, parse_max_comm_bytes
from .memory import MEMORY_LIMITS, memory_limit, shown


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
    # Distributed regions (gate/collectives.py): calls of every collective together or
    # per name, and the bytes of their input messages.
    max_collectives: int | PerKind | None = None
    max_comm_bytes: float | None = None

    @property
    def limits_memory(self) -> bool:
        return self.max_peak_memory is not None or self.max_retained_memory is not None

    def limits(self) -> dict[str, float]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name.startswith("max_") and isinstance(getattr(self, f.name), int | float)
        }

    def describe(self) -> str:
        parts = [
            f"{k}={shown(int(v)) if k in MEMORY_LIMITS else fmt_limit(v)}"
            for k, v in self.limits().items()
        ]
        if self.max_collectives is not None and not isinstance(self.max_collectives, int):
            parts.append(f"max_collectives={describe_limit(self.max_collectives)}")
        if self.min_roofline_fraction is not None:
            parts.append(f"min_roofline_fraction={fmt_limit(self.min_roofline_fraction)}")
        if self.tolerance is not None:
            parts.append(f"tolerance={fmt_limit(round(self.tolerance * 100, 6))}%")
        if self.region is not None:
            parts.append(f"region={self.region!r}")
        return ", ".join(parts) or "measure only"


def _unknown_names(unknown: list[str]) -> str:
    """The unknown names, each with the known argument it is close to, if one is:
    ``max_op (did you mean max_ops?)``."""
    known = list(MARKER_SIGNATURE.parameters)
    said = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        said.append(f"{name} (did you mean {close[0]}?)" if close else name)
    return ", ".join(said)


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
    max_collectives: int | dict[str, int] | None = None,
    max_comm_bytes: float | None = None,
) -> Budget:
    """Absolute budgets for the measurements of a test. Each limit is checked against every
    measurement of the test, or only the one named ``region``; every count limit may be 0.
    Times are medians over the measured rounds, in µs; ops and kernels are the worst
    round's counts. With no limit the
    marker still makes the test always measured. ``tolerance`` (per cent: ``25`` or
    ``"25%"``) overrides --neuron-profile-tolerance for the baseline comparison of these
    measurements. ``max_graph_breaks`` and ``max_recompiles`` bound what
    torch.compile did in the region: resume frames after graph breaks in a round, and
    recompilations during warm-up and rounds. ``max_flops`` bounds the FLOPs of one call
    (counted, not timed: the same on every machine) and ``min_roofline_fraction`` (0 to 1)
    the share of the device's roofline the region must reach; both need the callable form
    ``neuron_profile(fn, ...)``, and the fraction needs the device's peaks.
    ``max_collectives`` (0 allowed; a number, or per name: ``{"all_gather": 2}``) bounds the
    collective calls of a distributed region's worst round, ``max_comm_bytes`` the bytes of
    their input messages (docs/distributed.md).
    ``max_peak_memory`` bounds the highest memory allocated above the region's start and
    ``max_retained_memory`` what it leaves allocated at its end: bytes as an int, or a
    string with a unit (``"512 MiB"``; B, KB/KiB, MB/MiB, GB/GiB, all 1024-based); either
    turns memory profiling on for the measurements it applies to."""
    try:
        peak = memory_limit("max_peak_memory", max_peak_memory)
        retained = memory_limit("max_retained_memory", max_retained_memory)
    except ValueError as exc:
        raise BudgetError(str(exc)) from None
    # 0 is a real count budget: "this path dispatches nothing" (a cache hit, a view).
    for name, value in (
        ("max_ops", max_ops),
        ("max_kernels", max_kernels),
        ("max_graph_breaks", max_graph_breaks),
        ("max_recompiles", max_recompiles),
    ):
        _whole(name, value, least=0)
    for name, fvalue in (("max_device_us", max_device_us), ("max_host_us", max_host_us)):
        _positive(name, fvalue, "a number of microseconds > 0")
    _positive("max_flops", max_flops, "a number of FLOPs > 0, e.g. 1e9")
    if min_roofline_fraction is not None and (
        not _is_number(min_roofline_fraction) or not 0 < min_roofline_fraction <= 1
    ):
        raise BudgetError(
            f"min_roofline_fraction={min_roofline_fraction!r}: expected a fraction > 0 and "
            "<= 1 (0.25 means a quarter of the bound that applies)"
        )
    if region is not None and (not isinstance(region, str) or not region):
        raise BudgetError(
            f"region={region!r}: expected the name of a measurement (a non-empty string)"
        )
    try:
        collectives = parse_max_collectives(max_collectives)
        comm_bytes = parse_max_comm_bytes(max_comm_bytes)
    except ValueError as exc:
        raise BudgetError(str(exc)) from None
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
        max_collectives=collectives,
        max_comm_bytes=comm_bytes,
    )


def _is_number(value: object) -> bool:
    # bool is an int to Python, never a limit to a reader.
    return not isinstance(value, bool) and isinstance(value, int | float)


# Limits are compared and printed as floats: a larger count is not held exactly.
_MOST = 2**53


def _whole(name: str, value: object, *, least: int) -> None:
    if value is not None and (
        not _is_number(value) or not isinstance(value, int) or not least <= value <= _MOST
    ):
        raise BudgetError(
            f"{name}={_shown(value)}: expected a whole number >= {least} and at most 2**53"
        )


def _positive(name: str, value: object, expected: str) -> None:
    if value is not None and (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not value < 1e300  # also NaN; before isfinite, which overflows on 10**400
        or not math.isfinite(value)
        or value <= 0
    ):
        raise BudgetError(f"{name}={_shown(value)}: expected {expected}, at most 1e300")


def _shown(value: object) -> str:
    # repr of 10**400 is 401 digits: a limit that size is shown by its magnitude.
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**20:
        return f"an integer of {len(str(abs(value)))} digits"
    return repr(value)


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
            f"{where}: neuron_budget has no argument {_unknown_names(unknown)}; "
            f"known: {', '.join(MARKER_SIGNATURE.parameters)}"
        )
    try:
        return neuron_budget(**kwargs)
    except BudgetError as exc:
        raise BudgetError(f"{where}: neuron_budget {exc}") from None


def tolerance_for(budgets: Sequence[Budget], region: str, default: float) -> float:
    """The marker's tolerance for ``region``; without one, the session's setting."""
    own = marker_tolerance(budgets, region)
    return default if own is None else own


def marker_tolerance(budgets: Sequence[Budget], region: str) -> float | None:
    """The tolerance a marker set for ``region``: one naming the region wins over one that
    names none; None without either."""
    for wanted in (region, None):
        for b in budgets:
            if b.region == wanted and b.tolerance is not None:
                return b.tolerance
    return None


def fmt_limit(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
