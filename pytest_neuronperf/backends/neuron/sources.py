"""Two sources of Neuron device time -> one figure per round, with notes, or a loud error.

The backfill (``key_averages()``'s device columns, events) is the device time
wherever it is there: it is the figure the tutorial's table shows, per op. The runtime trace
(``nc_exec_running`` executions in each round's host window, runtime) is reported
beside it, and is the device time where the backfill is absent. A region that dispatched
ops but has device time from neither is an error, never 0 µs. Pure functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import median

from ...trace.analysis import AnalysisError, RoundResult
from .config import PAIRING
from .events import BackfillRound
from .runtime import RoundExecutions, models_differ

# The two sources measure the same executions from two ends (the op's backfilled device
# time, the runtime's execution span); beyond this relative gap the report says so.
MARGIN = 0.10
RAISE_EVENTS = (
    "raise max_events_per_nc (--neuron-profile-neuron-config='max_events_per_nc=N'; "
    "the runtime's default keeps 1,000,000 events per NeuronCore)"
)


class NeuronDeviceTimeError(AnalysisError):
    """A Neuron region's device time cannot be known, or its two sources contradict the
    rounds; the message says what was tried and the likely causes."""


@dataclass(frozen=True)
class Tried:
    """What this session did to get device time, for notes and errors."""

    backfill_passed: bool  # correlate_device_time=True went into NeuronConfig
    runtime: str  # "on (...)" or "off: why" (neuron_config.RuntimePlan.reason)


@dataclass(frozen=True)
class RoundSources:
    """One round's figure from each source, for the report and verify_neuron.py."""

    backfill_us: float
    runtime_us: float | None
    executions: int | None
    models: dict[str, int]


@dataclass(frozen=True)
class Combined:
    rounds: list[RoundResult]
    notes: tuple[str, ...]
    source: str  # "backfill", "runtime trace" or "none" (no ops dispatched)
    per_round: tuple[RoundSources, ...]


def _us(v: float) -> str:
    return f"{v:,.1f}"


def agreement(backfill_us: float, runtime_us: float, margin: float = MARGIN) -> tuple[bool, float]:
    """(within the margin, relative gap against the larger figure)."""
    top = max(backfill_us, runtime_us)
    gap = abs(backfill_us - runtime_us) / top if top > 0 else 0.0
    return gap <= margin, gap


def combine(
    region: str,
    backfill: Sequence[BackfillRound],
    runtime: Sequence[RoundExecutions] | None,
    tried: Tried,
    labels: Sequence[str] | None = None,
    runtime_failure: str = "",
) -> Combined:
    """The rounds of one region with their device time chosen; ``runtime`` is None when the
    runtime trace was not read (``runtime_failure`` then says why, if it was attempted)."""
    labels = list(labels or [f"round {i}" for i in range(len(backfill))])
    if runtime is not None:
        differ = models_differ(runtime, labels)
        if differ:
            raise NeuronDeviceTimeError(f"neuron: region {region!r}: {differ}")
    per_round = tuple(
        RoundSources(
            b.result.device_us,
            r.device_us if r is not None else None,
            len(r.executions) if r is not None else None,
            dict(r.models) if r is not None else {},
        )
        for b, r in zip(backfill, _or_none(runtime, len(backfill)), strict=True)
    )
    results = [b.result for b in backfill]
    dispatched = [b for b in backfill if b.dispatched]
    if not dispatched:
        return Combined(results, (), "none", per_round)
    if all(b.result.device_us > 0 for b in dispatched):
        notes = _backfill_notes(backfill, runtime, tried, runtime_failure)
        return Combined(results, notes, "backfill", per_round)
    if runtime is not None and all(
        r.executions for b, r in zip(backfill, runtime, strict=True) if b.dispatched
    ):
        rounds = [_from_runtime(b.result, r) for b, r in zip(backfill, runtime, strict=True)]
        return Combined(rounds, _runtime_notes(runtime, tried), "runtime trace", per_round)
    raise NeuronDeviceTimeError(
        _no_device_time(region, backfill, runtime, tried, labels, runtime_failure)
    )


def _or_none(runtime: Sequence[RoundExecutions] | None, n: int) -> Sequence[RoundExecutions | None]:
    return runtime if runtime is not None else [None] * n


def _from_runtime(result: RoundResult, r: RoundExecutions) -> RoundResult:
    # Executions are the round's kernels; they carry no op, so per-op device time stays 0.
    return replace(
        result,
        kernels=[e.model for e in r.executions],
        device_us=r.device_us,
        launch_gaps_us=[],
    )


def _models(runtime: Sequence[RoundExecutions]) -> str:
    models: Counter[str] = Counter()
    for r in runtime:
        models.update(r.models)
    n = max(len(runtime), 1)
    return ", ".join(f"{m} ×{c / n:g}" for m, c in sorted(models.items())) or "none"


def _backfill_notes(
    backfill: Sequence[BackfillRound],
    runtime: Sequence[RoundExecutions] | None,
    tried: Tried,
    runtime_failure: str,
) -> tuple[str, ...]:
    bf = median([b.result.device_us for b in backfill])
    notes = [
        f"device time: the key_averages() backfill (correlate_device_time) of the region's "
        f"ops, median {_us(bf)} µs"
    ]
    if runtime is None:
        why = runtime_failure or tried.runtime
        notes.append(f"runtime trace: not read ({why})")
        return tuple(notes)
    if not any(r.executions for r in runtime):
        notes.append(
            "runtime trace disagrees: no nc_exec_running execution in any round's window "
            f"while the backfill shows {_us(bf)} µs (runtime events dropped? {RAISE_EVENTS})"
        )
        return tuple(notes)
    rt = median([r.device_us for r in runtime])
    execs = median([len(r.executions) for r in runtime])
    ok, gap = agreement(bf, rt)
    verdict = (
        f"agrees with the backfill within {MARGIN:.0%}"
        if ok
        else f"DISAGREES with the backfill by {gap:.0%} (beyond the {MARGIN:.0%} margin)"
    )
    notes.append(
        f"runtime trace (nc_exec_running): median {_us(rt)} µs over {execs:g} executions a "
        f"round ({_models(runtime)}): {verdict}"
    )
    return tuple(notes)


def _runtime_notes(runtime: Sequence[RoundExecutions], tried: Tried) -> tuple[str, ...]:
    why = (
        "correlate_device_time was passed, yet the ops carry no device time"
        if tried.backfill_passed
        else "this torch-neuronx's NeuronConfig does not accept correlate_device_time"
    )
    rt = median([r.device_us for r in runtime])
    return (
        f"device time: the Neuron Runtime trace (nc_exec_running executions in each round's "
        f"host window), median {_us(rt)} µs; key_averages() has no backfilled device time "
        f"({why}), so per-op device time is not known",
        f"device executions a round: {_models(runtime)}",
    )


def _no_device_time(
    region: str,
    backfill: Sequence[BackfillRound],
    runtime: Sequence[RoundExecutions] | None,
    tried: Tried,
    labels: Sequence[str],
    runtime_failure: str,
) -> str:
    empty = [
        label
        for b, label in zip(backfill, labels, strict=True)
        if b.dispatched and b.result.device_us <= 0
    ]
    ops = Counter(name for b in backfill[:1] for name in b.result.ops)
    op_text = ", ".join(f"{n} ×{c}" for n, c in ops.most_common(8))
    backfill_text = (
        "NeuronConfig(correlate_device_time=True) was passed, yet key_averages() shows no "
        f"device time for the ops of {', '.join(empty[:3])}"
        if tried.backfill_passed
        else "this torch-neuronx's NeuronConfig does not accept correlate_device_time"
    )
    if runtime is None:
        runtime_text = f"not read ({runtime_failure or tried.runtime})"
    else:
        none = [
            label
            for b, r, label in zip(backfill, runtime, labels, strict=True)
            if b.dispatched and not r.executions
        ]
        runtime_text = f"no nc_exec_running execution in the host window of {', '.join(none[:3])}"
    return (
        f"neuron: region {region!r} dispatched ops ({op_text}) but has no device time from "
        f"either source. Tried: (1) the key_averages() backfill: {backfill_text}; (2) the "
        f"Neuron Runtime trace: {runtime_text}. Likely causes: torch-neuronx too old for "
        f"correlate_device_time (the documented native pairing is {PAIRING}); runtime "
        f"events dropped ({RAISE_EVENTS}); CPU fallback (the ops ran on the host: inputs "
        "not on the 'neuron' device, or ops without a Neuron kernel, seen as aten::to / "
        "_to_copy / copy_ around them). A region meant for the host is measured with "
        "--neuron-profile-backend=cpu"
    )
