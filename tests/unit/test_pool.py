"""Baselines pooled over several recording processes (--neuron-profile-pool, ``record``)."""

from __future__ import annotations

import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_window import timed

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import Baselines
from pytest_neuronperf.baselines.update import POOL_CAP, plan_update
from pytest_neuronperf.cli.main import main
from pytest_neuronperf.cli.record import record
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.reports.terminal import baseline_footer
from pytest_neuronperf.stats import Stats

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROUNDS = 10


def _noisy(level: float, seed: int, n: int = ROUNDS, sd: float = 0.01) -> Stats:
    rng = random.Random(seed)
    return Stats.of([round(level * (1 + rng.gauss(0, sd)), 3) for _ in range(n)])


def measurement_at(level: float, seed: int) -> Measurement:
    """One recording process whose host time sits at ``level`` reference units."""
    ref = Stats.of([20.0] * ROUNDS)
    return replace(
        timed([level * 20] * ROUNDS, list(_noisy(level * 20, seed + 1).samples)),
        op_counts={"aten::mul": 1, "aten::sum": 1},
        ops=2,
        environment={"torch": "2.13.0", "device_kind": "cpu:x86_64"},
        reference_us=ref,
        host_relative=_noisy(level, seed),
        dispatch_reference_us=ref,
        host_relative_dispatch=_noisy(level, seed + 3),
    )


def _entry(level: float, seed: int = 0, **changes: object) -> Entry:
    return replace(Entry.of(measurement_at(level, seed)), **changes)  # type: ignore[arg-type]


def test_pooling_concatenates_processes_and_keeps_the_newest() -> None:
    first, second = _entry(5.0, 0), _entry(6.0, 10)
    both = first.pooled_with(second, POOL_CAP)
    assert both is not None
    assert both.processes == 2 and both.rounds == ROUNDS
    assert both.host_relative is not None and first.host_relative is not None
    assert both.host_relative.samples == (
        first.host_relative.samples + second.host_relative.samples  # type: ignore[union-attr]
    )
    # Past the cap the oldest process's rounds go first.
    pool = first
    for i in range(1, POOL_CAP + 2):
        merged = pool.pooled_with(_entry(5.0 + i, 10 * i), POOL_CAP)
        assert merged is not None
        pool = merged
    assert pool.processes == POOL_CAP
    assert pool.host_us.n == POOL_CAP * ROUNDS
    assert pool.host_relative is not None
    # Processes 0 and 1 were dropped: the newest POOL_CAP remain, oldest first.
    kept = [_entry(5.0 + i, 10 * i).host_relative for i in range(2, POOL_CAP + 2)]
    assert pool.host_relative.samples == tuple(v for s in kept if s for v in s.samples)
    # The count survives the file; one process leaves the key out, so old entries keep
    # their bytes.
    assert Entry.from_dict(json.loads(json.dumps(pool.to_dict()))) == pool
    assert "processes" not in first.to_dict()


@pytest.mark.parametrize(
    "other",
    [
        {"ops": 3, "op_counts": {"aten::mul": 2, "aten::sum": 1}},
        {"rounds": 5},
        {"environment": {"torch": "2.14.0", "device_kind": "cpu:x86_64"}},
        {"flops": 10},
        {"host_relative_dispatch": None, "dispatch_reference_us": None},
    ],
    ids=["ops", "rounds", "torch", "work", "figures"],
)
def test_what_measures_something_else_is_not_pooled(other: dict[str, object]) -> None:
    assert _entry(5.0).pooled_with(replace(_entry(5.0), **other), POOL_CAP) is None  # type: ignore[arg-type]


def test_a_damaged_process_count_is_refused() -> None:
    d = _entry(5.0).to_dict()
    for bad in (0, -1, 1.5, True, "2"):
        d["processes"] = bad
        with pytest.raises(ValueError, match="processes must be a whole number >= 1"):
            Entry.from_dict(d)


def test_update_plan_pools_what_it_can_and_replaces_the_rest() -> None:
    key_same, key_other, key_new = ("t::a", "r"), ("t::b", "r"), ("t::c", "r")
    current = Baselines(
        Path("x.json"),
        "cpu:x86_64",
        {"t::a": {"r": _entry(5.0)}, "t::b": {"r": _entry(5.0)}},
    )
    measured = {
        key_same: (_entry(5.5, 7), False),
        key_other: (_entry(5.0, ops=3, op_counts={"aten::mul": 3}), True),
        key_new: (_entry(5.0), True),
    }
    plan = plan_update(current, measured, (), pool=True)
    assert plan.pooled == (key_same,) and plan.changed == (key_other,)
    assert plan.added == (key_new,) and plan.touches_file
    pooled = plan.result.get(*key_same)
    assert pooled is not None and pooled.processes == 2
    other = plan.result.get(*key_other)
    assert other is not None and other.processes == 1 and other.ops == 3
    line = baseline_footer([], Path("x.json"), plan=plan)[0]
    assert "1 added, 1 pooled (now over 2 processes), 1 changed" in line
    # Without pooling the "same" entry is kept as stored.
    plain = plan_update(current, measured, ())
    assert plain.unchanged == (key_same,) and not plain.pooled


def test_a_pooled_baseline_spans_the_processes_offsets_and_still_fails_a_regression() -> None:
    """Three recording processes at 0.9, 1.0 and 1.1 of the same speed. A rerun 25% above
    the slowest-looking one fails against that one process alone; against the pool it sits
    within the processes' own spread and passes. Twice the time fails against both."""
    processes = [_entry(5.0 * f, seed) for f, seed in ((0.9, 0), (1.0, 10), (1.1, 20))]
    pool = processes[0]
    for p in processes[1:]:
        merged = pool.pooled_with(p, POOL_CAP)
        assert merged is not None
        pool = merged
    rerun = measurement_at(5.0 * 0.9 * 1.25, seed=99)
    alone = compare(processes[0], rerun, tolerance=0.1, host_timed=True)
    assert alone.status == "regressed"
    pooled = compare(pool, rerun, tolerance=0.1, host_timed=True)
    assert pooled.status == "same", pooled.failures
    slow = compare(pool, measurement_at(10.0, seed=98), tolerance=0.1, host_timed=True)
    assert slow.status == "regressed"
    assert (
        "regressed" in slow.failures[0] and "against both reference workloads" in (slow.failures[0])
    )


def test_record_runs_update_then_pool_and_stops_at_a_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[list[str]] = []

    def fails_second(argv: list[str]) -> int:
        calls.append(argv)
        return 1 if len(calls) == 2 else 0

    def passes(argv: list[str]) -> int:
        calls.append(argv)
        return 0

    assert record(["--", "tests", "-k", "x"], 3, run=passes) == 0
    assert [c[3] for c in calls] == [
        "--neuron-profile-update",
        "--neuron-profile-pool",
        "--neuron-profile-pool",
    ]
    assert all(
        c[:3] == [sys.executable, "-m", "pytest"] and c[4:] == ["tests", "-k", "x"] for c in calls
    )
    calls.clear()
    assert record(["tests"], 3, run=fails_second) == 1
    assert len(calls) == 2
    assert (
        "process 2 of 3 exited with status 1: it added the rounds of the tests that passed"
        in capsys.readouterr().err
    )
    assert main(["record", "--processes", "0"]) == 2
