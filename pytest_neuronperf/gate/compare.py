"""One measurement against its baseline entry: exact for counts, statistical for times.
Pure: no pytest, no I/O. The verdict carries the sentences that fail the test."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..baselines.entry import Entry
from ..measure.reference import against_reference
from ..measure.threads import THREADS_KEY
from ..measure.window import STOP_SHARE, WINDOW_KEY, HostSamples
from ..model import APART_NOTE, BaselineStatus, Measurement, TimeJudged
from ..model import NOT_COMPARABLE_NOTE as NOT_COMPARABLE_NOTE
from ..stats import Stats, TimeChange, compare_times
from ..trace.summary import op_diff_text
from .collectives import compare_collectives
from .memory import compare_memory
from .spread import Offsets, held_back, offsets
from .ticks import (
    COMPUTE,
    DISPATCH,
    LONG,
    MEMORY,
    agreed,
    judging_kinds,
    kinds_against,
    relative_changes,
    relatives_of,
    tick_offsets,
)

NOT_COMPARABLE = BaselineStatus.NOT_COMPARABLE
_PREFIX = "neuronperf baseline"


@dataclass(frozen=True)
class Comparison:
    # not comparable: the entry was recorded another way (threads, window), never a failure.
    status: BaselineStatus
    failures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    device: TimeChange | None = None
    host: TimeChange | None = None
    # True when --neuron-profile-update should rewrite the entry. A "same" entry is kept
    # byte for byte, so a review diff shows only what moved.
    needs_write: bool = True
    # The time the verdict rests on: device_us, or host_us on host-timed backends.
    gated: str = "device_us"
    # What a reader needs to reconcile the verdict: the entry's counts and the gated time.
    baseline_ops: int | None = None
    baseline_kernels: int | None = None
    judged: TimeJudged | None = None
    # The reference ticks that judged host time (gate/ticks.py), each with the change
    # against it, in the order the log names them; empty where host time was judged raw.
    references: tuple[tuple[str, TimeChange], ...] = ()

    def cell(self) -> str:
        """The report table's baseline column."""
        change = self.host if self.gated == "host_us" else self.device
        if change is None or change.verdict == "unjudged":
            # Too few rounds to judge time (see stats.MIN_ROUNDS): counts only.
            return self.status
        if change.verdict == "same" and too_wide(change):
            # "same +53300%" reads as a contradiction: the data could not tell.
            judged = "not judged" if self.status == "same" else f"{self.status}, not judged"
            return (
                f"{judged} (interval {change.percent(change.low)}..{change.percent(change.high)})"
            )
        return f"{self.status} {change.percent()}"


def too_wide(c: TimeChange) -> bool:
    """An interval too wide to judge: it holds no change at all, yet its point estimate lies
    beyond the tolerance ("same +53300%"). A narrow interval at the band's edge (-19..-8%
    at 10%) was judged: not credibly beyond the tolerance, and keeps its figure."""
    up, down = 1 + c.tolerance, 1 / (1 + c.tolerance)
    return not down <= c.ratio <= up and c.low <= 1 <= c.high


def _recorded_otherwise(entry: Entry, m: Measurement, key: str) -> str:
    """How the entry was recorded differently from this measurement for ``key``, or "".
    A measurement without the key (a device backend, a with-region) is not held to it."""
    now = m.environment.get(key)
    then = entry.environment.get(key)
    if now is None or then == now:
        return ""
    return f"recorded with {_setting(key, then)}, now {_setting(key, now)}"


def _setting(key: str, value: str | None) -> str:
    if key == THREADS_KEY:
        if value is None:
            return "an unknown thread count (an entry from before it was stored)"
        return f"{value} thread{'' if value == '1' else 's'}"
    if value is None:
        return "an unknown window (an entry from before it was stored)"
    try:
        seconds = float(value)
    except ValueError:
        return f"window {value!r}"
    return "no window (one call per round)" if seconds == 0 else f"a {value} s window"


@dataclass
class _Findings:
    """The sentences a comparison gathers: failures, improvements, and what only informs."""

    fails: list[str] = field(default_factory=list)
    gains: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def moved(self, sentence: str, better: bool, improved_suffix: str) -> None:
        """File a sentence about a metric that moved: a failure, or a gain to keep."""
        if better:
            self.gains.append(sentence + improved_suffix)
        else:
            self.fails.append(sentence)


_KEEP = ": improved, run --neuron-profile-update to keep it"


def compare(
    entry: Entry | None,
    m: Measurement,
    *,
    tolerance: float,
    compare_host: bool = False,
    strict: bool = False,
    where: str = "the baseline file",
    use_reference: bool = True,
    host_timed: bool = False,
) -> Comparison:
    """``tolerance`` is a fraction (0.10 = 10%). ``where`` names the file in messages.
    With ``use_reference``, times are judged as multiples of the reference workload timed
    beside each round (reference.py) where both sides have it. ``host_timed`` backends (cpu)
    gate host_us in place of device_us: there the device is the host, and the profiled op
    times vary several times more between runs than the unprofiled window (window.py)."""
    gated = "host_us" if host_timed else "device_us"
    if entry is None:
        return replace(_no_entry(m, strict, where), gated=gated)
    threads = _recorded_otherwise(entry, m, THREADS_KEY)
    if threads:
        # The kernel count and every time depend on the thread count: nothing is judged.
        return Comparison(NOT_COMPARABLE, notes=(NOT_COMPARABLE_NOTE + threads,), gated=gated)
    # The window decides how host time was sampled: counts are still judged, host time not.
    window = _recorded_otherwise(entry, m, WINDOW_KEY)
    found = _Findings()
    _judge_counts(entry, m, found)
    comms = compare_collectives(entry.collectives, entry.world_size, m)
    found.fails.extend(comms.fails)
    found.gains.extend(comms.gains)
    found.notes.extend(comms.notes)
    _judge_work(entry, m, found)
    _judge_memory(entry, m, found)
    then_torch, now_torch = entry.environment.get("torch"), m.environment.get("torch")
    by_reference = judged_by_reference(entry, now_torch, use_reference)
    judged = {"device_us": not host_timed, "host_us": (compare_host or host_timed) and not window}
    times = _judge_times(entry, m, found, tolerance, by_reference, judged)
    if then_torch and now_torch and then_torch != now_torch:
        found.notes.append(f"{_PREFIX}: recorded with torch {then_torch}, now {now_torch}")
    if window and (compare_host or host_timed):
        found.notes.append(NOT_COMPARABLE_NOTE + f"host time {window}")
    status = _status(
        entry, m, found, unjudged_gate=bool(window) and host_timed, comms_changed=comms.changed
    )
    return Comparison(
        status,
        tuple(found.fails),
        tuple(found.gains + found.notes),
        times.changes.get("device_us"),
        times.changes.get("host_us"),
        _needs_write(entry, m, status),
        gated,
        entry.ops,
        entry.kernels,
        _judged(entry, m, times, gated, by_reference),
        times.references,
    )


def judged_by_reference(entry: Entry, torch_now: str | None, use_reference: bool) -> bool:
    """Whether times against ``entry`` are judged as multiples of the reference workload:
    another torch may run the reference itself faster or slower, so raw times then."""
    return use_reference and entry.environment.get("torch") == torch_now


def _judged(
    entry: Entry, m: Measurement, times: _Times, metric: str, by_reference: bool
) -> TimeJudged | None:
    """The gated time's verdict with the medians as measured, what the references moved
    and the change against them, for a reader to reconcile (reports/change.py)."""
    c = times.changes.get(metric)
    if c is None:
        return None
    against = times.scaled.get(metric) or c
    host = metric == "host_us"
    then, now = (entry.host_us, m.host_us) if host else (entry.device_us, m.device_us)
    then_ref, now_ref = (
        _host_references(entry, m) if host else (entry.device_reference_us, m.device_reference_us)
    )
    refs = None
    if by_reference and then_ref is not None and now_ref is not None and then_ref.median > 0:
        refs = now_ref.median / then_ref.median
    return TimeJudged(
        metric,
        then.median,
        now.median,
        against.ratio,
        refs,
        c.verdict,
        c.tolerance,
        against.verdict if against.verdict != c.verdict else "",
    )


def _no_entry(m: Measurement, strict: bool, where: str) -> Comparison:
    failures: tuple[str, ...] = ()
    if strict:
        failures = (
            f"{_PREFIX}: region {m.region!r} has no baseline in {where} and "
            "--neuron-profile-strict is on; record it with "
            "pytest --neuron-profile --neuron-profile-update",
        )
    return Comparison(BaselineStatus.NEW, failures)


def _judge_counts(entry: Entry, m: Measurement, found: _Findings) -> None:
    """Ops and kernels, exact: more fails, fewer is a gain, the same number of other ops
    is a note."""
    for what, verb, now, then, now_counts, then_counts in (
        ("ops", "dispatched", m.ops, entry.ops, m.op_counts, entry.op_counts),
        ("kernels", "ran", m.kernels, entry.kernels, m.kernel_counts, entry.kernel_counts),
    ):
        sentence = (
            f"{_PREFIX}: region {m.region!r} {verb} {now} {what}, baseline {then} "
            f"({op_diff_text(then_counts, now_counts)})"
        )
        if now != then:
            found.moved(sentence, now < then, _KEEP)
        elif dict(now_counts) != dict(then_counts):
            found.notes.append(sentence)


def _judge_work(entry: Entry, m: Measurement, found: _Findings) -> None:
    """FLOPs and bytes moved, exact, where both sides counted them."""
    if m.work is None:
        return
    for verb, what, now_work, then_work in (
        ("did", "FLOPs", m.work.flops, entry.flops),
        ("moved", "bytes", m.work.bytes_moved, entry.bytes_moved),
    ):
        if then_work is None or now_work == then_work:
            continue
        sentence = (
            f"{_PREFIX}: region {m.region!r} {verb} {now_work:,} {what}, baseline {then_work:,}"
        )
        found.moved(sentence, now_work < then_work, _KEEP)


@dataclass(frozen=True)
class _Times:
    """The time verdicts by metric; the change against the references alone, by metric
    (None: judged raw); the reference ticks host time was judged against, each with its
    change."""

    changes: dict[str, TimeChange]
    scaled: dict[str, TimeChange | None]
    references: tuple[tuple[str, TimeChange], ...]


def _judge_times(
    entry: Entry,
    m: Measurement,
    found: _Findings,
    tolerance: float,
    by_reference: bool,
    judged: dict[str, bool],
) -> _Times:
    """The time verdicts, statistical, for the metrics ``judged`` names: against the
    references where both sides have them, overruled by raw rounds that show the other way
    (with_raw)."""
    changes: dict[str, TimeChange] = {}
    against: dict[str, TimeChange | None] = {}
    references: list[tuple[str, TimeChange]] = []
    for metric, then_t, now_t, then_ref, now_ref in (
        ("device_us", entry.device_us, m.device_us, entry.device_reference_us,
         m.device_reference_us),
        ("host_us", entry.host_us, m.host_us, *_host_references(entry, m)),
    ):  # fmt: skip
        if not judged[metric]:
            # Nothing reads a time that is not judged: no bootstrap for it.
            continue
        b, c, refs = _paired(then_t, now_t, then_ref, now_ref, by_reference)
        # The window's rounds in reference units, where both sides have them, decide; the
        # raw rounds are judged only where they do not, and can overrule them (with_raw).
        if metric == "host_us" and by_reference:
            kinds = judging_kinds(entry, m)
            references = relative_changes(entry, relatives_of(m), tolerance, kinds)
        relative = agreed(references) if metric == "host_us" else None
        scaled = relative
        if scaled is None and refs is not None:
            scaled = compare_times(b, c, tolerance)
        # The raw rounds are bootstrapped only where they decide: judged raw, or a change
        # they may overrule.
        if scaled is None:
            change = compare_times(then_t.samples, now_t.samples, tolerance)
        elif scaled.verdict in ("regressed", "improved"):
            change = with_raw(compare_times(then_t.samples, now_t.samples, tolerance), scaled)
        else:
            change = scaled
        # The processes' offsets are read only for a change that may be held back.
        apart = (
            held_back(change, _parts(entry, change, references if relative else [], b))
            if change.verdict in ("regressed", "improved")
            else []
        )
        if apart:
            found.notes.append(_apart_sentence(repr(m.region), metric, change, apart, entry))
            change = replace(change, verdict="same")
        changes[metric] = change
        against[metric] = scaled
        long_only = metric == "host_us" and [k for k, _ in references] == [LONG]
        text = _time_sentence(
            repr(m.region), metric, change, then_t, now_t, refs, len(references), long_only
        )
        if change.verdict in ("regressed", "improved"):
            found.moved(
                text, change.verdict == "improved", "; run --neuron-profile-update to keep it"
            )
    return _Times(changes, against, tuple(references))


def _parts(
    entry: Entry,
    change: TimeChange,
    references: list[tuple[str, TimeChange]],
    rounds: list[float] | tuple[float, ...],
) -> list[tuple[str, TimeChange, Offsets]]:
    """What ``change`` rests on, each with its recording processes' offsets: the ticks that
    judged it, else the rounds it was judged on (raw, or against one reference)."""
    if references:
        return [(k, c, tick_offsets(entry, k)) for k, c in references]
    return [("", change, offsets(rounds, entry.processes))]


def _apart_sentence(
    region: str, metric: str, c: TimeChange, apart: list[tuple[str, Offsets]], entry: Entry
) -> str:
    """Why a change past the tolerance was judged the same: its recording processes."""
    spreads = " and ".join(o.text() + (f" (against the {k} tick)" if k else "") for k, o in apart)
    word = "slower" if c.verdict == "regressed" else "faster"
    return (
        f"{APART_NOTE}region {region} {metric} {c.percent()} ({word}) is judged the same: "
        f"the baseline's {entry.processes} recording processes ran {spreads} from their "
        "pooled median, and a change counts only past the tolerance "
        f"({c.tolerance * 100:g}%) beyond that; record it again over more processes, on a "
        "quieter machine, to gate it closer"
    )


def _host_references(entry: Entry, m: Measurement) -> tuple[Stats | None, Stats | None]:
    """The tick a host-time verdict's reference figures are read from: the millisecond one
    where it alone judges the region, else the memory tick, which judges every other."""
    if judging_kinds(entry, m) == (LONG,):
        return entry.long_reference_us, m.long_reference_us
    return entry.reference_us, m.reference_us


def with_raw(raw: TimeChange, scaled: TimeChange) -> TimeChange:
    """The verdict against the references, unless the raw rounds show the other way with
    confidence: a region whose raw interval lies wholly below no change is never regressed,
    nor one wholly above it improved. The references allow for the machine's speed; they
    do not turn a measured change around (docs/gate-quality.md, with the figures)."""
    if (scaled.verdict == "regressed" and raw.high < 1) or (
        scaled.verdict == "improved" and raw.low > 1
    ):
        return replace(scaled, verdict="same")
    return scaled


def _status(
    entry: Entry,
    m: Measurement,
    found: _Findings,
    *,
    unjudged_gate: bool,
    comms_changed: bool = False,
) -> BaselineStatus:
    if found.fails:
        return BaselineStatus.REGRESSED
    if found.gains:
        return BaselineStatus.IMPROVED
    if m.op_counts != entry.op_counts or m.kernel_counts != entry.kernel_counts or comms_changed:
        return BaselineStatus.CHANGED
    if unjudged_gate:
        # Counts held, and the time the verdict rests on could not be judged.
        return NOT_COMPARABLE
    return BaselineStatus.SAME


def _judge_memory(entry: Entry, m: Measurement, found: _Findings) -> None:
    """Peak and retained bytes: exact on CPU, like the counts (gate/memory.py)."""
    fails, gains, notes = compare_memory(entry.memory, m)
    found.fails += fails
    found.gains += gains
    found.notes += notes


def _needs_write(entry: Entry, m: Measurement, status: BaselineStatus) -> bool:
    return (
        status != BaselineStatus.SAME
        or entry.environment != m.environment
        or entry.rounds != m.rounds
        # An entry from before FLOPs were counted gains them, so the exact gate applies.
        or (m.work is not None and entry.flops is None)
        # Memory profiled now: the entry keeps it (and later runs profile it).
        or (m.memory is not None and entry.memory != m.memory)
        # Likewise an entry from before the window gains the figures the cpu gate judges.
        or (m.host_relative is not None and entry.host_relative is None)
        or (m.host_relative_dispatch is not None and entry.host_relative_dispatch is None)
        or (m.host_relative_compute is not None and entry.host_relative_compute is None)
        or (m.host_relative_long is not None and entry.host_relative_long is None)
    )


_Refs = tuple[Stats, Stats] | None


def _paired(
    then: Stats,
    now: Stats,
    then_ref: Stats | None,
    now_ref: Stats | None,
    by_reference: bool,
) -> tuple[list[float] | tuple[float, ...], list[float] | tuple[float, ...], _Refs]:
    """The rounds a time verdict compares: as multiples of their reference where both sides
    were timed beside one (the references returned then), else raw."""
    if by_reference and then_ref is not None and now_ref is not None:
        # At the baseline's machine speed, so that medians read as µs.
        scale = then_ref.median
        b = against_reference(then.samples, then_ref.samples, scale)
        c = against_reference(now.samples, now_ref.samples, scale)
        if b is not None and c is not None:
            return b, c, (then_ref, now_ref)
    return then.samples, now.samples, None


def window_settled(
    entry: Entry, s: HostSamples, *, tolerance: float, by_reference: bool
) -> str | None:
    """Whether the rounds a host window has sampled so far already settle its verdict
    against ``entry``, judged as compare() judges host time; why, or None to sample on.

    Settled: time cannot be judged (too few rounds); the interval against some tick lies
    inside the tolerance band by a margin (STOP_SHARE of the tolerance) on both sides, or
    one tick's lies below the upper edge and another's above the lower one by that margin,
    so the rule that the ticks must agree cannot call a change; or every tick's interval is
    wholly past one edge (a regression then gets its second look, sampled whole)."""
    parts: list[tuple[str, TimeChange]] = []
    if by_reference:
        now = {
            MEMORY: _stats_or_none(s.relative),
            DISPATCH: _stats_or_none(s.relative_dispatch),
            COMPUTE: _stats_or_none(s.relative_compute),
            LONG: _stats_or_none(s.relative_long),
        }
        kinds = kinds_against(entry, None, now_long=bool(s.relative_long))
        parts = relative_changes(entry, now, tolerance, kinds)
    if not parts:
        now_ref = _stats_or_none(s.reference_us)
        then, now_us, _ = _paired(
            entry.host_us, Stats.of(s.host_us), entry.reference_us, now_ref, by_reference
        )
        parts = [("", compare_times(then, now_us, tolerance))]
    if any(c.verdict == "unjudged" for _, c in parts):
        return "too few rounds for time to be judged"
    margin = 1 + tolerance * STOP_SHARE
    up, down = 1 + tolerance, 1 / (1 + tolerance)
    for kind, c in parts:
        if c.low >= down * margin and c.high <= up / margin:
            return f"host time inside the tolerance{_against(kind)} ({c.percent()}, {c.interval()})"
    # A change needs every tick: one tick that cannot show a regression and one that cannot
    # show an improvement settle it as surely as one tick that can show neither.
    no_rise = next(((k, c) for k, c in parts if c.high <= up / margin), None)
    no_fall = next(((k, c) for k, c in parts if c.low >= down * margin), None)
    if no_rise is not None and no_fall is not None:
        return (
            f"host time can be neither regressed{_against(no_rise[0])} "
            f"({no_rise[1].interval()}) nor improved{_against(no_fall[0])} "
            f"({no_fall[1].interval()})"
        )
    for verdict in ("regressed", "improved"):
        if all(c.verdict == verdict for _, c in parts):
            shown = ", ".join(f"{kind or 'raw'} {c.percent()}" for kind, c in parts)
            return f"host time {verdict} ({shown})"
    return None


def _against(kind: str) -> str:
    return f" against the {kind} tick" if kind else ""


def _stats_or_none(samples: list[float]) -> Stats | None:
    return Stats.of(samples) if samples else None


def _time_sentence(
    region: str,
    metric: str,
    c: TimeChange,
    then: Stats,
    now: Stats,
    refs: _Refs,
    ticks: int,
    long_only: bool = False,
) -> str:
    """``long_only``: the millisecond tick alone judged host time."""
    word = {"regressed": "regressed", "improved": "improved"}.get(c.verdict, "changed")
    measured = f"median {now.median:,.1f} vs {then.median:,.1f} µs"
    against = ""
    if refs is not None:
        # The change is the one left after allowing for the machine's speed; the medians
        # are as measured, so a reader sees both.
        against = f" against the {'millisecond ' if long_only else ''}reference workload"
        measured += f" as measured, reference {refs[1].median:,.1f} vs {refs[0].median:,.1f} µs"
    if c.reason and c.verdict != "unjudged":
        against = (
            " against both reference workloads"
            if ticks == 2
            else (f" against all {ticks} reference workloads")
        )
        measured = f"{c.reason}: judged on the smaller; {measured}"
    return (
        f"{_PREFIX}: region {region} {metric} {word} {c.percent()}{against} "
        f"({measured}, {c.interval()}, tolerance {c.tolerance * 100:g}%)"
    )
