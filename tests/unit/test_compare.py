"""The regression rule and the store, as pure functions (no profiler, no pytest run)."""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import helpers
import pytest

from pytest_neuronperf.baselines import store as bstore
from pytest_neuronperf.baselines import update
from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import BaselineError, Baselines, NewerSchemaError
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.model import APART_NOTE, Measurement
from pytest_neuronperf.settings import SettingError, parse_tolerance, resolve
from pytest_neuronperf.stats import MIN_ROUNDS, Stats, compare_times, ratio_interval


def noisy(center: float, n: int, rng: random.Random, spread: float = 0.1) -> list[float]:
    # Log-normal per-round noise plus the odd preempted round, as on a shared CPU.
    out = [center * rng.lognormvariate(0, spread) for _ in range(n)]
    out[rng.randrange(n)] *= 5
    return out


def test_aa_noise_never_fails() -> None:
    rng = random.Random(1)
    verdicts = [
        compare_times(noisy(100, 10, rng), noisy(100, 10, rng), 0.10).verdict for _ in range(150)
    ]
    assert "regressed" not in verdicts
    assert "improved" not in verdicts


def test_a_25_percent_slowdown_is_caught_with_10_rounds() -> None:
    rng = random.Random(2)
    caught = sum(
        compare_times(noisy(100, 10, rng, 0.05), noisy(125, 10, rng, 0.05), 0.10).verdict
        == "regressed"
        for _ in range(150)
    )
    assert caught / 150 >= 0.95


def test_a_slowdown_inside_the_tolerance_passes_even_when_certain() -> None:
    base = [100.0 + i * 0.01 for i in range(10)]
    change = compare_times(base, [v * 1.08 for v in base], 0.10)
    assert change.verdict == "same"
    assert change.low > 1.0  # credible, yet within tolerance


def test_verdict_is_deterministic_and_interval_brackets_the_ratio() -> None:
    rng = random.Random(3)
    b, c = noisy(100, 10, rng), noisy(130, 10, rng)
    assert ratio_interval(b, c) == ratio_interval(b, c)
    point, low, high = ratio_interval(b, c)
    assert low <= point <= high


def test_improvement_and_too_few_rounds() -> None:
    base = [100.0 + i for i in range(10)]
    assert compare_times(base, [v / 2 for v in base], 0.10).verdict == "improved"
    few = compare_times(base[: MIN_ROUNDS - 1], [v * 3 for v in base], 0.10)
    assert few.verdict == "unjudged" and "rounds" in few.reason
    with pytest.raises(ValueError, match="tolerance"):
        compare_times(base, base, 0)


def measurement(ops: dict[str, int], device: list[float], region: str = "r") -> Measurement:
    return helpers.measurement(region, ops=ops, device=device)


TIMES = [100.0 + i for i in range(10)]


def test_compare_fails_an_extra_op_with_the_multiset_diff() -> None:
    before = Entry.of(measurement({"aten::rms_norm": 1}, TIMES))
    after = measurement({"aten::mul": 3, "aten::mean": 1, "aten::add": 1, "aten::rsqrt": 1}, TIMES)
    c = compare(before, after, tolerance=0.1)
    assert c.status == "regressed"
    assert c.failures[0] == (
        "neuronperf baseline: region 'r' dispatched 6 ops, baseline 1 "
        "(+ aten::mul ×3, + aten::add ×1, + aten::mean ×1, + aten::rsqrt ×1, "
        "- aten::rms_norm ×1)"
    )
    # The other way round is an improvement, which passes.
    back = compare(Entry.of(after), measurement({"aten::rms_norm": 1}, TIMES), tolerance=0.1)
    assert back.status == "improved" and not back.failures and back.needs_write
    assert back.notes[0].endswith(": improved, run --neuron-profile-update to keep it")


def test_a_time_improvement_says_how_to_keep_it() -> None:
    before = Entry.of(measurement({"aten::mul": 1}, TIMES))
    c = compare(before, measurement({"aten::mul": 1}, [v / 2 for v in TIMES]), tolerance=0.1)
    assert c.status == "improved" and not c.failures
    (gain,) = [n for n in c.notes if " improved " in n]
    assert gain.startswith("neuronperf baseline: region 'r' device time improved -50% (")
    assert gain.endswith("; run --neuron-profile-update to keep it")


def test_compare_time_message_and_host_only_when_asked() -> None:
    before = Entry.of(measurement({"aten::mul": 1}, TIMES))
    c = compare(before, measurement({"aten::mul": 1}, [v * 2 for v in TIMES]), tolerance=0.1)
    assert c.status == "regressed"
    assert len(c.failures) == 1  # device only
    assert c.failures[0].startswith(
        "neuronperf baseline: region 'r' device time regressed +100% (median 209.0 vs 104.5 µs, "
        "95% CI +"
    )
    assert c.failures[0].endswith(", tolerance 10%)")
    host = compare(
        before,
        measurement({"aten::mul": 1}, [v * 2 for v in TIMES]),
        tolerance=0.1,
        compare_host=True,
    )
    assert any("host time regressed" in f for f in host.failures)


def timed_with_reference(times: list[float], reference: list[float]) -> Measurement:
    ref = Stats.of(reference)
    return replace(measurement({"aten::mul": 1}, times), reference_us=ref, device_reference_us=ref)


REF = [20.0 + (i % 3) * 0.1 for i in range(10)]


def test_times_are_judged_against_the_reference_both_ways() -> None:
    entry = Entry.of(timed_with_reference(TIMES, REF))
    assert entry.reference_us == Stats.of(REF) and entry.device_reference_us == Stats.of(REF)
    # The whole machine 2x slower: the reference says so, the region is unchanged.
    slow_machine = timed_with_reference([v * 2 for v in TIMES], [r * 2 for r in REF])
    c = compare(entry, slow_machine, tolerance=0.1)
    assert c.status == "same", c.failures
    # Without the reference the same figures fail: the reference is what passes them.
    raw = compare(entry, slow_machine, tolerance=0.1, use_reference=False)
    assert raw.status == "regressed"
    assert raw.failures[0].startswith(
        "neuronperf baseline: region 'r' device time regressed +100% (median 209.0 vs 104.5 µs, "
        "95% CI"
    )
    # A region 2x slower on a machine 1.25x slower still fails, by the part that is its own.
    slower = timed_with_reference([v * 2.5 for v in TIMES], [r * 1.25 for r in REF])
    c = compare(entry, slower, tolerance=0.1)
    assert c.status == "regressed"
    assert c.failures[0].startswith(
        "neuronperf baseline: region 'r' device time regressed +100% against the reference "
        "workload (median 261.2 vs 104.5 µs as measured, reference 25.1 vs 20.1 µs, 95% CI +"
    )
    assert c.cell() == "regressed +100%"
    # The references allow for the machine; they never turn a measured change around. A
    # region that ran 20% faster as measured while the reference ran 2x faster is not
    # regressed (1.6x against it), nor is one 20% slower beside a reference 2x slower
    # improved.
    faster = timed_with_reference([v * 0.8 for v in TIMES], [r * 0.5 for r in REF])
    c = compare(entry, faster, tolerance=0.1)
    assert c.status == "same" and c.judged is not None
    assert c.judged.judged == pytest.approx(1.6) and c.judged.overruled == "regressed"
    assert compare(entry, faster, tolerance=0.1, use_reference=False).status == "improved"
    slower = timed_with_reference([v * 1.2 for v in TIMES], [r * 2 for r in REF])
    c = compare(entry, slower, tolerance=0.1)
    assert c.status == "same" and c.judged is not None and c.judged.overruled == "improved"
    # Another torch version: the reference itself may have changed, so raw times.
    other_torch = replace(slow_machine, environment={**slow_machine.environment, "torch": "2.14"})
    assert compare(entry, other_torch, tolerance=0.1).status == "regressed"
    # No reference on either side (device backends, entries recorded with it off): raw times.
    plain = Entry.of(measurement({"aten::mul": 1}, TIMES))
    assert compare(plain, slow_machine, tolerance=0.1).status == "regressed"


def host_window(raw: float, refs: float) -> Measurement:
    """A host-timed (cpu) measurement whose rounds as measured are ``raw`` times TIMES and
    whose memory-bound tick ran ``refs`` times its 10 µs: its rounds against the tick are
    raw / refs times the recording's."""
    tick = [10.0 * refs * (1 + 0.001 * (i % 3)) for i in range(10)]
    host = [v * raw for v in TIMES]
    return replace(
        helpers.measurement(ops={"aten::mul": 1}, device=TIMES, host=host),
        reference_us=Stats.of(tick),
        host_relative=Stats.of([h / t for h, t in zip(host, tick, strict=True)]),
    )


@pytest.mark.parametrize(
    ("raw", "refs", "against_refs"),
    [
        # The figures: raw -10% beside references -20%, raw +10% beside +20%.
        (0.9, 0.8, ""),
        (1.1, 1.2, ""),
        # Past the tolerance against the tick alone, with its interval clear of it.
        (0.9, 0.7, "regressed"),
        (0.95, 0.7, "regressed"),
        (1.1, 1.4, "improved"),
        (1.05, 1.4, "improved"),
    ],
)
def test_a_raw_speed_up_is_never_regressed_nor_a_raw_slow_down_improved(
    raw: float, refs: float, against_refs: str
) -> None:
    entry = Entry.of(host_window(1.0, 1.0))
    c = compare(entry, host_window(raw, refs), tolerance=0.1, host_timed=True)
    assert c.status == "same" and not c.failures
    if against_refs:
        # The tick alone would have called it; the raw rounds overruled it, the row says so.
        assert c.judged is not None and c.judged.overruled == against_refs
        assert c.references[0][1].verdict == against_refs


@pytest.mark.parametrize(
    ("raw", "refs", "status"),
    [
        (1.3, 1.0, "regressed"),
        (1.5, 1.2, "regressed"),  # +25% against the tick, +50% as measured
        (1.3, 1.3, "same"),  # the machine, not the region
        # Unchanged as measured on a machine 30% faster: the region's own slowdown.
        (1.0, 0.7, "regressed"),
        (0.7, 1.0, "improved"),
        (0.6, 0.8, "improved"),
        (1.0, 1.4, "improved"),
    ],
)
def test_a_change_past_the_tolerance_both_raw_and_against_the_ticks_is_called(
    raw: float, refs: float, status: str
) -> None:
    entry = Entry.of(host_window(1.0, 1.0))
    c = compare(entry, host_window(raw, refs), tolerance=0.1, host_timed=True)
    assert c.status == status
    assert c.judged is not None and not c.judged.overruled


def test_same_entry_is_not_rewritten_and_new_is_strict() -> None:
    m = measurement({"aten::mul": 1}, TIMES)
    same = compare(Entry.of(m), m, tolerance=0.1)
    assert same.status == "same" and not same.needs_write and same.cell() == "same +0%"
    assert compare(None, m, tolerance=0.1).failures == ()
    strict = compare(None, m, tolerance=0.1, strict=True, where="x.json")
    assert strict.status == "new" and "no baseline in x.json" in strict.failures[0]


@pytest.mark.parametrize(
    ("raw", "fraction"), [("10", 0.10), ("10%", 0.10), ("2.5%", 0.025), (25, 0.25), ("0.5%", 0.005)]
)
def test_tolerance_is_a_percentage(raw: object, fraction: float) -> None:
    assert parse_tolerance(raw) == pytest.approx(fraction)


@pytest.mark.parametrize("raw", ["0.1", "-5", "abc", "0", "5000"])
def test_bad_tolerance_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_tolerance(raw)


def test_tolerance_setting_levels_and_source_in_error() -> None:
    assert resolve({}, {"neuron_profile_tolerance": "20"}, env={}).tolerance == 0.20
    env = {"NEURONPERF_TOLERANCE": "30%"}
    assert resolve({}, {"neuron_profile_tolerance": "20"}, env=env).tolerance == 0.30
    assert resolve({"tolerance": "40"}, {}, env=env).tolerance == 0.40
    with pytest.raises(SettingError, match=r"environment variable NEURONPERF_TOLERANCE='0\.1'"):
        resolve({}, {}, env={"NEURONPERF_TOLERANCE": "0.1"})
    assert resolve({"update": True}, {}, env={}).enabled, "update implies --neuron-profile"


def store(tmp_path: Path) -> Baselines:
    e = Entry.of(measurement({"aten::mul": 1}, TIMES))
    return Baselines(tmp_path / "cpu_x86_64.json", "cpu:x86_64", {"b.py::t": {"r": e}}).merged(
        {("a.py::t", "z"): e, ("a.py::t", "a"): e}
    )


def test_store_round_trips_sorted_with_samples_on_one_line(tmp_path: Path) -> None:
    s = store(tmp_path)
    bstore.write(s)
    text = s.path.read_text()
    assert json.loads(text)["schema_version"] == bstore.SCHEMA_VERSION
    assert text.index('"a.py::t"') < text.index('"b.py::t"')
    assert text.index('"a"') < text.index('"z"')
    assert '"samples": [100.0, 101.0, 102.0' in text
    loaded = bstore.load(tmp_path, "cpu:x86_64")
    assert loaded.keys() == s.keys()
    assert bstore.dumps(loaded) == text
    assert [p.name for p in tmp_path.iterdir()] == ["cpu_x86_64.json"]


def test_failed_write_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store(tmp_path)
    bstore.write(s)
    before = s.path.read_bytes()

    def boom(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(KeyboardInterrupt):
        bstore.write(s.merged({}, [("a.py::t", "a")]))
    assert s.path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["cpu_x86_64.json"]


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cpu_x86_64.json"
    path.write_text("{")
    with pytest.raises(BaselineError, match=r"cpu_x86_64.json: is not valid JSON"):
        bstore.load(tmp_path, "cpu:x86_64")
    damaged = bstore.load(tmp_path, "cpu:x86_64", allow_damaged=True)
    assert damaged.damaged and not damaged.entries
    path.write_text('{"schema_version": 2, "device_kind": "cpu:x86_64", "entries": {}}')
    with pytest.raises(NewerSchemaError, match="upgrade pytest-neuronperf"):
        bstore.load(tmp_path, "cpu:x86_64", allow_damaged=True)
    assert bstore.load(tmp_path, "cuda:H200").entries == {}  # its own file, absent


def test_reference_round_trips_and_a_bad_one_names_itself(tmp_path: Path) -> None:
    entry = Entry.of(timed_with_reference(TIMES, REF))
    back = Entry.from_dict(json.loads(json.dumps(entry.to_dict())))
    assert back.reference_us == entry.reference_us
    assert back.device_reference_us == entry.device_reference_us
    assert "reference_us" not in Entry.of(measurement({"aten::mul": 1}, TIMES)).to_dict()
    damaged = {**entry.to_dict(), "reference_us": {"samples": [20.0, 0.0]}}
    with pytest.raises(ValueError, match=r"reference_us samples must all be > 0"):
        Entry.from_dict(damaged)


def test_stale_only_for_what_the_run_can_know(tmp_path: Path) -> None:
    s = store(tmp_path)
    common = {"file_exists": lambda module: module != "gone.py", "measured": {}}
    # a.py collected in part, b.py not at all: nothing is known to be gone.
    assert update.stale(s, collected=set(), complete_modules=set(), **common) == []  # type: ignore[arg-type]
    # b.py collected in full without b.py::t: gone.
    assert update.stale(s, collected=set(), complete_modules={"b.py"}, **common) == [  # type: ignore[arg-type]
        ("b.py::t", "r")
    ]
    # a test that ran and passed no longer measures region z.
    got = update.stale(
        s,
        collected={"a.py::t"},
        complete_modules=set(),
        file_exists=lambda _: True,
        measured={"a.py::t": {"a"}},
    )
    assert got == [("a.py::t", "z")]


def test_plan_update_keeps_unchanged_entries_and_removes_stale(tmp_path: Path) -> None:
    s = store(tmp_path)
    fresh = Entry.of(measurement({"aten::add": 1}, TIMES))
    plan = update.plan_update(
        s,
        {
            ("a.py::t", "a"): (fresh, False),
            ("a.py::t", "z"): (fresh, True),
            ("c.py::t", "r"): (fresh, True),
        },
        [("b.py::t", "r")],
    )
    assert plan.unchanged == (("a.py::t", "a"),)
    assert plan.changed == (("a.py::t", "z"),)
    assert plan.added == (("c.py::t", "r"),)
    assert plan.removed == (("b.py::t", "r"),)
    assert plan.result.get("a.py::t", "a") == s.get("a.py::t", "a")
    assert plan.result.get("a.py::t", "z") == fresh
    assert "b.py::t" not in plan.result.entries


def test_partially_selected_modules(tmp_path: Path) -> None:
    got = update.partially_selected(
        ["tests/test_x.py::test_a", "tests/test_y.py", "/elsewhere/t.py::x"], tmp_path, tmp_path
    )
    assert got == {"tests/test_x.py"}


def test_memory_is_exact_on_cpu_and_names_the_ops_that_allocated_more() -> None:
    from pytest_neuronperf.model import Memory

    mib = 1 << 20
    then = Memory(peak_bytes=4 * mib, allocated_bytes=4 * mib, retained_bytes=0,
                  op_bytes={"aten::add": 4 * mib})  # fmt: skip
    now = replace(then, peak_bytes=4 * mib + 1)
    base = measurement({"aten::add": 1}, TIMES)
    entry = Entry.of(replace(base, memory=then))
    c = compare(entry, replace(base, memory=now), tolerance=0.1)
    assert c.status == "regressed"
    assert c.failures == ("neuronperf baseline: region 'r' peak 4.0 MiB, baseline 4.0 MiB",)
    grew = replace(then, peak_bytes=8 * mib, op_bytes={"aten::add": 4 * mib, "aten::mul": 4 * mib})
    c = compare(entry, replace(base, memory=grew), tolerance=0.1)
    assert c.failures == (
        "neuronperf baseline: region 'r' peak 8.0 MiB, baseline 4.0 MiB (+ aten::mul 4.0 MiB)",
    )
    assert compare(entry, replace(base, memory=then), tolerance=0.1).status == "same"
    # An entry from before memory was profiled gains it.
    assert compare(Entry.of(base), replace(base, memory=then), tolerance=0.1).needs_write


def test_device_memory_is_judged_within_one_per_cent_of_its_baseline() -> None:
    from pytest_neuronperf.gate.memory import DEVICE_TOLERANCE
    from pytest_neuronperf.model import Memory

    peak = 100 * 1024
    then = Memory(peak_bytes=peak, allocated_bytes=peak, retained_bytes=0, source="allocator")
    base = measurement({"aten::add": 1}, TIMES)
    entry = Entry.of(replace(base, memory=then))
    at = replace(then, peak_bytes=peak + int(peak * DEVICE_TOLERANCE))
    assert compare(entry, replace(base, memory=at), tolerance=0.1).failures == ()
    over = replace(at, peak_bytes=at.peak_bytes + 1)
    assert compare(entry, replace(base, memory=over), tolerance=0.1).status == "regressed"


def exp_measurement(samples: list[float]) -> Measurement:
    return measurement({"aten::exp": 1}, samples)


def test_an_interval_too_wide_to_judge_is_not_called_same() -> None:
    entry = Entry.of(exp_measurement(TIMES))
    # Half the rounds hit by the scheduler: the median moves by hundreds of per cent and
    # the interval runs from no change to a thousandfold.
    hit = [100.0 + i for i in range(5)] + [100_000.0 + i for i in range(5)]
    c = compare(entry, exp_measurement(hit), tolerance=0.1, host_timed=True)
    assert c.status == "same" and c.host is not None and c.host.ratio > 100
    cell = c.cell()
    assert cell.startswith("not judged (interval ") and cell.endswith("%)"), cell
    assert "same" not in cell
    gone = [1.0 + i * 0.01 for i in range(5)] + [110.0 + i for i in range(5)]
    cell = compare(entry, exp_measurement(gone), tolerance=0.1, host_timed=True).cell()
    assert cell.startswith("not judged (interval -"), cell
    # A narrow interval inside the tolerance is "same" with its figure, as before; so is a
    # narrow one at the band's edge: it was judged, not credibly faster than 10%.
    assert (
        compare(entry, exp_measurement(TIMES), tolerance=0.1, host_timed=True).cell() == "same +0%"
    )
    edge = compare(
        entry, exp_measurement([v * 0.88 for v in TIMES]), tolerance=0.1, host_timed=True
    )
    assert edge.host is not None and edge.host.low < 1 / 1.1 < edge.host.high < 1
    assert edge.cell() == "same -12%"


def pooled(*speeds: float, window: Callable[[float], Measurement] | None = None) -> Entry:
    """An entry pooled over one recording process per speed, each of whose rounds ran that
    many times as long (``window(speed)``, default host_window against an unchanged tick)."""
    made = window or (lambda s: host_window(s, 1.0))
    entry = Entry.of(made(speeds[0]))
    for speed in speeds[1:]:
        grown = entry.pooled_with(Entry.of(made(speed)), cap=len(speeds))
        assert grown is not None
        entry = grown
    return entry


@pytest.mark.parametrize(
    ("speeds", "now", "status"),
    [
        ((1.0, 1.0, 1.0), 1.3, "regressed"),  # processes that agreed: the tolerance alone
        ((1.0, 1.3, 0.97), 1.3, "same"),  # as slow as one recording process already was
        ((1.0, 1.3, 0.97), 1.9, "regressed"),  # past the tolerance beyond it
        ((1.0, 1.0, 1.0), 0.75, "improved"),
        ((1.0, 0.7, 1.02), 0.75, "same"),
        ((1.0, 0.7, 1.02), 0.45, "improved"),
        ((1.0, 1.3, 0.97), 0.75, "improved"),  # the slow process does not hide a speed-up
    ],
)
def test_a_change_counts_only_past_how_far_the_recording_processes_ran_apart(
    speeds: tuple[float, ...], now: float, status: str
) -> None:
    entry = pooled(*speeds)
    c = compare(entry, host_window(now, 1.0), tolerance=0.1, host_timed=True)
    assert c.status == status, c.notes
    apart = [n for n in c.notes if n.startswith(APART_NOTE)]
    assert len(apart) == (status == "same")
    # A plain loop over the pooled rounds against the tick: each process's median over
    # the pooled one, and the change the note names.
    rel = entry.host_relative.samples  # type: ignore[union-attr]
    whole = statistics.median(rel)
    medians = [statistics.median(rel[i * 10 : (i + 1) * 10]) for i in range(len(speeds))]
    fast, slow = (min(medians) / whole - 1) * 100, (max(medians) / whole - 1) * 100
    ratio = statistics.median(host_window(now, 1.0).host_relative.samples) / whole  # type: ignore[union-attr]
    if apart:
        word = "slower" if ratio > 1 else "faster"
        assert apart[0] == (
            f"{APART_NOTE}region 'r' host time {(ratio - 1) * 100:+.0f}% ({word}) is judged the "
            f"same: the baseline's 3 recording processes ran {fast:+.0f}%..{slow:+.0f}% "
            "(against the memory-bound tick) from their pooled median, and a change counts "
            "only past the tolerance (10%) beyond that; record it again on a quieter machine "
            "to gate it closer"
        )
        assert c.cell() == f"same {(ratio - 1) * 100:+.0f}%" and not c.failures


def device_window(speed: float) -> Measurement:
    return helpers.measurement(ops={"aten::mul": 1}, device=[v * speed for v in TIMES])


@pytest.mark.parametrize(
    ("speeds", "now", "status"),
    [
        ((1.0, 1.0, 1.0), 1.3, "regressed"),
        ((1.0, 1.3, 0.97), 1.3, "same"),
        ((1.0, 1.3, 0.97), 2.0, "regressed"),
    ],
)
def test_raw_device_time_is_held_to_its_recording_processes_too(
    speeds: tuple[float, ...], now: float, status: str
) -> None:
    entry = pooled(*speeds, window=device_window)
    c = compare(entry, device_window(now), tolerance=0.1)
    assert c.status == status and c.gated == "device_us"
    assert any(n.startswith(APART_NOTE) for n in c.notes) == (status == "same")


@pytest.mark.parametrize(
    ("now", "status"), [(1.3, "regressed"), (0.75, "improved"), (1.05, "same")]
)
def test_without_hold_back_a_change_inside_the_processes_spread_is_called(
    now: float, status: str
) -> None:
    # Rechecked regions pool fresh processes' rounds instead (session/recheck.py).
    entry = pooled(1.0, 1.3, 0.7)
    c = compare(entry, host_window(now, 1.0), tolerance=0.1, host_timed=True, hold_back=False)
    assert c.status == status, c.notes
    assert not [n for n in c.notes if n.startswith(APART_NOTE)]
    held = compare(entry, host_window(now, 1.0), tolerance=0.1, host_timed=True)
    assert held.status == "same"
