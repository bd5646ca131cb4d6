"""One measurement against its baseline entry: exact for counts, statistical for times.
Pure: no pytest, no I/O. The verdict carries the sentences that fail the test."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..baselines.entry import Entry
from ..measure.threads import THREADS_KEY
from ..measure.window import WINDOW_KEY
from ..model import NOT_COMPARABLE_NOTE as NOT_COMPARABLE_NOTE
from ..model import BaselineStatus, Measurement, TimeJudged
from ..stats import TimeChange
from ..trace.summary import op_diff_text
from ..words import counted
from .collectives import compare_collectives
from .memory import compare_memory
from .times import PREFIX as _PREFIX
from .times import Times, host_references, judge_times

NOT_COMPARABLE = BaselineStatus.NOT_COMPARABLE


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
    hold_back: bool = True,
) -> Comparison:
    """``tolerance`` is a fraction (0.10 = 10%). ``where`` names the file in messages.
    With ``use_reference``, times are judged as multiples of the reference workload timed
    beside each round (reference.py) where both sides have it. ``host_timed`` backends (cpu)
    gate host_us in place of device_us: there the device is the host, and the profiled op
    times vary several times more between runs than the unprofiled window (window.py).
    ``hold_back``: a time change inside the recording processes' spread is judged the same
    (gate/spread.py); off where fresh processes' rounds are pooled instead (--recheck)."""
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
    times = judge_times(entry, m, tolerance, by_reference, judged, hold_back)
    found.fails.extend(times.fails)
    found.gains.extend(times.gains)
    found.notes.extend(times.notes)
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
    entry: Entry, m: Measurement, times: Times, metric: str, by_reference: bool
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
        host_references(entry, m) if host else (entry.device_reference_us, m.device_reference_us)
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
        ("op", "dispatched", m.ops, entry.ops, m.op_counts, entry.op_counts),
        ("kernel", "ran", m.kernels, entry.kernels, m.kernel_counts, entry.kernel_counts),
    ):
        sentence = (
            f"{_PREFIX}: region {m.region!r} {verb} {counted(now, what)}, baseline {then} "
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
