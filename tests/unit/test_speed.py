"""Time budgets at the baseline's recording speed (gate/speed.py), through compare() and the
budget check as the session runs them (session/verdict.py)."""

from __future__ import annotations

from dataclasses import replace

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.budget import check, time_figures
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.gate.marker import neuron_budget
from pytest_neuronperf.gate.speed import at_recording_speed
from pytest_neuronperf.gate.ticks import COMPUTE, DISPATCH, MEMORY
from pytest_neuronperf.model import Measurement, Work
from pytest_neuronperf.stats import Stats

SPREAD = [1 + 0.002 * (i - 4.5) for i in range(10)]  # rounds within ±1%


def rounds(level: float) -> Stats:
    return Stats.of([level * v for v in SPREAD])


def region(
    *,
    host: float = 100.0,
    device: float = 80.0,
    memory: float = 10.0,
    dispatch: float = 2.0,
    compute: float = 20.0,
    device_tick: float = 10.0,
    ops: int = 1,
    flops: int = 1_000,
) -> Measurement:
    """A host-timed region of ``host`` µs a round (``device`` µs profiled), beside memory,
    dispatch and compute ticks and the profiled rounds' tick of the given µs; 1 FLOP a
    byte (``flops`` on 1,000 bytes), so by default only the memory tick judges it."""
    return Measurement(
        test_id="t.py::t",
        region="r",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=ops,
        kernels=1,
        op_counts={"aten::mul": ops},
        kernel_counts={"aten::mul": 1},
        device_us=rounds(device),
        host_us=rounds(host),
        rounds=10,
        reference_us=Stats.of([memory] * 10),
        host_relative=rounds(host / memory),
        dispatch_reference_us=Stats.of([dispatch] * 10),
        host_relative_dispatch=rounds(host / dispatch),
        compute_reference_us=Stats.of([compute] * 10),
        host_relative_compute=rounds(host / compute),
        device_reference_us=Stats.of([device_tick] * 10),
        work=Work(flops=flops, bytes_read=1_000, bytes_written=0),
    )


RECORDED = Entry.of(region())


def test_a_process_running_at_half_speed_is_judged_at_the_recordings() -> None:
    """Everything twice as slow, region and ticks: at the recording's speed it took what
    it took then, so a budget it met then holds; as measured, it would fail."""
    slow = region(host=200.0, device=160.0, memory=20.0, dispatch=4.0, compute=40.0,
                  device_tick=20.0)  # fmt: skip
    speed = at_recording_speed(RECORDED, slow)
    assert speed["host_us"].stats.median == 100.0
    assert speed["host_us"].tick == MEMORY
    assert speed["device_us"].stats.median == 80.0
    budget = neuron_budget(max_host_us=120, max_device_us=100)
    assert {v.metric for v in check(budget, [slow])} == {"max_host_us", "max_device_us"}
    assert check(budget, [slow], speeds={"r": speed}) == []
    # A region slower against its own ticks is over at the recording's speed too.
    slower = replace(slow, host_us=rounds(260.0), device_us=rounds(220.0))
    over = check(budget, [slower], speeds={"r": at_recording_speed(RECORDED, slower)})
    assert {v.metric for v in over} == {"max_host_us", "max_device_us"}
    assert "130.0 µs of host time at the baseline's speed (memory-bound tick)" in over[1].sentence


def test_host_time_is_over_only_when_it_is_over_at_every_tick_that_judges_it() -> None:
    """A region the dispatch tick judges too (12 ops of 2 µs in 100): the memory tick ran
    twice as slow, the dispatch tick as fast as when recorded. At the memory tick's speed it
    took 50 µs, at the dispatch tick's 100: a budget of 80 is over at one tick only."""
    recorded = Entry.of(region(ops=12))
    now = region(ops=12, memory=20.0)
    speed = at_recording_speed(recorded, now)
    assert (speed["host_us"].tick, speed["host_us"].stats.median) == (MEMORY, 50.0)
    assert check(neuron_budget(max_host_us=80), [now], speeds={"r": speed}) == []
    assert check(neuron_budget(max_host_us=45), [now], speeds={"r": speed}) != []
    # Arithmetic-heavy: the compute tick judges it beside the memory tick.
    heavy = Entry.of(region(flops=43_000))
    fast_compute = region(flops=43_000, compute=10.0)
    speed = at_recording_speed(heavy, fast_compute)
    assert (speed["host_us"].tick, speed["host_us"].stats.median) == (MEMORY, 100.0)
    # With two ticks it is the one that reads the region lowest, not the first.
    slow_memory = region(flops=43_000, memory=40.0)
    assert at_recording_speed(heavy, slow_memory)["host_us"].tick == MEMORY
    slow_compute = region(flops=43_000, compute=80.0)
    assert at_recording_speed(heavy, slow_compute)["host_us"].tick == COMPUTE
    assert DISPATCH not in {at_recording_speed(heavy, m)["host_us"].tick for m in (now,)}


def test_compare_hands_the_speeds_on_only_where_times_are_judged_by_reference() -> None:
    slow = region(host=200.0, memory=20.0)
    c = compare(RECORDED, slow, tolerance=0.1, host_timed=True)
    assert c.at_speed["host_us"].stats.median == 100.0
    # Without reference ticks (--neuron-profile-reference off), or recorded with another
    # torch, the times are judged as measured.
    assert (
        compare(RECORDED, slow, tolerance=0.1, host_timed=True, use_reference=False).at_speed == {}
    )
    other_torch = replace(RECORDED, environment={"torch": "2.0"})
    now = replace(slow, environment={"torch": "2.13"})
    assert compare(other_torch, now, tolerance=0.1, host_timed=True).at_speed == {}
    assert compare(None, slow, tolerance=0.1, host_timed=True).at_speed == {}
    # A side without the tick: that time is judged as measured.
    untimed = replace(slow, device_reference_us=None)
    assert set(at_recording_speed(RECORDED, untimed)) == {"host_us"}


def test_the_budget_cell_says_where_a_time_was_taken_at_the_baselines_speed() -> None:
    slow = region(host=200.0, memory=20.0)
    speed = {"r": at_recording_speed(RECORDED, slow)}
    [cell] = time_figures(neuron_budget(max_host_us=150), slow, speeds=speed)
    assert cell.startswith(
        "max_host_us: median 100.0 µs at the baseline's speed (memory-bound tick), 95% CI"
    )
    [raw] = time_figures(neuron_budget(max_host_us=150), slow)
    assert raw.startswith("max_host_us: median 200.0 µs, 95% CI")
