"""A region's times against its baseline entry: statistical, each as multiples of the
reference workloads where both sides timed them, overruled by raw rounds that show the other
way, and held back where the recording processes ran further apart than the change.
Pure: no pytest, no I/O. Returns the verdicts and the sentences they fail or inform with."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..baselines.entry import Entry
from ..measure.reference import against_reference
from ..model import APART_NOTE, Measurement
from ..stats import Stats, TimeChange, compare_times
from ..words import TIME_WORDS
from .spread import Offsets, held_back, offsets
from .ticks import LONG, agreed, judging_kinds, relative_changes, relatives_of, tick_offsets

PREFIX = "neuronperf baseline"
_KEEP = "; run --neuron-profile-update to keep it"


@dataclass(frozen=True)
class Times:
    """The time verdicts by metric; the change against the references alone, by metric
    (None: judged raw); the reference ticks host time was judged against, each with its
    change; and the sentences: failures, improvements, notes."""

    changes: dict[str, TimeChange]
    scaled: dict[str, TimeChange | None]
    references: tuple[tuple[str, TimeChange], ...]
    fails: tuple[str, ...] = ()
    gains: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def judge_times(
    entry: Entry,
    m: Measurement,
    tolerance: float,
    by_reference: bool,
    judged: dict[str, bool],
    hold_back: bool = True,
) -> Times:
    """The time verdicts, statistical, for the metrics ``judged`` names: against the
    references where both sides have them, overruled by raw rounds that show the other way
    (with_raw), held back within the recording processes' spread (gate/spread.py) unless
    ``hold_back`` is off: where the rounds of fresh processes are pooled to judge instead."""
    changes: dict[str, TimeChange] = {}
    against: dict[str, TimeChange | None] = {}
    references: list[tuple[str, TimeChange]] = []
    fails: list[str] = []
    gains: list[str] = []
    notes: list[str] = []
    for metric, then_t, now_t, then_ref, now_ref in (
        ("device_us", entry.device_us, m.device_us, entry.device_reference_us,
         m.device_reference_us),
        ("host_us", entry.host_us, m.host_us, *host_references(entry, m)),
    ):  # fmt: skip
        if not judged[metric]:
            # Nothing reads a time that is not judged: no bootstrap for it.
            continue
        b, c, refs = paired(then_t, now_t, then_ref, now_ref, by_reference)
        said = f"{TIME_WORDS[metric]} time"  # as a sentence says it; JSON keeps the field
        if metric == "host_us" and by_reference:
            references = relative_changes(
                entry, relatives_of(m), tolerance, judging_kinds(entry, m)
            )
        relative = agreed(references) if metric == "host_us" else None
        scaled = relative
        if scaled is None and refs is not None:
            scaled = compare_times(b, c, tolerance)
        change = _overruled(then_t, now_t, scaled, tolerance)
        # The processes' offsets are read only for a change that may be held back.
        apart = (
            held_back(change, _parts(entry, change, references if relative else [], b))
            if hold_back and change.verdict in ("regressed", "improved")
            else []
        )
        if apart:
            notes.append(_apart_sentence(repr(m.region), said, change, apart, entry))
            change = replace(change, verdict="same")
        changes[metric] = change
        against[metric] = scaled
        if change.verdict in ("regressed", "improved"):
            long_only = metric == "host_us" and [k for k, _ in references] == [LONG]
            text = _time_sentence(
                repr(m.region),
                said,
                change,
                then_t,
                now_t,
                refs,
                len(references),
                long_only,
            )
            (gains if change.verdict == "improved" else fails).append(
                text + (_KEEP if change.verdict == "improved" else "")
            )
    return Times(changes, against, tuple(references), tuple(fails), tuple(gains), tuple(notes))


def _overruled(then: Stats, now: Stats, scaled: TimeChange | None, tolerance: float) -> TimeChange:
    """The verdict against the references, or the raw rounds' where there is none; the raw
    rounds are bootstrapped only where they decide, or may overrule a change (with_raw)."""
    if scaled is None:
        return compare_times(then.samples, now.samples, tolerance)
    if scaled.verdict in ("regressed", "improved"):
        return with_raw(compare_times(then.samples, now.samples, tolerance), scaled)
    return scaled


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
        f"({c.tolerance * 100:g}%) beyond that; record it again on a quieter machine to gate "
        "it closer"
    )


def host_references(entry: Entry, m: Measurement) -> tuple[Stats | None, Stats | None]:
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


_Refs = tuple[Stats, Stats] | None


def paired(
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
        f"{PREFIX}: region {region} {metric} {word} {c.percent()}{against} "
        f"({measured}, {c.interval()}, tolerance {c.tolerance * 100:g}%)"
    )
