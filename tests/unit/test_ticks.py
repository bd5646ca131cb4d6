"""Which reference ticks judge a region's host time (gate/ticks.py), and the compute and
millisecond ticks the window times for them (measure/window.py)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import replace

import pytest

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.gate.settled import window_settled
from pytest_neuronperf.gate.ticks import (
    COMPUTE,
    COMPUTE_INTENSITY,
    DISPATCH,
    DISPATCH_SHARE,
    LONG,
    MEMORY,
    judging_kinds,
    recorded_spread,
)
from pytest_neuronperf.measure.reference import LONG_REGION_US
from pytest_neuronperf.measure.window import (
    COMPUTE_TICKS_PER_ROUND,
    LONG_TICKS_PER_ROUND,
    HostSamples,
    sample_host,
)
from pytest_neuronperf.model import ROUND_SAMPLES, Measurement, Work
from pytest_neuronperf.stats import Stats

BASE = [10.0 + 0.01 * i for i in range(10)]


def region(
    memory: float, dispatch: float, compute: float, *, flops: int | None, ops: int = 1
) -> Measurement:
    """A host-timed measurement whose rounds against the memory, dispatch and compute ticks
    (10, 2 and 20 µs) are each a steady base times the given factor; ``flops`` of work on
    1,000 bytes read (None: work not counted); ``ops`` of 2 µs dispatch each in its 104.5 µs
    (DISPATCHING makes the dispatch tick judge it)."""
    times = [100.0 + i for i in range(10)]
    work = None if flops is None else Work(flops=flops, bytes_read=1_000, bytes_written=0)
    return Measurement(
        test_id="t.py::t",
        region="mm",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=ops,
        kernels=1,
        op_counts={"aten::mm": 1},
        kernel_counts={"aten::mm": 1},
        device_us=Stats.of(times),
        host_us=Stats.of(times),
        rounds=10,
        reference_us=Stats.of([10.0] * 10),
        host_relative=Stats.of([v * memory for v in BASE]),
        dispatch_reference_us=Stats.of([2.0] * 10),
        host_relative_dispatch=Stats.of([v * 5 * dispatch for v in BASE]),
        compute_reference_us=Stats.of([20.0] * 10),
        host_relative_compute=Stats.of([v / 2 * compute for v in BASE]),
        work=work,
    )


MATMUL = 43_000  # 43 FLOPs a byte: a 256x256 matmul
DISPATCHING = 12  # 12 ops x 2 µs = 23% of the region's 104.5 µs
ELEMENTWISE = 1_000  # 1 FLOP a byte


def judged(entry_flops: int | None, now: Measurement, ops: int = 1) -> tuple[str, tuple[str, ...]]:
    entry = Entry.of(region(1, 1, 1, flops=entry_flops, ops=ops))
    c = compare(entry, now, tolerance=0.1, host_timed=True)
    return c.status, tuple(kind for kind, _ in c.references)


def test_the_compute_tick_judges_arithmetic_heavy_regions_and_those_of_unknown_kind() -> None:
    with_compute = (MEMORY, COMPUTE)
    at = int(COMPUTE_INTENSITY * 1_000)
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=MATMUL)), None) == with_compute
    # The boundary: COMPUTE_INTENSITY FLOPs a byte is arithmetic-heavy, a FLOP less is not.
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=at)), None) == with_compute
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=at - 1)), None) == (MEMORY,)
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=ELEMENTWISE)), None) == (MEMORY,)
    # Not counted on either side: its kind unknown, the compute tick has its say.
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=None)), None) == with_compute
    # The measurement's count wins where it has one; the entry's where it has none.
    now = region(1, 1, 1, flops=ELEMENTWISE)
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=MATMUL)), now) == (MEMORY,)
    uncounted = region(1, 1, 1, flops=None)
    assert judging_kinds(Entry.of(region(1, 1, 1, flops=MATMUL)), uncounted) == with_compute


def test_the_dispatch_tick_judges_a_region_whose_ops_dispatch_is_a_share_of_its_time() -> None:
    """2 µs a dispatch in 104.5 µs: seven ops make 13.4% (at least DISPATCH_SHARE), six
    make 11.5% (less)."""
    assert DISPATCH_SHARE == 0.125
    assert 7 * 2.0 >= DISPATCH_SHARE * 104.5 > 6 * 2.0
    for ops, kinds in ((7, (MEMORY, DISPATCH)), (6, (MEMORY,)), (DISPATCHING, (MEMORY, DISPATCH))):
        entry = Entry.of(region(1, 1, 1, flops=ELEMENTWISE, ops=ops))
        assert judging_kinds(entry, None) == kinds
    heavy = Entry.of(region(1, 1, 1, flops=MATMUL, ops=DISPATCHING))
    assert judging_kinds(heavy, None) == (MEMORY, DISPATCH, COMPUTE)
    # An entry recorded without the dispatch tick has no share to read.
    older = Entry.of(
        replace(
            region(1, 1, 1, flops=ELEMENTWISE, ops=DISPATCHING),
            dispatch_reference_us=None,
            host_relative_dispatch=None,
        )
    )
    assert judging_kinds(older, None) == (MEMORY,)


def test_a_drifting_dispatch_tick_hides_no_slowdown_of_a_region_it_does_not_follow() -> None:
    """The gate run's misses: a multiply-and-sum 50% slower read -2% against a dispatch tick
    that ran slower too. A region whose time is not dispatch is judged without that tick;
    one whose time is still needs both to agree."""
    assert judged(ELEMENTWISE, region(1.5, 0.98, 1.0, flops=ELEMENTWISE)) == (
        "regressed",
        (MEMORY,),
    )
    dispatching = region(1.5, 0.98, 1.0, flops=ELEMENTWISE, ops=DISPATCHING)
    assert judged(ELEMENTWISE, dispatching, ops=DISPATCHING) == ("same", (MEMORY, DISPATCH))


def test_small_ticks_that_drifted_do_not_fail_a_matmul_the_compute_tick_follows() -> None:
    """RESULTS.md's false failure: both small ticks sped up, the matmul held its time; its
    ratio to them rose 30-50% while its ratio to a matmul tick did not."""
    status, kinds = judged(MATMUL, region(1.3, 1.5, 1.02, flops=MATMUL))
    assert status == "same" and kinds == (MEMORY, COMPUTE)
    # The other way: small ticks slowed, the matmul did not: no false "improved" either.
    assert judged(MATMUL, region(0.7, 0.75, 0.99, flops=MATMUL))[0] == "same"
    # A matmul that really slowed moves against both of its ticks: regressed, on the smaller.
    c = compare(
        Entry.of(region(1, 1, 1, flops=MATMUL)),
        region(1.4, 1.5, 1.3, flops=MATMUL),
        tolerance=0.1,
        host_timed=True,
    )
    assert c.status == "regressed" and c.host is not None
    assert c.host.ratio == pytest.approx(1.3)
    assert (
        "host time regressed +30% against both reference workloads (memory-bound +40%, "
        "compute-bound +30%: judged on the smaller; median"
    ) in c.failures[0]
    # The log reads which ticks judged it, and what each moved, as data.
    assert [(k, round(ch.ratio, 2)) for k, ch in c.references] == [(MEMORY, 1.4), (COMPUTE, 1.3)]
    assert c.cell() == "regressed +30%"
    # A dispatch-heavy matmul region is judged by all three.
    c = compare(
        Entry.of(region(1, 1, 1, flops=MATMUL, ops=DISPATCHING)),
        region(1.4, 1.5, 1.3, flops=MATMUL, ops=DISPATCHING),
        tolerance=0.1,
        host_timed=True,
    )
    assert "against all 3 reference workloads" in c.failures[0]


def test_a_data_bound_region_is_not_held_back_by_the_compute_tick() -> None:
    """An elementwise region that slowed against the memory tick regressed, whatever the
    compute tick did: it does not follow such a region."""
    status, kinds = judged(ELEMENTWISE, region(1.3, 1.35, 1.0, flops=ELEMENTWISE))
    assert (status, kinds) == ("regressed", (MEMORY,))
    # Where two ticks judge, they still must agree with each other.
    dispatching = region(1.3, 1.0, 1.3, flops=ELEMENTWISE, ops=DISPATCHING)
    assert judged(ELEMENTWISE, dispatching, ops=DISPATCHING)[0] == "same"


def test_an_entry_without_the_compute_tick_is_judged_on_the_others_and_rewritten() -> None:
    older = Entry.of(
        replace(
            region(1, 1, 1, flops=MATMUL), compute_reference_us=None, host_relative_compute=None
        )
    )
    now = region(1.3, 1.4, 1.0, flops=MATMUL)
    c = compare(older, now, tolerance=0.1, host_timed=True)
    assert c.status == "regressed"
    assert [k for k, _ in c.references] == [MEMORY]
    assert c.needs_write
    same = region(1, 1, 1, flops=MATMUL)
    assert not compare(Entry.of(same), same, tolerance=0.1, host_timed=True).needs_write
    damaged = Entry.of(same).to_dict()
    damaged["host_relative_compute"]["samples"][2] = 0
    with pytest.raises(ValueError, match="host_relative_compute samples must all be > 0"):
        Entry.from_dict(damaged)


def samples_of(m: Measurement) -> HostSamples:
    def values(s: Stats | None) -> list[float]:
        return list(s.samples) if s is not None else []

    return HostSamples(
        list(m.host_us.samples),
        values(m.reference_us),
        values(m.host_relative),
        values(m.dispatch_reference_us),
        values(m.host_relative_dispatch),
        1_000,
        None,
        compute_us=values(m.compute_reference_us),
        relative_compute=values(m.host_relative_compute),
    )


def test_the_window_stops_once_the_compute_tick_says_a_matmul_is_unchanged() -> None:
    entry = Entry.of(region(1, 1, 1, flops=MATMUL))
    drifted = samples_of(region(1.3, 1.08, 1.0, flops=MATMUL))
    why = window_settled(entry, drifted, tolerance=0.1, by_reference=True)
    assert why is not None and "inside the tolerance against the compute-bound tick" in why
    # A dispatch-heavy elementwise region with the same figures is not settled: its two
    # ticks neither agree on a change nor put it inside the band with the margin.
    entry = Entry.of(region(1, 1, 1, flops=ELEMENTWISE, ops=DISPATCHING))
    drifted = samples_of(region(1.3, 1.08, 1.0, flops=ELEMENTWISE, ops=DISPATCHING))
    assert window_settled(entry, drifted, tolerance=0.1, by_reference=True) is None


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


class CountingReference:
    """Free ticks: memory 10 µs, dispatch 2 µs; compute 80 µs at the ``slow``-th tick of
    each round (a slow moment; 1: the first), 20 µs at the others."""

    def __init__(self, slow: int = 1) -> None:
        self.compute_ticks = 0
        self.slow = slow % COMPUTE_TICKS_PER_ROUND

    def tick(self) -> float:
        return 10.0

    def dispatch_tick(self) -> float:
        return 2.0

    def compute_tick(self) -> float:
        self.compute_ticks += 1
        return 80.0 if self.compute_ticks % COMPUTE_TICKS_PER_ROUND == self.slow else 20.0


@pytest.mark.parametrize("slow", [1, COMPUTE_TICKS_PER_ROUND])
def test_the_compute_tick_is_timed_a_few_times_a_round_and_its_median_judges_the_calls(
    slow: int,
) -> None:
    """The slow tick first or last in its round: neither the first nor the latest tick, but
    the median of the round's, judges its calls."""
    clock = Clock()

    def call() -> None:
        clock.now += 1_000  # 1 µs calls

    ref = CountingReference(slow)
    s = sample_host(call, rounds=2, window_s=0.002, reference=ref, clock=clock)  # type: ignore[arg-type]
    # 1 ms rounds of 1 µs calls: a compute tick at the start and every quarter of the round.
    assert s.calls == 2_000
    assert ref.compute_ticks == 2 * COMPUTE_TICKS_PER_ROUND
    assert s.compute_us == [20.0, 20.0]  # per round the median of its four ticks
    # A quarter of each round's calls ran after the 80 µs tick: paired call by call, a
    # quarter of the ratios would be 1/80, and so the low decile; against the round's
    # median tick every ratio is 1/20.
    assert s.relative_compute == [pytest.approx(1 / 20)] * 2
    assert s.relative == [pytest.approx(0.1)] * 2
    # Without a window, one call a round, each after its own compute tick.
    ref = CountingReference()
    s = sample_host(call, rounds=3, window_s=0.0, reference=ref, clock=clock)  # type: ignore[arg-type]
    assert ref.compute_ticks == 3 and len(s.relative_compute) == 3


def test_the_window_stops_once_one_tick_rules_out_a_rise_and_another_a_fall() -> None:
    """A change needs every tick that judges (a dispatch-heavy region's two): against
    memory +12% (no fall possible) and dispatch -8% (no rise possible) neither a
    regression nor an improvement can be called."""
    entry = Entry.of(region(1, 1, 1, flops=ELEMENTWISE, ops=DISPATCHING))
    split = samples_of(region(1.12, 0.92, 1.0, flops=ELEMENTWISE, ops=DISPATCHING))
    why = window_settled(entry, split, tolerance=0.1, by_reference=True)
    assert why == (
        "host time can be neither regressed against the dispatch-bound tick (95% CI -8%..-8%) "
        "nor improved against the memory-bound tick (95% CI +12%..+12%)"
    )
    now = region(1.12, 0.92, 1.0, flops=ELEMENTWISE, ops=DISPATCHING)
    assert compare(entry, now, tolerance=0.1, host_timed=True).status == "same"
    # Dispatch +9%: inside the band but not by the margin, so a rise is still possible.
    rising = samples_of(region(1.12, 1.09, 1.0, flops=ELEMENTWISE, ops=DISPATCHING))
    assert window_settled(entry, rising, tolerance=0.1, by_reference=True) is None
    # Both below the band's middle: no rise is possible, but a fall still is: sample on.
    falling = samples_of(region(0.88, 0.92, 1.0, flops=ELEMENTWISE, ops=DISPATCHING))
    assert window_settled(entry, falling, tolerance=0.1, by_reference=True) is None


def test_raw_host_time_names_no_reference() -> None:
    entry = Entry.of(region(1, 1, 1, flops=MATMUL))
    c = compare(entry, region(1.3, 1.5, 1.3, flops=MATMUL), tolerance=0.1, host_timed=True,
                use_reference=False)  # fmt: skip
    assert c.references == () and c.status == "same"


# --- the millisecond tick -------------------------------------------------------------------


def long_region(memory: float, compute: float, long: float, *, host_us: float) -> Measurement:
    """A matmul region whose calls take about ``host_us``, its rounds against the memory and
    compute ticks ``memory`` and ``compute`` times a steady base, and against a 1,000 µs
    millisecond tick ``long`` times it."""
    times = [host_us + 0.1 * i for i in range(10)]
    return replace(
        region(memory, 1, compute, flops=MATMUL),
        host_us=Stats.of(times),
        device_us=Stats.of(times),
        long_reference_us=Stats.of([1_000.0] * 10),
        host_relative_long=Stats.of([v / 10 * long for v in BASE]),
    )


def test_a_millisecond_region_is_judged_against_the_millisecond_tick_alone() -> None:
    """bench_models' Llama: unchanged, it read +17% against the compute tick in another
    process; the millisecond tick held. The microsecond ticks' drift neither fails it nor
    hides a slowdown the millisecond tick shows."""
    entry = Entry.of(long_region(1, 1, 1, host_us=2_000))
    drifted = compare(
        entry, long_region(1.3, 1.4, 1.02, host_us=2_000), tolerance=0.1, host_timed=True
    )
    assert drifted.status == "same"
    assert [k for k, _ in drifted.references] == [LONG]
    # The memory tick's own median moved 20%: the figures read are the millisecond tick's.
    now = replace(long_region(1.0, 0.95, 1.3, host_us=2_600), reference_us=Stats.of([12.0] * 10))
    slower = compare(entry, now, tolerance=0.1, host_timed=True)
    assert slower.status == "regressed" and slower.host is not None
    assert slower.host.ratio == pytest.approx(1.3)
    assert (
        "host time regressed +30% against the millisecond reference workload (median 2,600.4 vs "
        "2,000.5 µs as measured, reference 1,000.0 vs 1,000.0 µs"
    ) in slower.failures[0]
    assert slower.judged is not None and slower.judged.references == pytest.approx(1.0)
    faster = compare(
        entry, long_region(1.0, 1.0, 0.7, host_us=1_400), tolerance=0.1, host_timed=True
    )
    assert faster.status == "improved"


def test_the_millisecond_tick_judges_from_the_recorded_median_of_a_millisecond_up() -> None:
    at = LONG_REGION_US + 0.45  # the median of long_region's rounds is host_us + 0.45
    assert LONG_REGION_US == 1_000.0
    assert judging_kinds(Entry.of(long_region(1, 1, 1, host_us=LONG_REGION_US)), None) == (LONG,)
    shorter = Entry.of(long_region(1, 1, 1, host_us=LONG_REGION_US - 0.5))
    assert shorter.host_us.median < LONG_REGION_US <= at
    assert judging_kinds(shorter, None) == (MEMORY, COMPUTE)
    # The entry's median decides, not the measurement's: a region that slowed past a
    # millisecond, or sped up below it, is judged as it was recorded.
    now = long_region(1, 1, 1.3, host_us=LONG_REGION_US - 100)
    assert judging_kinds(Entry.of(long_region(1, 1, 1, host_us=2_000)), now) == (LONG,)


def test_without_the_millisecond_tick_on_either_side_the_microsecond_ticks_judge() -> None:
    recorded = long_region(1, 1, 1, host_us=2_000)
    untimed = replace(recorded, long_reference_us=None, host_relative_long=None)
    # An entry recorded before the tick existed: judged as before, and rewritten with it.
    c = compare(Entry.of(untimed), long_region(1.3, 1.3, 1.0, host_us=2_000), tolerance=0.1,
                host_timed=True)  # fmt: skip
    assert c.status == "regressed" and [k for k, _ in c.references] == [MEMORY, COMPUTE]
    assert c.needs_write
    # A measurement without it (its profiled rounds ran shorter): the same.
    now = replace(long_region(1.3, 1.3, 1.0, host_us=2_000), host_relative_long=None)
    c = compare(Entry.of(recorded), now, tolerance=0.1, host_timed=True)
    assert c.status == "regressed" and [k for k, _ in c.references] == [MEMORY, COMPUTE]
    assert "against both reference workloads" in c.failures[0]
    assert not compare(Entry.of(recorded), recorded, tolerance=0.1, host_timed=True).needs_write


def test_a_raw_speed_up_is_never_a_regression_against_the_millisecond_tick() -> None:
    """The issue's pin, for the tick that now judges millisecond regions: raw -10% with the
    reference -20% is the same, and the mirror."""
    entry = Entry.of(long_region(1, 1, 1, host_us=2_000))
    sped = long_region(1, 1, 1.125, host_us=1_800)  # the tick ran 20% faster
    assert compare(entry, sped, tolerance=0.1, host_timed=True).status == "same"
    slowed = long_region(1, 1, 1 / 1.125, host_us=2_200)
    assert compare(entry, slowed, tolerance=0.1, host_timed=True).status == "same"


def test_the_window_stops_once_the_millisecond_tick_settles_a_millisecond_region() -> None:
    entry = Entry.of(long_region(1, 1, 1, host_us=2_000))
    drifted = replace(
        samples_of(long_region(1.3, 1.4, 1.0, host_us=2_000)),
        long_us=[1_000.0] * 10,
        relative_long=[v / 10 for v in BASE],
    )
    why = window_settled(entry, drifted, tolerance=0.1, by_reference=True)
    assert why is not None and "inside the tolerance against the millisecond tick" in why
    # Without it in the window, the microsecond ticks decide, as compare() then does.
    untimed = samples_of(long_region(1.3, 1.4, 1.0, host_us=2_000))
    why = window_settled(entry, untimed, tolerance=0.1, by_reference=True)
    assert why == "host time regressed (memory-bound +30%, compute-bound +40%)"


class LongReference(CountingReference):
    """CountingReference with a millisecond tick of 1,000 µs, counted, and when it was
    built on the fake clock."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self.long_ticks = 0
        self.prepared_at: list[int] = []

    def prepare_long(self) -> None:
        self.prepared_at.append(self.clock.now)

    def long_tick(self) -> float:
        self.long_ticks += 1
        return 1_000.0


def test_the_millisecond_tick_is_timed_a_few_times_a_round_only_where_asked() -> None:
    clock = Clock()

    def call() -> None:
        clock.now += 100_000  # 100 µs calls

    ref = LongReference(clock)
    s = sample_host(call, rounds=2, window_s=0.02, reference=ref, clock=clock, long_tick=True)  # type: ignore[arg-type]
    assert ref.long_ticks == 2 * LONG_TICKS_PER_ROUND
    assert s.long_us == [1_000.0, 1_000.0]
    assert s.relative_long == [pytest.approx(0.1)] * 2
    # Built before the window's clock started: its warm-up is not in any round.
    assert ref.prepared_at == [0]
    plain = LongReference(clock)
    s = sample_host(call, rounds=2, window_s=0.02, reference=plain, clock=clock)  # type: ignore[arg-type]
    assert plain.long_ticks == 0 and plain.prepared_at == []
    assert s.long_us == [] and s.relative_long == []


# --- how far a pooled entry's recording processes ran apart ----------------------------------


def pooled_entry(base: Measurement, speeds: Mapping[str, tuple[float, ...]]) -> Entry:
    """``base`` as an entry pooled over one recording process per speed, each running that
    many times as long against the tick named (``speeds``' keys: fields of the entry), on
    the cpu backend."""
    n = len(next(iter(speeds.values())))
    changes: dict[str, object] = {"processes": n, "environment": {"backend": "cpu"}}
    for name in ROUND_SAMPLES:
        stats = getattr(base, name)
        if stats is None:
            continue
        factors = speeds.get(name, (1.0,) * n)
        changes[name] = Stats.of([v * f for f in factors for v in stats.samples])
    return replace(Entry.of(base), **changes)  # type: ignore[arg-type]


def plain_offsets(samples: list[float], processes: int) -> tuple[float, float]:
    rounds = len(samples) // processes
    whole = statistics.median(samples)
    medians = [statistics.median(samples[i * rounds : (i + 1) * rounds]) for i in range(processes)]
    return min(medians) / whole, max(medians) / whole


def test_a_recordings_spread_is_the_widest_over_the_ticks_that_judge_it() -> None:
    # An elementwise region of one op: the memory tick alone judges it (kinds_of), so the
    # compute tick's wider spread is not what a compare run would be held to.
    base = region(1, 1, 1, flops=ELEMENTWISE)
    speeds = {"host_relative": (1.0, 1.3, 0.9), "host_relative_compute": (0.5, 1.0, 2.0)}
    entry = pooled_entry(base, speeds)
    assert judging_kinds(entry, None) == (MEMORY,)
    assert entry.host_relative is not None
    fast, slow = plain_offsets(list(entry.host_relative.samples), 3)
    got = recorded_spread(entry)
    assert (got.fast, got.slow) == pytest.approx((fast, slow))
    # A matmul: the memory and compute ticks both judge it, and the widest edge of each.
    entry = pooled_entry(region(1, 1, 1, flops=MATMUL), speeds)
    assert judging_kinds(entry, None) == (MEMORY, COMPUTE)
    assert entry.host_relative_compute is not None
    compute = plain_offsets(list(entry.host_relative_compute.samples), 3)
    got = recorded_spread(entry)
    assert (got.fast, got.slow) == pytest.approx((min(fast, compute[0]), max(slow, compute[1])))


def test_a_millisecond_recordings_spread_is_its_millisecond_ticks_alone() -> None:
    # The millisecond tick alone judges a region of 1 ms and more: the microsecond ticks'
    # wider spread is not what a compare run would be held to.
    speeds = {"host_relative_long": (1.0, 1.2, 0.95), "host_relative": (0.5, 1.0, 2.0)}
    entry = pooled_entry(long_region(1, 1, 1, host_us=2_000), speeds)
    assert judging_kinds(entry, None) == (LONG,)
    assert entry.host_relative_long is not None
    fast, slow = plain_offsets(list(entry.host_relative_long.samples), 3)
    got = recorded_spread(entry)
    assert (got.fast, got.slow) == pytest.approx((fast, slow))
    assert got.wider_than(0.1) and not got.wider_than(0.3)


def test_a_recording_without_ticks_spreads_by_its_raw_rounds() -> None:
    bare = replace(
        region(1, 1, 1, flops=ELEMENTWISE),
        reference_us=None,
        host_relative=None,
        dispatch_reference_us=None,
        host_relative_dispatch=None,
        compute_reference_us=None,
        host_relative_compute=None,
    )
    entry = pooled_entry(bare, {"host_us": (1.0, 1.5), "device_us": (1.0, 1.0)})
    cpu = replace(entry, environment={"backend": "cpu"})
    fast, slow = plain_offsets(list(entry.host_us.samples), 2)
    assert (recorded_spread(cpu).fast, recorded_spread(cpu).slow) == pytest.approx((fast, slow))
    # A device backend is judged on device time, whose processes agreed here.
    device = replace(entry, environment={"backend": "cuda"})
    assert recorded_spread(device).wider_than(0.01) is False
    assert recorded_spread(cpu).wider_than(0.1) is True
    # Its host time too under --neuron-profile-compare-host: raw, as no tick was timed.
    both = recorded_spread(device, host_too=True)
    assert (both.fast, both.slow) == pytest.approx((fast, slow))
    # An entry that does not say its backend is read as the cpu's.
    unsaid = recorded_spread(replace(entry, environment={}))
    assert (unsaid.fast, unsaid.slow) == pytest.approx((fast, slow))


def test_a_device_recordings_spread_is_its_device_time_and_host_time_when_compared() -> None:
    # Host ticks 1.0 and 1.5 apart, device time steady: a device backend judges device time.
    base = region(1, 1, 1, flops=ELEMENTWISE)
    host_apart = replace(
        pooled_entry(base, {"host_relative": (1.0, 1.5), "device_us": (1.0, 1.0)}),
        environment={"backend": "cuda"},
    )
    assert not recorded_spread(host_apart).wider_than(0.01)
    # Under --neuron-profile-compare-host its host time is judged too, by the ticks.
    assert host_relative_offsets(host_apart) == pytest.approx(
        (
            recorded_spread(host_apart, host_too=True).fast,
            recorded_spread(host_apart, host_too=True).slow,
        )
    )
    assert recorded_spread(host_apart, host_too=True).wider_than(0.1)
    # Device time apart, host ticks steady: the device spread, whatever the ticks say.
    device_apart = replace(
        pooled_entry(base, {"host_relative": (1.0, 1.0), "device_us": (1.0, 1.5)}),
        environment={"backend": "cuda"},
    )
    fast, slow = plain_offsets(list(device_apart.device_us.samples), 2)
    got = recorded_spread(device_apart)
    assert (got.fast, got.slow) == pytest.approx((fast, slow))
    assert recorded_spread(device_apart, host_too=True).wider_than(0.1)


def host_relative_offsets(entry: Entry) -> tuple[float, float]:
    assert entry.host_relative is not None
    return plain_offsets(list(entry.host_relative.samples), entry.processes)
