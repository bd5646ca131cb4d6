"""Host time sampled over a window, and the host-timed gate that rests on it."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any

import pytest
import torch
from helpers import TIMES, sampled_windows, timed, two_ticks

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate import ticks as ticks_module
from pytest_neuronperf.gate import times as times_module
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.measure.reference import Reference
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.measure.window import (
    PASSES,
    RECORD_WINDOWS,
    HostSamples,
    WindowPlan,
    pooled,
    sample_host,
    sample_window,
)
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.reports.detail import measurement_detail
from pytest_neuronperf.settings import SettingError, resolve
from pytest_neuronperf.stats import Stats, compare_times


class FakeClock:
    """Each call of the measured function takes ``cost`` ns; reading the clock is free."""

    def __init__(self, cost: int) -> None:
        self.now = 0
        self.cost = cost

    def __call__(self) -> int:
        return self.now

    def work(self) -> int:
        self.now += self.cost
        return self.now


def test_each_round_is_the_median_of_its_share_of_the_window() -> None:
    clock = FakeClock(cost=1_000)  # 1 µs calls, 10 ms window, 5 rounds: 2,000 calls each
    s = sample_host(clock.work, rounds=5, window_s=0.01, reference=None, clock=clock)
    assert s.host_us == [1.0] * 5
    assert s.calls == 10_000
    assert s.reference_us == []
    assert s.result == clock.now, "the last call's result is handed back"


def test_a_call_longer_than_its_share_runs_once_per_round_and_no_window_is_one_call() -> None:
    clock = FakeClock(cost=50_000_000)  # 50 ms calls, 10 ms window
    s = sample_host(clock.work, rounds=4, window_s=0.01, reference=None, clock=clock)
    assert s.calls == 4 and s.host_us == [50_000.0] * 4
    clock = FakeClock(cost=1_000)
    s = sample_host(clock.work, rounds=3, window_s=0.0, reference=None, clock=clock)
    assert s.calls == 3


def test_a_slow_stretch_does_not_push_later_rounds_out_of_the_window() -> None:
    costs = iter([30_000_000] + [1_000] * 100_000)
    clock = FakeClock(0)

    def call() -> None:
        clock.now += next(costs)

    # Round 0's one call overruns the shares of rounds 0-2 (10 ms each): rounds 1 and 2 make
    # the fewest calls a round may (window.MIN_CALLS_PER_ROUND), and the window still ends
    # 50 ms after it began.
    s = sample_host(call, rounds=5, window_s=0.05, reference=None, clock=clock)
    assert s.host_us == [30_000.0, 1.0, 1.0, 1.0, 1.0]
    assert clock.now == 50_000_000
    # Round 0 one call (the window's fastest so far: a callable that slow is timed once per
    # round), rounds 1 and 2 ten 1 µs calls each, round 3 fills 30.02-40 ms, round 4 40-50.
    assert s.calls == 1 + 10 + 10 + 9_980 + 10_000


class SteadyReference:
    """Both ticks steady: 5 µs memory-bound, 1 µs dispatch-bound."""

    def tick(self) -> float:
        return 5.0

    def dispatch_tick(self) -> float:
        return 1.0

    def compute_tick(self) -> float:
        return 20.0


def test_after_a_stall_no_round_is_one_call_that_carries_a_scheduler_tick() -> None:
    """A loaded machine: 2 µs calls, descheduled for 45 ms in round 0, then, just resumed,
    for one 4 ms scheduler tick more. With ends fixed from the start, rounds 1-3 were one
    call each, and round 1's one call was the 4 ms: that round read 2,000x its calls (the
    gate's low decile of one call is that call). Each round now makes enough calls that a
    stalled one is never its decile or median."""
    costs = iter([2_000] * 99 + [45_000_000, 4_000_000] + [2_000] * 100_000)
    clock = FakeClock(0)

    def call() -> None:
        clock.now += next(costs)

    ref = SteadyReference()
    s = sample_host(call, rounds=5, window_s=0.05, reference=ref, clock=clock)  # type: ignore[arg-type]
    assert s.host_us == [2.0] * 5
    assert s.relative == [pytest.approx(2.0 / 5.0)] * 5
    assert s.relative_dispatch == [pytest.approx(2.0)] * 5
    # Rounds 1-3 overran their ends by the MIN_CALLS_PER_ROUND - 1 calls after the stalled
    # one; the window still ends on time.
    assert clock.now == 50_000_000


def test_the_reference_is_ticked_before_every_call_and_paired_per_round() -> None:
    s = sample_host(lambda: None, rounds=3, window_s=0.03, reference=Reference())
    assert len(s.reference_us) == 3 and all(r > 0 for r in s.reference_us)
    assert len(s.dispatch_us) == 3 and all(r > 0 for r in s.dispatch_us)
    assert len(s.relative) == len(s.relative_dispatch) == 3
    assert s.calls >= 3


def test_window_setting_levels_and_bad_values() -> None:
    assert resolve({}, {}, env={}).window == 1.0
    assert resolve({}, {"neuron_profile_window": "0.5"}, env={}).window == 0.5
    env = {"NEURONPERF_WINDOW": "0"}
    assert resolve({}, {"neuron_profile_window": "0.5"}, env=env).window == 0.0
    assert resolve({"window": "2s"}, {}, env=env).window == 2.0
    with pytest.raises(SettingError, match=r"--neuron-profile-window='-1': expected seconds"):
        resolve({"window": "-1"}, {}, env={})
    with pytest.raises(SettingError, match=r"NEURONPERF_WINDOW='soon'"):
        resolve({}, {}, env={"NEURONPERF_WINDOW": "soon"})


def test_a_measurement_samples_host_time_over_the_window_on_the_real_profiler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    windows = sampled_windows(monkeypatch)
    # One thread, the plugin's default: on two loaded cores a 2-thread matmul tick waits
    # milliseconds for a core (docs/threads.md), and the window would hold few calls.
    runner = Runner(CpuBackend(), count_work=False, window=0.2, threads=1)
    x = torch.randn(64, 64)
    result, m = runner.measure_callable(
        torch.relu, (x,), {}, test_id="t", name="relu", warmup=2, rounds=5
    )
    assert torch.equal(result, torch.relu(x))
    assert m.host_us.n == 5 and m.device_us.n == 5
    # One whole window of 0.2 s was sampled, and window_s is how long that one ran.
    assert [(plan.seconds, plan.settled) for plan, _ in windows] == [(0.2, None)]
    assert m.window_s == windows[0][1].seconds
    # A relu of 4K floats takes microseconds: thousands of calls fit in 0.2 s.
    assert m.host_calls > 100
    assert m.reference_us is not None and m.reference_us.n == 5
    assert f"host over {m.host_calls:,} calls in {m.window_s:.2f} s" in measurement_detail(m)
    assert m.window_note == "", "the Runner's own window runs whole"
    assert m.ops == 1, "the window's calls are not profiled: the region is still one op"


def test_host_timed_backends_gate_host_time_not_the_profiled_device_time() -> None:
    base = Entry.of(timed(TIMES, TIMES))
    # Profiled op times inflated 3x, the unprofiled window unchanged: passes on cpu, where
    # that is the profiler's own noise; a device backend fails it on device_us.
    inflated = timed([v * 3 for v in TIMES], TIMES)
    on_cpu = compare(base, inflated, tolerance=0.1, host_timed=True)
    assert on_cpu.status == "same" and on_cpu.gated == "host_us", on_cpu.failures
    assert compare(base, inflated, tolerance=0.1).status == "regressed"
    # The window 1.5x slower fails on cpu, naming host_us; the cell shows that change.
    slower = compare(base, timed(TIMES, [v * 1.5 for v in TIMES]), tolerance=0.1, host_timed=True)
    assert slower.status == "regressed"
    assert slower.failures[0].startswith(
        "neuronperf baseline: region 'r' host time regressed +50% (median 156.8 vs 104.5 µs"
    )
    assert slower.cell() == "regressed +50%"


class FakeReference:
    """The memory tick goes 10, 20, 10, 20, ... µs: a machine that alternates between two
    speeds; the dispatch tick stays at 5 µs, blind to it."""

    def __init__(self) -> None:
        self.n = 0

    def tick(self) -> float:
        self.n += 1
        return 10.0 if self.n % 2 else 20.0

    def dispatch_tick(self) -> float:
        return 5.0

    def compute_tick(self) -> float:
        return 40.0


def test_relative_is_the_low_decile_of_each_call_over_its_own_tick() -> None:
    clock = FakeClock(cost=0)
    costs = iter([100_000, 200_000] * 10 + [1_000_000] * 2)  # the last two: preempted

    def call() -> None:
        clock.now += next(costs)

    ref = FakeReference()
    s = sample_host(call, rounds=1, window_s=0.0049, reference=ref, clock=clock)  # type: ignore[arg-type]
    # Each call ran at its tick's speed (100 µs at 10, 200 at 20): ten times the reference
    # whatever the machine did, and the two preempted calls stay out of the low decile.
    assert s.calls == 22
    assert s.relative == [pytest.approx(10.0)]
    assert s.reference_us == [15.0]
    assert s.host_us == [200.0]
    # Against the blind tick only the fast calls' 100 µs make the low decile: 100 / 5.
    assert s.relative_dispatch == [pytest.approx(20.0)]
    assert s.dispatch_us == [5.0]


def test_the_gate_prefers_the_relative_rounds_and_a_damaged_one_is_refused() -> None:
    rel = [10.0 + 0.01 * i for i in range(10)]
    ref = Stats.of([10.0] * 10)
    base = replace(timed(TIMES, TIMES), reference_us=ref, host_relative=Stats.of(rel))
    entry = Entry.of(base)
    # Medians as measured 1.5x (a busy machine), the relative rounds unchanged: the same.
    busy = replace(
        timed(TIMES, [v * 1.5 for v in TIMES]), reference_us=ref, host_relative=Stats.of(rel)
    )
    assert compare(entry, busy, tolerance=0.1, host_timed=True).status == "same"
    # The relative rounds 1.3x: regressed, though the medians as measured did not move.
    slower = replace(
        timed(TIMES, TIMES), reference_us=ref, host_relative=Stats.of([v * 1.3 for v in rel])
    )
    c = compare(entry, slower, tolerance=0.1, host_timed=True)
    assert c.status == "regressed"
    assert "host time regressed +30% against the reference" in c.failures[0]
    # Off: raw medians, which say nothing moved.
    raw = compare(entry, slower, tolerance=0.1, host_timed=True, use_reference=False)
    assert raw.status == "same"
    # An unchanged entry is kept as it is; one recorded before the window gains the figures.
    assert not compare(entry, base, tolerance=0.1, host_timed=True).needs_write
    older = Entry.of(replace(base, host_relative=None))
    assert compare(older, base, tolerance=0.1, host_timed=True).needs_write
    damaged = entry.to_dict()
    damaged["host_relative"]["samples"][0] = 0
    with pytest.raises(ValueError, match="host_relative samples must all be > 0"):
        Entry.from_dict(damaged)


def spin(us: float) -> None:
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def test_a_regression_in_the_first_window_is_judged_again_on_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The machine's transient: the first window is slow, the second is not. The recheck
    callback plays the baseline (it says the first window regressed) and ends the transient."""
    windows = sampled_windows(monkeypatch)
    runner = Runner(CpuBackend(), count_work=False, window=0.05)
    state = {"us": 400.0, "asked": 0}
    x = torch.ones(8)

    def work(t: torch.Tensor) -> torch.Tensor:
        spin(state["us"])
        return t + 1

    def recheck(m: Measurement) -> str | None:
        state["asked"] += 1
        first_median = m.host_us.median
        state["us"] = 100.0
        return "+100%" if first_median > 300 else None

    _, m = runner.measure_callable(
        work, (x,), {}, test_id="t", name="work", warmup=1, rounds=5, recheck=recheck
    )
    assert state["asked"] == 1
    assert m.host_us.median < 300, "the second look replaced the first window"
    assert m.recheck_note == (
        "host time regressed +100% in the first window; judged on 3 more windows sampled "
        "right after, pooled"
    )
    # The first window, then as many whole ones as recording a baseline pools; the
    # report's window span is theirs.
    assert [plan.seconds for plan, _ in windows] == [0.05] * (1 + RECORD_WINDOWS)
    assert m.window_s == pytest.approx(sum(s.seconds for _, s in windows[1:]))
    assert m.recheck_note in measurement_detail(m)
    # No regression: nothing sampled again, no note.
    _, calm = runner.measure_callable(
        work, (x,), {}, test_id="t", name="calm", warmup=1, rounds=5, recheck=lambda m: None
    )
    assert calm.recheck_note == ""


def test_a_host_regression_must_show_against_both_reference_ticks() -> None:
    entry = Entry.of(two_ticks(1.0, 1.0))
    # Slower against both: regressed, on the smaller change, and the sentence names both.
    c = compare(entry, two_ticks(1.3, 1.5), tolerance=0.1, host_timed=True)
    assert c.status == "regressed"
    assert c.host is not None and c.host.ratio == pytest.approx(1.3)
    assert (
        "host time regressed +30% against both reference workloads (memory-bound +30%, "
        "dispatch-bound +50%: judged on the smaller; median "
    ) in c.failures[0]
    assert c.cell() == "regressed +30%"
    # Against one tick only: a drift of what the other times, not the region. Both ways.
    for memory, dispatch in ((1.4, 1.0), (1.0, 1.4), (1.4, 0.7)):
        c = compare(entry, two_ticks(memory, dispatch), tolerance=0.1, host_timed=True)
        assert c.status == "same", (memory, dispatch)
        assert not c.failures
    # Faster against both: improved, again on the change nearer none.
    c = compare(entry, two_ticks(0.7, 0.6), tolerance=0.1, host_timed=True)
    assert c.status == "improved" and c.host is not None
    assert c.host.ratio == pytest.approx(0.7)


def test_a_comparison_bootstraps_only_the_times_it_judges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each bootstrap is 2,000 resamples: one whose verdict nothing reads is waste, and at
    1,000 entries it was half the cost of comparing (docs/cost.md)."""
    calls: list[int] = []
    real = compare_times

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(times_module, "compare_times", counted)
    monkeypatch.setattr(ticks_module, "compare_times", counted)
    entry, now = Entry.of(two_ticks(1.0, 1.0)), two_ticks(1.3, 1.5)
    for kwargs, bootstraps, status in (
        # cpu: host time against both ticks, and raw host time, which may overrule a change
        # (gate/times.py with_raw); device_us is not judged.
        ({"host_timed": True}, 3, "regressed"),
        # Without the reference: raw host time only (as measured, unchanged here).
        ({"host_timed": True, "use_reference": False}, 1, "same"),
        # A device backend: device time; with --neuron-profile-compare-host host time too.
        ({}, 1, "same"),
        ({"compare_host": True}, 4, "regressed"),
    ):
        calls.clear()
        c = compare(entry, now, tolerance=0.1, **kwargs)  # type: ignore[arg-type]
        assert len(calls) == bootstraps, kwargs
        assert c.status == status, kwargs
    # What was not judged is not there to be read.
    c = compare(entry, now, tolerance=0.1, host_timed=True)
    assert c.device is None and c.host is not None and c.host.verdict == "regressed"


def test_an_entry_without_the_dispatch_tick_is_judged_on_the_memory_tick_and_rewritten() -> None:
    current = two_ticks(1.4, 1.0)
    older = Entry.of(replace(two_ticks(1.0, 1.0), host_relative_dispatch=None))
    c = compare(older, current, tolerance=0.1, host_timed=True)
    assert c.status == "regressed"
    assert "host time regressed +40% against the reference workload (" in c.failures[0]
    assert c.needs_write
    assert not compare(Entry.of(current), current, tolerance=0.1, host_timed=True).needs_write
    damaged = Entry.of(current).to_dict()
    damaged["host_relative_dispatch"]["samples"][3] = -1
    with pytest.raises(ValueError, match="host_relative_dispatch samples must all be > 0"):
        Entry.from_dict(damaged)
    damaged = Entry.of(current).to_dict()
    damaged["dispatch_reference_us"]["samples"][0] = 0
    with pytest.raises(ValueError, match="dispatch_reference_us samples must all be > 0"):
        Entry.from_dict(damaged)


def test_pooled_windows_take_each_rounds_median_and_keep_the_round_count() -> None:
    def window(scale: float, calls: int) -> HostSamples:
        rounds = [1.0, 2.0, 3.0]
        return HostSamples(
            [v * scale for v in rounds],
            [10.0] * 3,
            [v * scale for v in rounds],
            [2.0] * 3,
            [v * scale * 5 for v in rounds],
            calls,
            result=scale,
        )

    # The middle window is a lucky moment, twice as fast: it does not move the pool.
    p = pooled([window(1.0, 10), window(0.5, 20), window(1.1, 30)])
    assert p.host_us == [1.0, 2.0, 3.0]
    assert p.relative_dispatch == [5.0, 10.0, 15.0]
    assert p.reference_us == [10.0] * 3
    assert p.calls == 60 and p.windows == 3 and p.result == 1.1
    one = window(1.0, 10)
    assert pooled([one]) is one


def test_a_window_only_where_a_host_time_is_judged(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording samples whole windows, pooled; a run with an entry to judge against samples
    an adaptive one; a region with no entry, and a plain run enforcing its budget, time one
    call per round. What each did is in the measurement (JSON, and the fixture's own)."""
    pytester.makepyfile(
        test_it="""
import json, os
import pytest, torch

@pytest.mark.neuron_budget(max_ops=5)
def test_a(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
    with open(os.environ["SEEN"], "w") as f:
        json.dump(neuron_profile.last.to_dict(), f)
"""
    )
    seen = pytester.path / "seen.json"
    os.environ["SEEN"] = str(seen)
    args = ["-p", "no:cacheprovider", "--neuron-profile-window=0.06"]
    windows = sampled_windows(monkeypatch)

    def measured(*extra: str) -> dict[str, Any]:
        windows.clear()
        result = pytester.runpytest_inprocess(*args, *extra)
        result.assert_outcomes(passed=1)
        m: dict[str, Any] = json.loads(seen.read_text())
        assert m["host_us"]["n"] == 10, "pooling and stopping early keep the rounds"
        return m

    try:
        recorded = measured("--neuron-profile-update")
        # A recording samples passes until its figures are pinned down (gate/record.py):
        # one window plan, up to one window of passes, with a stop rule that knows the
        # region's shape: profiled and counted before the window, which is bound to it.
        [(plan, sampled)] = windows
        assert (plan.seconds, plan.passes, plan.what) == (0.06, PASSES, "recording")
        assert plan.settled is not None and plan.shaped is None
        assert recorded["window_s"] == pytest.approx(sampled.seconds)
        assert recorded["window_note"].startswith(("recording stopped after", "recording ran "))
        judged = measured("--neuron-profile")
        assert judged["window_s"] > 0 and judged["host_calls"] > 10
        # The adaptive window says where it stopped, unless a busy moment made its host time
        # look regressed: then whole windows were sampled again, and recheck_note says so.
        assert judged["window_note"].startswith(("window stopped after", "window ran ")) or (
            judged["window_note"] == "" and judged["recheck_note"].startswith("host time regressed")
        ), judged
        # No entry for this region here: no window, one call per round.
        other = f"--neuron-profile-dir={pytester.path / 'elsewhere'}"
        for unjudged in (measured("--neuron-profile", other), measured()):
            assert unjudged["window_s"] == 0.0
            assert unjudged["host_calls"] == 10
            assert unjudged["window_note"] == ""
            assert unjudged["host_relative"]["n"] == 10, "every round still ticks the reference"
    finally:
        del os.environ["SEEN"]


class Settles:
    """A stop rule that settles on its ``at``-th look (never, with 0), saying so."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.looks: list[HostSamples] = []

    def __call__(self, s: HostSamples) -> str | None:
        self.looks.append(s)
        return "settled" if len(self.looks) == self.at else None


def test_an_adaptive_window_stops_after_the_first_pass_that_settles_the_verdict() -> None:
    clock = FakeClock(cost=2_000)
    rule = Settles(at=2)
    s = sample_window(clock.work, 10, WindowPlan(0.05, rule), None, clock=clock)
    assert s.seconds == pytest.approx(2 * 0.05 / PASSES, rel=1e-3)
    assert s.note == f"window stopped after 2 of {PASSES} passes: settled"
    # Each look sees every pass so far pooled, rounds kept: 10 figures each time.
    assert [len(look.host_us) for look in rule.looks] == [10, 10]
    assert rule.looks[1].calls == 2 * rule.looks[0].calls
    # Without a rule the same calls fill the whole window, in PASSES passes.
    whole = sample_window(clock.work, 10, WindowPlan(0.05), None, clock=clock)
    assert whole.seconds == pytest.approx(0.05, rel=1e-3)
    assert whole.calls == PASSES * rule.looks[0].calls and whole.note == ""


def test_an_adaptive_window_that_never_settles_runs_whole() -> None:
    clock = FakeClock(cost=2_000)
    rule = Settles(at=0)
    s = sample_window(clock.work, 10, WindowPlan(0.05, rule), None, clock=clock)
    assert s.seconds == pytest.approx(0.05, rel=1e-3)
    assert len(rule.looks) == PASSES - 1, "the last pass needs no look: the window ends"
    assert s.note == (
        f"window ran {PASSES} of {PASSES} passes, its whole time: the host time's verdict "
        "was not settled before"
    )


def test_an_adaptive_window_of_a_slow_callable_ends_with_its_time() -> None:
    clock = FakeClock(cost=5_000_000)  # 5 ms calls against 2 ms passes
    rule = Settles(at=0)
    s = sample_window(clock.work, 5, WindowPlan(0.01, rule), None, clock=clock)
    assert s.calls == 5, "one call per round, one pass: the window's time was spent"
    assert s.note.startswith(f"window ran 1 of {PASSES} passes, its whole time")
    assert rule.looks == []


def test_no_window_is_one_call_per_round_whatever_the_rule() -> None:
    rule = Settles(at=1)
    s = sample_window(FakeClock(1_000).work, 10, WindowPlan(0.0, rule), None)
    assert s.calls == 10 and s.note == "" and rule.looks == []


def test_a_millisecond_region_is_timed_against_the_millisecond_tick_on_the_real_profiler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Decided from the profiled rounds: a call of 1.5 ms gets the tick in its window and in
    its second look; a relu of microseconds gets none, nor pays for building it."""
    windows = sampled_windows(monkeypatch)
    runner = Runner(CpuBackend(), count_work=False, window=0.05, threads=1)
    x = torch.ones(8)

    def work(t: torch.Tensor) -> torch.Tensor:
        spin(1_500.0)
        return t + 1

    looks = {"asked": 0}

    def recheck(m: Measurement) -> str | None:
        looks["asked"] += 1
        return "+30%" if looks["asked"] == 1 else None

    _, m = runner.measure_callable(
        work, (x,), {}, test_id="t", name="work", warmup=1, rounds=5, recheck=recheck
    )
    assert m.recheck_note, "the second look ran"
    assert m.long_reference_us is not None and m.long_reference_us.n == 5
    assert m.host_relative_long is not None and m.host_relative_long.n == 5
    assert all(s.relative_long for _, s in windows), "the first window and the second look"
    # About a millisecond a tick, and the 1.5 ms call over it about 1.5 (up to the machine).
    assert 0.3 < m.host_relative_long.median < 5
    windows.clear()
    _, quick = runner.measure_callable(
        torch.relu, (x,), {}, test_id="t", name="relu", warmup=1, rounds=5
    )
    assert quick.long_reference_us is None and quick.host_relative_long is None
    assert [s.long_us for _, s in windows] == [[]]
    assert "long_reference_us" not in Entry.of(quick).to_dict(), "its file stays as it was"
