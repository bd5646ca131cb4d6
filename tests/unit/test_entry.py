"""Each figure declared once (model.Figures) and one strict, fields()-driven codec for the
baseline entry, the measurement and the record."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import helpers
import pytest

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.store import dumps, load
from pytest_neuronperf.baselines.update import POOL_CAP
from pytest_neuronperf.codec import DecodeError
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.model import (
    ROUND_SAMPLES,
    BaselineStatus,
    Figures,
    Measurement,
    OpRow,
    OpWork,
    Record,
    Status,
    Work,
)
from pytest_neuronperf.stats import Stats

DATA = Path(__file__).parent.parent / "data"
# Written by the code of 52e8f5c, before the codec (tests/data/README.md).
OLD_FILE = DATA / "baseline-52e8f5c.json"
# Whole nanoseconds: what a file keeps (it writes samples to 1 ns), so round trips are exact.
TIMES = [100.0 + i * 1.25 for i in range(10)]


def measurement(**changes: Any) -> Measurement:
    """A measurement with every figure an entry keeps set."""
    full: dict[str, Any] = dict(
        ops={"aten::mul": 1, "aten::sum": 1},
        kernels={"aten::mul": 2, "aten::sum": 1},
        device=TIMES,
        host=[t / 2 for t in TIMES],
        per_op=(OpRow("aten::mul", 1.0, 60.1234567, 0.6, 2.0), OpRow("aten::sum", 1.0, 40.0, 0.4)),
        reference_us=Stats.of([20.0] * 10),
        device_reference_us=Stats.of([21.0] * 10),
        host_relative=Stats.of([2.5] * 10),
        dispatch_reference_us=Stats.of([1.0] * 10),
        host_relative_dispatch=Stats.of([50.0] * 10),
        work=Work(1000, 400, 400, ("aten::foo",), (OpWork("aten::mul", 1, 1000, 400, 400),), "f32"),
        launch_gap_us=Stats.of([3.0, 4.0]),
        page_faults=2.0,
        compile_notes=("graph break: x",),
        round_variants=("round 3: + aten::add ×1",),
    )
    return helpers.measurement(**{**full, **changes})


# --- one declaration ---------------------------------------------------------------------


def test_entry_and_measurement_share_the_figures_declared_once() -> None:
    shared = {f.name for f in dataclasses.fields(Figures)}
    assert shared <= {f.name for f in dataclasses.fields(Entry)}
    assert shared <= {f.name for f in dataclasses.fields(Measurement)}
    own = {f.name for f in dataclasses.fields(Entry)} - shared
    assert own == {"flops", "bytes_moved", "processes"}, "what only an entry holds"
    m = measurement()
    e = Entry.of(m)
    for name in shared:
        assert getattr(e, name) == getattr(m, name), name
    assert (e.flops, e.bytes_moved) == (1000, 800)
    assert e.op_counts is not m.op_counts, "a stored entry does not alias the live dict"


def test_the_round_samples_are_every_stats_figure() -> None:
    assert ROUND_SAMPLES == (
        "device_us",
        "host_us",
        "reference_us",
        "device_reference_us",
        "host_relative",
        "dispatch_reference_us",
        "host_relative_dispatch",
        "compute_reference_us",
        "host_relative_compute",
        "long_reference_us",
        "host_relative_long",
    )


# --- files written before the codec --------------------------------------------------------


def test_a_file_written_by_52e8f5c_loads_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    """Its summaries (median, iqr) were rounded from unrounded samples; recomputed from the
    rounded ones some move by 1 ns, which 52e8f5c itself rewrote on every update."""
    directory = tmp_path / ".neuronperf"
    directory.mkdir()
    shutil.copy(OLD_FILE, directory / "cpu_x86_64.json")
    b = load(directory, "cpu:x86_64")
    assert dumps(b) == OLD_FILE.read_text(encoding="utf-8")
    assert len(b.keys()) == 6
    pooled = b.get("test_gen.py::test_mul", "mul")
    assert pooled is not None and pooled.processes == 2 and pooled.host_us.n == 12
    assert pooled.reference_us is not None and pooled.flops is not None


def test_the_stored_summary_is_kept_only_where_it_agrees_with_the_samples() -> None:
    d = Entry.of(measurement()).to_dict()
    d["host_us"]["median"] += 0.001  # as 52e8f5c may have rounded it
    assert Entry.from_dict(d).to_dict()["host_us"]["median"] == d["host_us"]["median"]
    d["host_us"]["median"] += 5  # hand-edited: the samples win
    back = Entry.from_dict(d).to_dict()["host_us"]
    assert back["median"] == round(Stats.of(d["host_us"]["samples"]).median, 3)


# --- round trips -------------------------------------------------------------------------


def test_entry_round_trip_and_layout() -> None:
    e = Entry.of(measurement())
    d = e.to_dict()
    assert Entry.from_dict(json.loads(json.dumps(d))) == dataclasses.replace(
        e, per_op=tuple(OpRow(r.name, r.calls, round(r.device_us, 3), 0.0) for r in e.per_op)
    )
    # The file's own layout of per_op; what was not measured is left out.
    assert d["per_op"] == {
        "aten::mul": {"calls": 1.0, "device_us": 60.123},
        "aten::sum": {"calls": 1.0, "device_us": 40.0},
    }
    assert "processes" not in d
    bare = Entry.of(measurement(reference_us=None, work=None)).to_dict()
    assert "reference_us" not in bare and "flops" not in bare and "bytes_moved" not in bare
    assert set(Entry.from_dict(bare).to_dict()) == set(bare)


def test_measurement_and_record_round_trip_through_json() -> None:
    r = Record(
        measurement(),
        "max_ops=2",
        Status.OVER_BUDGET,
        ("v",),
        BaselineStatus.REGRESSED,
        "regressed +20%",
        ("n",),
        False,
    )
    text = json.dumps(r.to_dict(), sort_keys=True)
    back = Record.from_dict(json.loads(text))
    assert back == r
    assert back.status is Status.OVER_BUDGET and back.baseline is BaselineStatus.REGRESSED
    assert json.loads(text)["status"] == "over budget", "the same strings as before the enums"
    assert Record.from_dict({**r.to_dict(), "baseline": ""}).baseline == ""
    d = measurement(work=None, launch_gap_us=None, page_faults=None).to_dict()
    assert d["work"] is None and d["launch_gap_us"] is None, "a measurement writes null"


# --- strict going in ---------------------------------------------------------------------


def entry_dict() -> dict[str, Any]:
    return Entry.of(measurement()).to_dict()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("ops",), 1.0, "ops must be a whole number >= 0, got 1.0"),
        (("ops",), True, "ops must be a whole number >= 0, got True"),
        (("kernels",), -1, "kernels must be a whole number >= 0, got -1"),
        (("rounds",), "10", "rounds must be a whole number >= 0, got '10'"),
        (("op_counts", "aten::mul"), 1.5, "op_counts['aten::mul'] must be a whole number"),
        (("op_counts",), [], "op_counts must be an object"),
        (("environment", "torch"), 2.13, "environment['torch'] must be a string"),
        (("flops",), 1e3, "flops must be a whole number >= 0"),
        (("processes",), 0, "processes must be a whole number >= 1, got 0"),
        (("host_us",), [1.0], "host_us must be an object with 'samples'"),
        (("host_us", "samples"), None, "host_us.samples must be a list of numbers"),
        (("host_us", "samples", 0), "1", "host_us samples must all be >= 0 and finite, got '1'"),
        (("host_us", "samples", 0), True, "host_us samples must all be >= 0 and finite"),
        (("device_us", "samples", 1), -3.0, "device_us samples must all be >= 0 and finite"),
        (("device_us", "samples", 1), float("inf"), "device_us samples must all be >= 0 and fin"),
        (("device_us", "samples", 1), float("nan"), "device_us samples must all be >= 0 and fin"),
        (("reference_us", "samples", 1), 0.0, "reference_us samples must all be > 0 and finite"),
        (("reference_us", "samples"), [], "reference_us samples must not be empty"),
        (("per_op", "aten::mul", "calls"), "x", "per_op['aten::mul'].calls must be a finite"),
        (("per_op",), [], "per_op must be an object of op name"),
    ],
)
def test_each_bad_value_is_refused_by_its_path(
    path: tuple[str | int, ...], value: Any, message: str
) -> None:
    d = entry_dict()
    target: Any = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(DecodeError) as info:
        Entry.from_dict(d)
    assert message in str(info.value)


def test_missing_figures_are_refused_and_optional_ones_default() -> None:
    d = entry_dict()
    del d["host_us"]
    with pytest.raises(DecodeError, match="host_us is missing"):
        Entry.from_dict(d)
    minimal = {k: entry_dict()[k] for k in ("ops", "kernels", "rounds", "device_us", "host_us")}
    e = Entry.from_dict(minimal)
    assert e.op_counts == {} and e.per_op == () and e.processes == 1 and e.reference_us is None
    assert Entry.from_dict({**minimal, "from_a_newer_minor_version": 1}) == e


def test_an_unknown_status_is_refused() -> None:
    d = Record(measurement()).to_dict()
    with pytest.raises(DecodeError, match="status must be one of 'measured', 'ok'"):
        Record.from_dict({**d, "status": "fine"})
    with pytest.raises(DecodeError, match="baseline"):
        Record.from_dict({**d, "baseline": "worse"})


def test_nested_values_name_their_path() -> None:
    d = measurement().to_dict()
    d["work"]["per_op"][0]["flops"] = -1
    with pytest.raises(DecodeError, match=r"work\.per_op\[0\]\.flops must be a whole number"):
        Measurement.from_dict(d)


# --- pooled over recording processes (--neuron-profile-pool, record) ---------------------


def test_pooling_concatenates_processes_and_keeps_the_newest() -> None:
    first, second = helpers.process_entry(5.0, 0), helpers.process_entry(6.0, 10)
    both = first.pooled_with(second, POOL_CAP)
    assert both is not None
    assert both.processes == 2 and both.rounds == helpers.POOL_ROUNDS
    assert both.host_relative is not None and first.host_relative is not None
    assert both.host_relative.samples == (
        first.host_relative.samples + second.host_relative.samples  # type: ignore[union-attr]
    )
    # Past the cap the oldest process's rounds go first.
    pool = first
    for i in range(1, POOL_CAP + 2):
        merged = pool.pooled_with(helpers.process_entry(5.0 + i, 10 * i), POOL_CAP)
        assert merged is not None
        pool = merged
    assert pool.processes == POOL_CAP
    assert pool.host_us.n == POOL_CAP * helpers.POOL_ROUNDS
    assert pool.host_relative is not None
    # Processes 0 and 1 were dropped: the newest POOL_CAP remain, oldest first.
    kept = [helpers.process_entry(5.0 + i, 10 * i).host_relative for i in range(2, POOL_CAP + 2)]
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
    changed = dataclasses.replace(helpers.process_entry(5.0), **other)  # type: ignore[arg-type]
    assert helpers.process_entry(5.0).pooled_with(changed, POOL_CAP) is None


def test_a_damaged_process_count_is_refused() -> None:
    d = helpers.process_entry(5.0).to_dict()
    for bad in (0, -1, 1.5, True, "2"):
        d["processes"] = bad
        with pytest.raises(ValueError, match="processes must be a whole number >= 1"):
            Entry.from_dict(d)


def test_a_pooled_baseline_spans_the_processes_offsets_and_still_fails_a_regression() -> None:
    """Three recording processes at 0.9, 1.0 and 1.1 of the same speed. A rerun 25% above
    the slowest-looking one fails against that one process alone; against the pool it sits
    within the processes' own spread and passes. Twice the time fails against both."""
    processes = [
        helpers.process_entry(5.0 * f, seed) for f, seed in ((0.9, 0), (1.0, 10), (1.1, 20))
    ]
    pool = processes[0]
    for p in processes[1:]:
        merged = pool.pooled_with(p, POOL_CAP)
        assert merged is not None
        pool = merged
    rerun = helpers.process_measurement(5.0 * 0.9 * 1.25, seed=99)
    alone = compare(processes[0], rerun, tolerance=0.1, host_timed=True)
    assert alone.status == "regressed"
    pooled = compare(pool, rerun, tolerance=0.1, host_timed=True)
    assert pooled.status == "same", pooled.failures
    slow = compare(pool, helpers.process_measurement(10.0, seed=98), tolerance=0.1, host_timed=True)
    assert slow.status == "regressed"
    assert (
        "regressed" in slow.failures[0] and "against both reference workloads" in (slow.failures[0])
    )
