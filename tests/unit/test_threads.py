"""A fixed, stored thread count; like-with-like baselines (threads, window); the scheduler
tick; callables whose work never ran."""

from __future__ import annotations

import asyncio
import json
import statistics
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import helpers
import pytest
import torch

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.budget import check
from pytest_neuronperf.gate.compare import NOT_COMPARABLE, compare
from pytest_neuronperf.gate.marker import Budget
from pytest_neuronperf.measure.errors import MeasureError
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.measure.threads import fixed_threads
from pytest_neuronperf.measure.tick import on_grid, scheduler_note, tick_of
from pytest_neuronperf.model import NOT_COMPARABLE_NOTE, Measurement
from pytest_neuronperf.settings import SettingError, resolve

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture
def two_threads() -> Iterator[None]:
    """The session's count set to 2 (the user's setting the runner must restore)."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def runner(**kwargs: Any) -> Runner:
    return Runner(CpuBackend(), count_work=False, reference=False, **kwargs)


def test_setting_resolves_from_each_level_and_refuses_zero() -> None:
    assert resolve({}, {}, env={}).threads == 1
    assert resolve({}, {"neuron_profile_threads": "4"}, env={}).threads == 4
    assert resolve({}, {}, env={"NEURONPERF_THREADS": "3"}).threads == 3
    assert resolve({"threads": "2"}, {}, env={"NEURONPERF_THREADS": "3"}).threads == 2
    with pytest.raises(SettingError, match=r"--neuron-profile-threads='0': expected an integer"):
        resolve({"threads": "0"}, {}, env={})


@pytest.mark.usefixtures("two_threads")
def test_fixed_threads_restores_the_callers_count_even_when_the_block_raises() -> None:
    with fixed_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(ZeroDivisionError), fixed_threads(1):
        1 / 0  # noqa: B018
    assert torch.get_num_threads() == 2
    with fixed_threads(None):
        assert torch.get_num_threads() == 2


@pytest.mark.usefixtures("two_threads")
def test_runner_measures_at_its_count_stores_it_and_restores_the_users() -> None:
    seen: list[int] = []

    def work(x: torch.Tensor) -> torch.Tensor:
        seen.append(torch.get_num_threads())
        return (x * 2.0).sum()

    r = runner(threads=1, window=0.01)
    _, m = r.measure_callable(work, (torch.ones(8),), {}, test_id="t", name="w", warmup=1, rounds=3)
    assert set(seen) == {1}, "every call, warm-up and window included, ran on one thread"
    assert torch.get_num_threads() == 2
    assert m.environment["threads"] == "1" and m.environment["window"] == "0.01"

    def boom(x: torch.Tensor) -> None:
        raise ValueError("in the region")

    with pytest.raises(ValueError, match="in the region"):
        r.measure_callable(boom, (torch.ones(8),), {}, test_id="t", name="b", warmup=1, rounds=3)
    assert torch.get_num_threads() == 2

    done: list[Measurement] = []
    with pytest.raises(KeyError), r.region("blk", test_id="t", on_done=done.append):
        assert torch.get_num_threads() == 1
        raise KeyError("in the block")
    assert torch.get_num_threads() == 2
    with r.region("blk", test_id="t", on_done=done.append):
        torch.ones(4) + 1
    # A with-region runs once under the profiler: no window to hold it to.
    assert done[-1].environment["threads"] == "1" and "window" not in done[-1].environment


def test_the_kernel_count_depends_on_the_thread_count() -> None:
    """Why the count is stored: 64K floats are two of ATen's 32K grains, so the sum runs in
    two parts and adds their results with one more kernel."""
    kernels = {}
    for threads in (1, 2):
        _, m = runner(threads=threads).measure_callable(
            lambda x: (x * 2.0).sum(),
            (torch.ones(65536),),
            {},
            test_id="t",
            name="s",
            warmup=1,
            rounds=2,
        )
        kernels[threads] = m.kernel_counts
    assert kernels[1] == {"aten::copy_": 1, "aten::fill_": 1}
    assert kernels[2] == {"aten::copy_": 2, "aten::fill_": 1}


def measurement(env: dict[str, str], kernels: int = 2, scale: float = 1.0) -> Measurement:
    times = [scale * (100.0 + i) for i in range(10)]
    return helpers.measurement(
        kernels={"aten::copy_": kernels}, device=times, environment={**helpers.ENV, **env}
    )


ONE = {"threads": "1", "window": "1"}


def test_another_thread_count_is_not_comparable_and_never_fails() -> None:
    entry = Entry.of(measurement(ONE))
    # One more kernel and three times slower on two threads: neither is judged.
    now = measurement({**ONE, "threads": "2"}, kernels=3, scale=3.0)
    c = compare(entry, now, tolerance=0.1, host_timed=True)
    assert c.status == NOT_COMPARABLE and not c.failures and c.needs_write
    assert c.notes == (NOT_COMPARABLE_NOTE + "recorded with 1 thread, now 2 threads",)
    assert c.cell() == NOT_COMPARABLE and c.host is None
    # An entry from before the count was stored cannot be trusted to match either.
    legacy = replace(entry, environment={"torch": "2.13.0", "device_kind": "cpu:x86_64"})
    c = compare(legacy, measurement(ONE, kernels=3), tolerance=0.1, host_timed=True)
    assert c.status == NOT_COMPARABLE and "an unknown thread count" in c.notes[0]
    # The same count is judged as before: the extra kernel fails.
    same = compare(entry, measurement(ONE, kernels=3), tolerance=0.1, host_timed=True)
    assert same.status == "regressed" and "ran 3 kernels, baseline 2" in same.failures[0]


def test_another_window_leaves_counts_judged_and_host_time_not() -> None:
    entry = Entry.of(measurement(ONE))
    unwindowed = {**ONE, "window": "0"}
    c = compare(entry, measurement(unwindowed, scale=5.0), tolerance=0.1, host_timed=True)
    assert c.status == NOT_COMPARABLE and not c.failures and c.host is None
    assert c.notes == (
        NOT_COMPARABLE_NOTE
        + "host time recorded with a 1 s window, now no window (one call per round)",
    )
    # Counts do not depend on the window: an extra kernel still fails.
    c = compare(entry, measurement(unwindowed, kernels=3), tolerance=0.1, host_timed=True)
    assert c.status == "regressed" and len(c.failures) == 1 and "kernels" in c.failures[0]
    # Where device time is gated, the window does not matter to the verdict.
    c = compare(entry, measurement(unwindowed), tolerance=0.1)
    assert c.status == "same" and not c.notes
    # The same window is judged: five times slower fails.
    c = compare(entry, measurement(ONE, scale=5.0), tolerance=0.1, host_timed=True)
    assert c.status == "regressed"


def test_grid_and_tick() -> None:
    assert on_grid(8_050, 4_000) and on_grid(4_090, 4_000) and not on_grid(6_000, 4_000)
    assert not on_grid(2_000, 4_000), "less than a tick is not a multiple of it"
    assert tick_of([4_050, 8_060, 12_010, 24_000]) == 4_000
    # 4 ms multiples also sit on the 1 ms grid: the largest tick that explains them wins.
    assert tick_of([4_050, 8_060, 12_010, 1_020, 3_010]) == 1_000
    assert tick_of([4_050, 8_060, 12_010, 16_000, 1_020, 600]) == 4_000, "one stray call"
    assert tick_of([600, 1_500, 2_500, 5_500, 7_300]) is None
    assert tick_of([4_050, 8_060]) is None, "two calls are no pattern"


def windows() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((DATA / "tick_windows.json").read_text())["windows"]
    return data


def test_recorded_windows_that_waited_for_the_scheduler_are_flagged() -> None:
    """Real windows (benchmarks/explore_threads.py, two CPU burners on 2 cores): the ones
    whose median is a hundred times the same workload's on one thread waited for the
    scheduler, and only those are flagged."""
    recorded = windows()
    one_thread = {
        w["workload"]: statistics.median(w["host_us"]) for w in recorded if w["threads"] == 1
    }
    flagged = 0
    for w in recorded:
        note = scheduler_note(
            w["long_calls_us"], w["calls"], w["host_us"], w["fast_us"], w["threads"]
        )
        waited = statistics.median(w["host_us"]) > 100 * one_thread[w["workload"]]
        assert bool(note) == waited, (w["threads"], w["workload"], note)
        if note:
            flagged += 1
            assert "4 ms scheduler tick" in note and "--neuron-profile-threads=1" in note
    assert flagged == 2


def test_every_call_waiting_is_flagged_without_a_fast_call() -> None:
    # Window medians at several multiples of the tick, no fast call to compare with.
    rounds = [40_010.0, 48_020.0, 52_000.0, 56_030.0, 44_000.0, 47_990.0, 40_000.0, 30_100.0]
    note = scheduler_note(rounds, 8, rounds, rounds, 2)
    assert note.startswith("scheduler: 7 of 8 round samples") and "fast call" not in note
    # A region that costs 8 ms on its own sits at one multiple: not flagged.
    steady = [8_010.0, 7_990.0, 8_020.0, 8_000.0, 8_030.0, 7_980.0]
    assert scheduler_note(steady, 6, steady, steady, 1) == ""


def test_rounds_far_above_a_fast_call_are_flagged_off_the_grid() -> None:
    # bench_gate's mul_sum on 2 threads under two burners (rerun a-1): one round ran, nine
    # waited 30.7-31.9 ms, too far from whole ticks for the grid to explain them.
    rounds = [31_816.0, 31_384.0, 31_663.0, 31_768.0, 30_740.0, 31_840.0, 31_563.0, 31_919.0]
    rounds += [67.0, 31_648.0]
    waited = [r for r in rounds if r > 1_000] + [29_407.0, 27_877.0, 33_080.0]
    assert tick_of(waited) is None
    note = scheduler_note(waited, 61, rounds, [60.0, *rounds[:8]], 2)
    assert note.startswith(
        "scheduler: 9 of 10 round samples took 20 times a fast call or more (31,919 µs "
        "against 60.0 µs): most of their calls waited for a core: with 2 threads"
    )
    # Every call waited (rerun a-0): with no fast call and no grid nothing tells it from
    # code that costs 31 ms, and nothing is said.
    stalled = [31_698.0, 31_689.0, 29_407.0, 31_742.0, 31_742.0, 27_877.0, 31_068.0, 31_290.0]
    assert scheduler_note(stalled, 33, stalled, stalled, 2) == ""


def test_calls_on_the_grid_without_a_round_sample_there_are_not_flagged() -> None:
    # As bench_gate's mul_sum on one thread at load 6: 154 of 6,115 calls preempted for a
    # tick or two, every round sample (the median of its calls) untouched.
    preempted = [4_050.0, 8_040.0] * 77
    rounds = [205.0 + i for i in range(10)]
    assert scheduler_note(preempted, 6_115, rounds, [190.0] * 10, 1) == ""
    # One round sample on the grid is: its calls mostly waited.
    hit = scheduler_note(preempted, 6_115, [*rounds[:9], 8_030.0], [190.0] * 10, 1)
    assert hit.startswith("scheduler: 1 of 10 round samples and 154 of 6,115 calls (2.5%)")
    assert "the process was preempted by others on a busy machine" in hit


def measure(fn: Any, warmup: int = 1) -> Measurement:
    _, m = runner(window=0.0).measure_callable(
        fn, (), {}, test_id="t", name="lazy", warmup=warmup, rounds=2
    )
    return m


def test_a_generator_coroutine_or_lazy_result_is_an_error_that_says_so() -> None:
    def gen() -> Iterator[torch.Tensor]:
        yield torch.ones(4) * 2

    async def coro() -> torch.Tensor:
        return torch.ones(4) * 2

    with pytest.raises(MeasureError, match=r"returned a generator \(generator\), so its work"):
        measure(gen)
    with pytest.raises(MeasureError, match=r"lambda: list\(gen"):
        measure(gen, warmup=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine was never awaited" on top
        with pytest.raises(MeasureError, match=r"returned a coroutine .*asyncio\.run"):
            measure(coro)
    with pytest.raises(MeasureError, match="returned a lazy iterator"):
        measure(lambda: map(torch.exp, [torch.ones(4)]))
    assert asyncio.run(coro()).sum() == 8
    # Eager results are measured as ever.
    assert measure(lambda: [torch.ones(4) * 2]).ops == 2


def test_a_budget_on_a_region_that_ran_no_op_fails() -> None:
    empty = replace(measurement(ONE), ops=0, kernels=0, op_counts={}, kernel_counts={})
    [v] = check(Budget(max_ops=5), [empty])
    assert v.sentence.startswith(
        "neuron_budget: region 'r' ran no op, so its budget (max_ops=5) checked nothing"
    )
    # A marker with no limit only asks for the measurement: nothing to check, no failure.
    assert check(Budget(), [empty]) == []
    assert check(Budget(max_ops=5), [measurement(ONE)]) == []
