"""The checks a ``neuron_budget`` marker makes on a test's measurements (marker.py parses it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..stats import CONFIDENCE, MIN_ROUNDS, Stats, median_interval
from ..words import counted
from .collectives import budget_excess
from .marker import Budget, fmt_limit
from .memory import memory_breaches

if TYPE_CHECKING:
    from ..model import Measurement


@dataclass(frozen=True)
class Violation:
    region: str
    metric: str
    limit: float | None
    value: float | None
    sentence: str


def check(
    budget: Budget, measurements: Sequence[Measurement], *, strict: bool = False
) -> list[Violation]:
    """The limits ``measurements`` break. Time limits are judged on the median's 95%
    interval (over only when its lower bound is), or with ``strict`` on the bare median."""
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
    limited = (
        bool(budget.limits())
        or budget.min_roofline_fraction is not None
        or budget.max_collectives is not None
    )
    # max_ops=0 (or max_kernels=0) says that nothing is the expected outcome.
    limited = limited and 0 not in (budget.max_ops, budget.max_kernels)
    out: list[Violation] = []
    for m in selected:
        if limited and m.ops == 0:
            out.append(_ran_nothing(budget, m))
            continue
        out.extend(_count_violations(budget, m))
        out.extend(_compile_violations(budget, m))
        out.extend(_flops_violations(budget, m))
        out.extend(_fraction_violations(budget, m))
        out.extend(_time_violations(budget, m, strict))
        out.extend(_collective_violations(budget, m))
        out.extend(_memory_violations(budget, m))
    return out


def _collective_violations(budget: Budget, m: Measurement) -> list[Violation]:
    return [
        Violation(m.region, e.metric, e.limit, e.value, e.sentence)
        for e in budget_excess(budget.max_collectives, budget.max_comm_bytes, m)
    ]


def _ran_nothing(budget: Budget, m: Measurement) -> Violation:
    # Every limit would pass on nothing: the work ran elsewhere or not at all.
    return Violation(
        m.region,
        "ops",
        None,
        0,
        f"neuron_budget: region {m.region!r} ran no op, so its budget "
        f"({budget.describe()}) checked nothing; the torch work ran outside the "
        "measurement (before the region, on data prepared earlier) or not at all "
        "(a generator, a lazy result, code that returned early)",
    )


def _count_violations(budget: Budget, m: Measurement) -> list[Violation]:
    out: list[Violation] = []
    for metric, limit, count, verb, what in (
        ("max_ops", budget.max_ops, m.ops, "dispatched", "op"),
        ("max_kernels", budget.max_kernels, m.kernels, "ran", "kernel"),
    ):
        if limit is not None and count > limit:
            out.append(
                Violation(
                    m.region,
                    metric,
                    limit,
                    count,
                    f"neuron_budget: region {m.region!r} {verb} {counted(count, what)}, "
                    f"budget {metric}={limit}",
                )
            )
    return out


# Dynamo's reasons a failure sentence names; the detail section has them all.
_REASONS_SAID = 3


def _first_reasons(reasons: list[str]) -> str:
    more = len(reasons) - _REASONS_SAID
    return "; ".join(reasons[:_REASONS_SAID]) + (f"; +{more} more" if more > 0 else "")


def _compile_violations(budget: Budget, m: Measurement) -> list[Violation]:
    out: list[Violation] = []
    for metric, limit, count, what, prefix in (
        ("max_graph_breaks", budget.max_graph_breaks, m.graph_breaks, "graph break",
         "graph break:"),
        ("max_recompiles", budget.max_recompiles, m.recompiles, "recompilation",
         "recompiled:"),
    ):  # fmt: skip
        if limit is not None and count > limit:
            reasons = [n for n in m.compile_notes if n.startswith(prefix)]
            why = _first_reasons(reasons) or "Dynamo gave no reason during this run"
            out.append(
                Violation(
                    m.region,
                    metric,
                    limit,
                    count,
                    f"neuron_budget: region {m.region!r} had {counted(count, what)}, "
                    f"budget {metric}={limit} ({why})",
                )
            )
    return out


def _time_limits(budget: Budget, m: Measurement) -> list[tuple[str, float, Stats, str]]:
    return [
        (metric, limit, stats, what)
        for metric, limit, stats, what in (
            ("max_device_us", budget.max_device_us, m.device_us, "device"),
            ("max_host_us", budget.max_host_us, m.host_us, "host"),
        )
        if limit is not None
    ]


def _time_violations(budget: Budget, m: Measurement, strict: bool) -> list[Violation]:
    """A time over its limit: with 95% confidence (the median's interval wholly above it),
    as the baseline rule judges a change; ``strict``: the bare median above it. Too few
    rounds for an interval are not judged (time_notes says so), unless strict; a cold
    with-region's one execution cannot be judged at all."""
    out: list[Violation] = []
    for metric, limit, stats, what in _time_limits(budget, m):
        if one_cold_run(m):
            sentence = (
                f"neuron_budget: region {m.region!r} has budget {metric}={fmt_limit(limit)} "
                f"but {_COLD}"
            )
            out.append(Violation(m.region, metric, limit, None, sentence))
            continue
        rounds = counted(stats.n, "round")
        taken = f"{stats.median:.1f} µs of {what} time (median of {rounds}"
        budget_text = f"budget {metric}={fmt_limit(limit)}"
        if strict:
            if stats.median > limit:
                sentence = f"took {taken}), {budget_text} (strict: the median alone)"
                out.append(_time_violation(m, metric, limit, stats.median, sentence))
            continue
        if stats.n < MIN_ROUNDS:
            continue
        median, low, high = median_interval(stats.samples)
        if low > limit:
            sentence = (
                f"took {taken}, {CONFIDENCE * 100:.0f}% CI {low:.1f}..{high:.1f} µs), "
                f"over {budget_text} with {CONFIDENCE * 100:.0f}% confidence"
            )
            out.append(_time_violation(m, metric, limit, median, sentence))
    return out


def _time_violation(
    m: Measurement, metric: str, limit: float, value: float, sentence: str
) -> Violation:
    return Violation(
        m.region, metric, limit, value, f"neuron_budget: region {m.region!r} {sentence}"
    )


def time_notes(budget: Budget, m: Measurement, *, strict: bool = False) -> list[str]:
    """The time limits that could not be judged on ``m``: too few rounds for an interval
    (a cold with-region is a violation of its own, said by _time_violations)."""
    if strict or not _times_judged(budget, m):
        return []
    return [
        f"{metric} not judged: {counted(stats.n, 'round')}, at least {MIN_ROUNDS} needed"
        for metric, _, stats, _ in _time_limits(budget, m)
        if stats.n < MIN_ROUNDS
    ]


def time_figures(budget: Budget, m: Measurement, *, strict: bool = False) -> list[str]:
    """What each time limit judged on ``m`` was judged on, for the budget's cell: the
    median and its 95% interval (the bare median when ``strict``)."""
    if not _times_judged(budget, m):
        return []
    out = []
    for metric, _, stats, _ in _time_limits(budget, m):
        if strict and stats.n:
            out.append(f"{metric}: median {stats.median:,.1f} µs (strict)")
        elif stats.n >= MIN_ROUNDS:
            median, low, high = median_interval(stats.samples)
            out.append(
                f"{metric}: median {median:,.1f} µs, "
                f"{CONFIDENCE * 100:.0f}% CI {low:,.1f}..{high:,.1f}"
            )
    return out


def _times_judged(budget: Budget, m: Measurement) -> bool:
    """Whether ``budget``'s time limits are judged on ``m`` at all: it is aimed at ``m``'s
    region and ``m`` is no cold with-region (a violation of its own)."""
    return not one_cold_run(m) and budget.region in (None, m.region)


def one_cold_run(m: Measurement) -> bool:
    """A with-region's measurement: its block ran once, cold, with no warm-up."""
    return m.rounds == 1 and m.warmup_rounds == 0 and m.first_call_us == 0 and not m.host_calls


_COLD = (
    "its time is one cold execution (a with-region runs its block once: no warm-up, no "
    "repeat), which a time budget cannot judge; measure it as neuron_profile(fn, *args), "
    "which warms up and repeats"
)
_NOT_COUNTED = (
    "its FLOPs and bytes were not counted (a with-region runs once, under the profiler); "
    "measure it as neuron_profile(fn, *args)"
)


def _flops_violations(budget: Budget, m: Measurement) -> list[Violation]:
    limit = budget.max_flops
    if limit is None:
        return []
    if m.work is None:
        sentence = (
            f"neuron_budget: region {m.region!r} has budget max_flops={limit:g} but {_NOT_COUNTED}"
        )
        return [Violation(m.region, "max_flops", limit, None, sentence)]
    if m.work.flops <= limit:
        return []
    lower = " (at least: some ops uncounted)" if m.work.uncounted else ""
    sentence = (
        f"neuron_budget: region {m.region!r} did {_flop(m.work.flops)}{lower}, "
        f"budget max_flops={limit:g}"
    )
    return [Violation(m.region, "max_flops", limit, m.work.flops, sentence)]


def _fraction_violations(budget: Budget, m: Measurement) -> list[Violation]:
    fraction = budget.min_roofline_fraction
    r = m.roofline
    if fraction is None or (r is not None and r.fraction >= fraction):
        return []
    metric = "min_roofline_fraction"
    why = _why_unjudged(m)
    if why or r is None:
        sentence = (
            f"neuron_budget: region {m.region!r} has budget {metric}={fmt_limit(fraction)} "
            f"but {why}"
        )
        return [Violation(m.region, metric, fraction, None, sentence)]
    achieved, peak, unit = (
        (r.achieved_bytes_per_s, m.peak_bytes_per_s, "B/s")
        if r.bound == "memory"
        else (r.achieved_flops_per_s, m.peak_flops_per_s, "FLOP/s")
    )
    sentence = (
        f"neuron_budget: region {m.region!r} reached {r.fraction * 100:.1f}% of its "
        f"{r.bound} bound ({achieved / 1e9:.3g} G{unit} of {peak / 1e9:.3g} G{unit}), "
        f"budget {metric}={fmt_limit(fraction)}"
    )
    return [Violation(m.region, metric, fraction, r.fraction, sentence)]


def _why_unjudged(m: Measurement) -> str:
    """Why the region's roofline fraction is unknown, or "" when it is known."""
    if m.work is None:
        return _NOT_COUNTED
    if m.peak_flops_per_s <= 0 or m.peak_bytes_per_s <= 0:
        return (
            f"no peaks are known for {m.device_kind}; add '{m.device_kind} = FLOP_PER_S, "
            "BYTES_PER_S' to neuron_profile_peaks in the ini file"
        )
    if m.roofline is None:
        return "it recorded no device time or did no counted work"
    return ""


def _flop(v: float) -> str:
    for scale, unit in ((1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:g} FLOP"


def _memory_violations(budget: Budget, m: Measurement) -> list[Violation]:
    breaches = memory_breaches(m, budget.max_peak_memory, budget.max_retained_memory)
    return [
        Violation(m.region, metric, limit, value, text) for metric, limit, value, text in breaches
    ]
