"""gate/collectives.py through the budget marker and the baseline comparison: each rule
made to fail, and shown to hold at its boundary."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.gate.budget import check
from pytest_neuronperf.gate.compare import compare
from pytest_neuronperf.gate.marker import BudgetError, budget_from_marker, neuron_budget
from pytest_neuronperf.model import BaselineStatus, Collective, Measurement
from pytest_neuronperf.stats import Stats

MIB = 1 << 20
TP = {"all_reduce": Collective(2, 2 * MIB, 2, "shapes")}


def measurement(collectives: dict[str, Collective] | None = None, **changes: Any) -> Measurement:
    values: dict[str, Any] = dict(
        test_id="t.py::t",
        region="mlp",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=5,
        kernels=4,
        op_counts={"aten::mm": 2, "c10d::allreduce_": 2, "aten::relu": 1},
        kernel_counts={"aten::mm": 4},
        device_us=Stats.of([100.0] * 5),
        host_us=Stats.of([100.0] * 5),
        rounds=5,
        environment={"device_kind": "cpu:x86_64", "torch": "2.13.0", "backend": "cpu"},
        collectives=dict(TP if collectives is None else collectives),
        world_size=2,
        rank=0,
    )
    values.update(changes)
    return Measurement(**values)


def sentences(m: Measurement, **budget: Any) -> list[str]:
    return [v.sentence for v in check(neuron_budget(**budget), [m])]


def test_max_collectives_fails_one_below_and_holds_at_the_count() -> None:
    m = measurement()
    assert sentences(m, max_collectives=2) == []
    [fail] = sentences(m, max_collectives=1)
    assert fail == (
        "neuron_budget: region 'mlp' (rank 0 of 2) made 2 collectives "
        "(all_reduce ×2 (2.0 MiB)), budget max_collectives=1"
    )


def test_max_collectives_per_name() -> None:
    m = measurement({**TP, "all_gather": Collective(1, MIB, 2, "shapes")})
    assert sentences(m, max_collectives={"all_gather": 1, "all_reduce": 2}) == []
    [fail] = sentences(m, max_collectives={"all_gather": 0})
    assert "made 1 all_gather calls, budget max_collectives={'all_gather': 0}" in fail
    # A name the region never called holds at 0.
    assert sentences(m, max_collectives={"broadcast": 0}) == []


def test_max_comm_bytes_fails_when_the_message_doubles() -> None:
    assert sentences(measurement(), max_comm_bytes=2 * MIB) == []
    doubled = measurement({"all_reduce": Collective(2, 4 * MIB, 2, "shapes")})
    [fail] = sentences(doubled, max_comm_bytes=2 * MIB)
    assert "sent 4.0 MiB (4,194,304 bytes) in collectives" in fail


def test_max_comm_bytes_with_sizes_unknown_fails_saying_why() -> None:
    m = measurement({"all_reduce": Collective(2)})
    [fail] = sentences(m, max_comm_bytes=1)
    assert "sizes of its all_reduce calls are not in the profile" in fail


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_collectives": -1}, "max_collectives=-1: expected a whole number >= 0"),
        ({"max_collectives": True}, "max_collectives=True"),
        ({"max_collectives": {"all_gather": 1.5}}, "or a dict of collective name"),
        ({"max_collectives": {}}, "max_collectives={}"),
        ({"max_comm_bytes": -1}, "max_comm_bytes=-1: expected a number of bytes >= 0"),
        ({"max_comm_bytes": float("nan")}, "max_comm_bytes=nan"),
    ],
)
def test_bad_arguments_are_usage_errors_at_collection(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(BudgetError, match=r"^t\.py::t: neuron_budget ") as info:
        budget_from_marker((), kwargs, "t.py::t")
    assert message in str(info.value)


def test_describe_names_per_kind_budgets() -> None:
    b = neuron_budget(max_collectives={"all_gather": 2}, max_comm_bytes=4e6, max_ops=9)
    assert b.describe() == "max_ops=9, max_comm_bytes=4000000, max_collectives={'all_gather': 2}"


def test_an_added_all_gather_fails_the_baseline_with_the_diff() -> None:
    entry = Entry.of(measurement())
    now = measurement({**TP, "all_gather": Collective(1, 4 * MIB, 2, "shapes")})
    c = compare(entry, now, tolerance=0.25, host_timed=True)
    assert c.status is BaselineStatus.REGRESSED
    assert (
        "neuronperf baseline: region 'mlp' (rank 0 of 2) made 3 collectives, baseline 2 "
        "(+ all_gather ×1, 4.0 MiB)"
    ) in c.failures


def test_a_doubled_message_fails_and_a_halved_one_is_an_improvement() -> None:
    entry = Entry.of(measurement())
    doubled = measurement({"all_reduce": Collective(2, 4 * MIB, 2, "shapes")})
    c = compare(entry, doubled, tolerance=0.25, host_timed=True)
    assert c.status is BaselineStatus.REGRESSED
    assert any("sent 4.0 MiB in collectives, baseline 2.0 MiB" in f for f in c.failures)
    halved = measurement({"all_reduce": Collective(2, MIB, 2, "shapes")})
    c = compare(entry, halved, tolerance=0.25, host_timed=True)
    assert c.status is BaselineStatus.IMPROVED and not c.failures


def test_same_collectives_hold() -> None:
    c = compare(Entry.of(measurement()), measurement(), tolerance=0.25, host_timed=True)
    assert not c.failures and c.status is not BaselineStatus.REGRESSED


def test_a_new_kind_at_the_same_count_fails() -> None:
    swapped = measurement(
        {
            "all_reduce": Collective(1, MIB, 2, "shapes"),
            "all_gather": Collective(1, MIB, 2, "shapes"),
        }
    )
    c = compare(Entry.of(measurement()), swapped, tolerance=0.25, host_timed=True)
    assert c.status is BaselineStatus.REGRESSED
    assert any("(+ all_gather ×1, 1.0 MiB; - all_reduce ×1, 1.0 MiB)" in f for f in c.failures)


def test_an_entry_from_before_collectives_is_not_judged_on_them() -> None:
    old = Entry.of(measurement({}, world_size=0, rank=None))
    c = compare(old, measurement(), tolerance=0.25, host_timed=True)
    assert not c.failures and c.needs_write
    assert any("the baseline entry counted none" in n for n in c.notes)


def test_entries_without_collectives_keep_their_bytes() -> None:
    plain = Entry.of(measurement({}, world_size=0, rank=None))
    d = plain.to_dict()
    assert "collectives" not in d and "world_size" not in d
    dist = Entry.of(measurement())
    d = dist.to_dict()
    assert d["collectives"] == {
        "all_reduce": {"calls": 2, "bytes": 2 * MIB, "group_size": 2, "bytes_from": "shapes"}
    }
    assert Entry.from_dict(d) == dist


def ranked(*device_us: float) -> Measurement:
    from pytest_neuronperf.model import RankFigures

    return measurement(
        ranks=tuple(
            RankFigures(rank=i, ops=5, collectives=2, comm_bytes=2 * MIB, device_us=d, host_us=d)
            for i, d in enumerate(device_us)
        )
    )


def test_a_rank_beyond_the_tolerance_of_the_median_is_a_straggler() -> None:
    from pytest_neuronperf.gate.collectives import flag_stragglers
    from pytest_neuronperf.reports.collectives import straggler_text

    # Median of 100, 100, 130 is 100: 130 is +30%, past 25%.
    m = flag_stragglers(ranked(100.0, 100.0, 130.0), 0.25)
    assert [r.straggler for r in m.ranks] == [False, False, True]
    assert straggler_text(m) == (
        "rank 2 is a straggler: 130.0 µs of device time, +30% over the median rank (100.0 µs)"
    )
    # At the tolerance it holds.
    held = flag_stragglers(ranked(100.0, 100.0, 125.0), 0.25)
    assert not any(r.straggler for r in held.ranks) and straggler_text(held) == ""


def test_the_verdict_flags_stragglers_with_the_markers_tolerance() -> None:
    from pytest_neuronperf.session.verdict import judge

    budgets = [neuron_budget(tolerance="50%")]
    v = judge([ranked(100.0, 100.0, 130.0)], budgets, {}, passed=True, update=False, tolerance=0.1)
    assert not any(r.straggler for r in v.records[0].measurement.ranks)
    v = judge([ranked(100.0, 100.0, 130.0)], [], {}, passed=True, update=False, tolerance=0.1)
    assert v.records[0].measurement.ranks[2].straggler


def test_neuronperf_compare_names_the_added_collective(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import jsonschema

    from pytest_neuronperf.cli.main import main
    from pytest_neuronperf.model import Record, Status
    from pytest_neuronperf.reports.json import document, dumps, schema

    base = measurement()
    new = measurement({**TP, "all_gather": Collective(1, 4 * MIB, 2, "shapes")})
    paths = []
    for name, m in (("base", base), ("new", new)):
        doc = document([Record(m, status=Status.MEASURED)])
        jsonschema.validate(doc, schema())
        path = tmp_path / f"{name}.json"
        path.write_text(dumps(doc))
        paths.append(str(path))
    assert json.loads((tmp_path / "new.json").read_text())["measurements"][0]["measurement"][
        "collectives"
    ]["all_gather"] == {"bytes": 4 * MIB, "bytes_from": "shapes", "calls": 1, "group_size": 2}
    assert main(["compare", *paths, "--fail-on", "regressed"]) != 0
    out = capsys.readouterr()
    assert "made 3 collectives, baseline 2 (+ all_gather ×1, 4.0 MiB)" in out.out + out.err
