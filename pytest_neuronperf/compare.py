"""One measurement against its baseline entry: exact for counts, statistical for times.
Pure: no pytest, no I/O. The verdict carries the sentences that fail the test."""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import op_diff_text
from .baseline import Entry
from .model import Measurement
from .reference import drift
from .stats import TimeChange, compare_times

STATUSES = ("new", "same", "changed", "improved", "regressed")
_PREFIX = "neuronperf baseline"


@dataclass(frozen=True)
class Comparison:
    # new: no entry; regressed: fails the test; improved: fewer ops/kernels or credibly
    # faster; changed: other ops at the same count; same: nothing credible moved.
    status: str
    failures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    device: TimeChange | None = None
    host: TimeChange | None = None
    # True when --neuron-profile-update should rewrite the entry. A "same" entry is kept
    # byte for byte, so a review diff shows only what moved.
    needs_write: bool = True

    def cell(self) -> str:
        """The report table's baseline column."""
        change = self.device
        if change is None or change.verdict == "unjudged":
            # Too few rounds to judge time (see stats.MIN_ROUNDS): counts only.
            return self.status
        return f"{self.status} {change.percent()}"


def compare(
    entry: Entry | None,
    m: Measurement,
    *,
    tolerance: float,
    compare_host: bool = False,
    strict: bool = False,
    where: str = "the baseline file",
    correct_drift: bool = True,
) -> Comparison:
    """``tolerance`` is a fraction (0.10 = 10%). ``where`` names the file in messages.
    With ``correct_drift``, current times are divided by how much slower the machine runs
    than at the baseline, by the reference workload both sides timed (reference.py)."""
    region = repr(m.region)
    if entry is None:
        failures: tuple[str, ...] = ()
        if strict:
            failures = (
                f"{_PREFIX}: region {region} has no baseline in {where} and "
                "--neuron-profile-strict is on; record it with "
                "pytest --neuron-profile --neuron-profile-update",
            )
        return Comparison("new", failures)
    fails: list[str] = []
    gains: list[str] = []
    notes: list[str] = []
    for what, verb, now, then, now_counts, then_counts in (
        ("ops", "dispatched", m.ops, entry.ops, m.op_counts, entry.op_counts),
        ("kernels", "ran", m.kernels, entry.kernels, m.kernel_counts, entry.kernel_counts),
    ):
        sentence = (
            f"{_PREFIX}: region {region} {verb} {now} {what}, baseline {then} "
            f"({op_diff_text(then_counts, now_counts)})"
        )
        if now > then:
            fails.append(sentence)
        elif now < then:
            gains.append(sentence + ": improved, run --neuron-profile-update to keep it")
        elif dict(now_counts) != dict(then_counts):
            notes.append(sentence)
    if m.work is not None:
        for what, now_work, then_work in (
            ("FLOPs", m.work.flops, entry.flops),
            ("bytes moved", m.work.bytes_moved, entry.bytes_moved),
        ):
            if then_work is None:
                continue
            sentence = f"{_PREFIX}: region {region} did {now_work:,} {what}, baseline {then_work:,}"
            if now_work > then_work:
                fails.append(sentence)
            elif now_work < then_work:
                gains.append(sentence + ": improved, run --neuron-profile-update to keep it")
    then_torch, now_torch = entry.environment.get("torch"), m.environment.get("torch")
    factor = 1.0
    if correct_drift and then_torch == now_torch:
        # Another torch may run the reference itself faster or slower: no correction then.
        factor = drift(entry.reference_us, m.reference_us)
    device = compare_times(entry.device_us.samples, _scaled(m.device_us.samples, factor), tolerance)
    host = compare_times(entry.host_us.samples, _scaled(m.host_us.samples, factor), tolerance)
    for metric, change, judged in (("device_us", device, True), ("host_us", host, compare_host)):
        if not judged:
            continue
        text = _time_sentence(region, metric, change, factor)
        if change.verdict == "regressed":
            fails.append(text)
        elif change.verdict == "improved":
            gains.append(text + "; run --neuron-profile-update to keep it")
    if then_torch and now_torch and then_torch != now_torch:
        notes.append(f"{_PREFIX}: recorded with torch {then_torch}, now {now_torch}")
    if fails:
        status = "regressed"
    elif gains:
        status = "improved"
    elif m.op_counts != entry.op_counts or m.kernel_counts != entry.kernel_counts:
        status = "changed"
    else:
        status = "same"
    needs_write = (
        status != "same"
        or entry.environment != m.environment
        or entry.rounds != m.rounds
        # An entry from before FLOPs were counted gains them, so the exact gate applies.
        or (m.work is not None and entry.flops is None)
    )
    return Comparison(status, tuple(fails), tuple(gains + notes), device, host, needs_write)


def _scaled(samples: tuple[float, ...], factor: float) -> tuple[float, ...]:
    return samples if factor == 1.0 else tuple(s / factor for s in samples)


def _time_sentence(region: str, metric: str, c: TimeChange, factor: float = 1.0) -> str:
    word = {"regressed": "regressed", "improved": "improved"}.get(c.verdict, "changed")
    measured = f"median {c.current_median * factor:,.1f} vs {c.baseline_median:,.1f} µs"
    if factor >= 1.005:
        # The change is given after allowing for it; the medians are as measured.
        measured += f", machine {(factor - 1) * 100:.0f}% slower by the reference"
    return (
        f"{_PREFIX}: region {region} {metric} {word} {c.percent()} "
        f"({measured}, {c.interval()}, tolerance {c.tolerance * 100:g}%)"
    )
