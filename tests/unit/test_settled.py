"""The compare window's stop rule (gate/settled.py): it stops sampling only where the gate's
verdict is already settled, judged as the gate judges host time."""

from __future__ import annotations

from dataclasses import replace

from helpers import TIMES, timed, two_ticks

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.settled import window_settled
from pytest_neuronperf.measure.window import HostSamples


def window_of(memory: float, dispatch: float, rounds: int = 10) -> HostSamples:
    """The rounds a window sampled, as two_ticks' measurement holds them."""
    m = two_ticks(memory, dispatch)
    assert m.host_relative is not None and m.host_relative_dispatch is not None
    return HostSamples(
        list(m.host_us.samples)[:rounds],
        [10.0] * rounds,
        list(m.host_relative.samples)[:rounds],
        [2.0] * rounds,
        list(m.host_relative_dispatch.samples)[:rounds],
        calls=1000,
        result=None,
    )


def test_the_stop_rule_settles_only_what_the_gate_could_not_call_otherwise() -> None:
    entry = Entry.of(two_ticks(1.0, 1.0))

    def settled(memory: float, dispatch: float, rounds: int = 10) -> str | None:
        s = window_of(memory, dispatch, rounds)
        return window_settled(entry, s, tolerance=0.1, by_reference=True)

    # Unchanged: inside the band with room to spare against a tick. Settled.
    assert settled(1.0, 1.0) == (
        "host time inside the tolerance against the memory-bound tick (+0%, 95% CI -0%..+0%)"
    )
    # One tick drifted, the other did not: the gate calls no change, nor does the rule.
    why = settled(1.4, 1.0)
    assert why is not None and why.startswith("host time inside the tolerance against the dispatch")
    # Slower against both: a regression, which then gets its whole second look.
    assert settled(1.3, 1.5) == "host time regressed (memory-bound +30%, dispatch-bound +50%)"
    assert settled(0.7, 0.6) == "host time improved (memory-bound -30%, dispatch-bound -40%)"
    # Near the tolerance's edge (+9%): not settled, sample on.
    assert settled(1.09, 1.09) is None
    # Too few rounds for a verdict: nothing to wait for.
    assert settled(1.09, 1.09, rounds=3) == "too few rounds for time to be judged"


def test_the_stop_rule_reads_raw_host_time_where_the_gate_does() -> None:
    entry = Entry.of(timed(TIMES, TIMES))  # no reference: raw host time is judged
    same = HostSamples(list(TIMES), [], [], [], [], 100, None)
    slower = replace(same, host_us=[v * 1.5 for v in TIMES])
    assert window_settled(entry, same, tolerance=0.1, by_reference=True) == (
        "host time inside the tolerance (+0%, 95% CI -4%..+4%)"
    )
    assert window_settled(entry, slower, tolerance=0.1, by_reference=False) == (
        "host time regressed (raw +50%)"
    )
