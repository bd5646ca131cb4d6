"""The neuron_budget marker: validation, and each limit made to pass and to fail."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import helpers
import pytest

from pytest_neuronperf.gate.budget import check, time_notes
from pytest_neuronperf.gate.marker import (
    Budget,
    BudgetError,
    budget_from_marker,
    neuron_budget,
    tolerance_for,
)
from pytest_neuronperf.model import Measurement, Work
from pytest_neuronperf.stats import Stats, median_interval

# Nine steady rounds and one preempted 10x over: the median is 100, the worst round 1000.
ROUNDS = [100.0] * 9 + [1000.0]


def measurement(region: str = "r", **changes: Any) -> Measurement:
    m = helpers.measurement(
        region,
        ops={"aten::mul": 3},
        kernels={"aten::mul": 4},
        device=ROUNDS,
        host=[r / 2 for r in ROUNDS],
        environment={},
    )
    return replace(m, **changes)


def metrics(budget: Budget, *ms: Measurement) -> list[tuple[str, str, float | None]]:
    return [(v.region, v.metric, v.value) for v in check(budget, list(ms) or [measurement()])]


@pytest.mark.parametrize(("metric", "median"), [("max_device_us", 100.0), ("max_host_us", 50.0)])
def test_time_budgets_are_judged_on_the_median_not_the_worst_round(
    metric: str, median: float
) -> None:
    def limit(value: float) -> Budget:
        return budget_from_marker((), {metric: value}, "t.py::t")

    # Above the median, below the worst round: one preempted round does not fail a test.
    assert metrics(limit(median * 2)) == []
    assert metrics(limit(median)) == [], "a limit equal to the median holds"
    # Below the median: fails, and the sentence names the median, its interval and rounds.
    (v,) = check(limit(median * 0.9), [measurement()])
    assert (v.metric, v.value, v.limit) == (metric, median, median * 0.9)
    what = "device" if metric == "max_device_us" else "host"
    assert v.sentence == (
        f"neuron_budget: region 'r' took {median:.1f} µs of {what} time (median of 10 rounds, "
        f"95% CI {median:.1f}..{median:.1f} µs), over budget {metric}={median * 0.9:g} "
        "with 95% confidence"
    )


# Ten rounds spread 90..135 µs: median 112.5, its 95% interval about 100..125.
SPREAD = [90.0, 95.0, 100.0, 105.0, 110.0, 115.0, 120.0, 125.0, 130.0, 135.0]


def test_a_time_budget_fails_only_when_the_medians_interval_is_wholly_above_it() -> None:
    """The median above the limit is not enough on a noisy machine: the lower bound of its
    95% interval must be. Strict mode keeps the bare median."""
    m = measurement(host_us=Stats.of(SPREAD))
    _, low, high = median_interval(SPREAD)
    assert 95.0 < low < 112.5 < high < 130.0

    def over(limit: float, *, strict: bool = False) -> list[tuple[str, str, float | None]]:
        return [(v.region, v.metric, v.value) for v in check(
            neuron_budget(max_host_us=limit), [m], strict=strict
        )]  # fmt: skip

    # At the lower bound the budget holds; just under it, it fails.
    assert over(low) == []
    assert over(low - 0.01) == [("r", "max_host_us", 112.5)]
    # The median over the limit, the interval not wholly: holds, but strict fails it.
    assert over(110.0) == []
    (v,) = check(neuron_budget(max_host_us=110), [m], strict=True)
    assert v.value == 112.5
    assert v.sentence == (
        "neuron_budget: region 'r' took 112.5 µs of host time (median of 10 rounds), "
        "budget max_host_us=110 (strict: the median alone)"
    )
    assert over(112.5, strict=True) == [], "strict: a limit equal to the median holds"


def test_too_few_rounds_leave_a_time_budget_not_judged_unless_strict() -> None:
    few = measurement(device_us=Stats.of([500.0] * 4), host_us=Stats.of([500.0] * 4))
    budget = neuron_budget(max_device_us=100, max_host_us=100, max_ops=1)
    # Counts still are judged; times are not, and the notes say so.
    assert [v.metric for v in check(budget, [few])] == ["max_ops"]
    assert time_notes(budget, few) == [
        "max_device_us not judged: 4 rounds, at least 5 needed",
        "max_host_us not judged: 4 rounds, at least 5 needed",
    ]
    assert [v.metric for v in check(budget, [few], strict=True)] == [
        "max_ops",
        "max_device_us",
        "max_host_us",
    ]
    assert time_notes(budget, few, strict=True) == []
    # Five rounds are enough to judge.
    five = measurement(host_us=Stats.of([500.0] * 5))
    assert [v.metric for v in check(neuron_budget(max_host_us=100), [five])] == ["max_host_us"]
    assert time_notes(neuron_budget(max_host_us=100), five) == []
    # A budget aimed at another region says nothing of this one.
    assert time_notes(neuron_budget(max_host_us=100, region="other"), few) == []
    one = measurement(host_us=Stats.of([500.0]))
    assert time_notes(neuron_budget(max_host_us=100), one) == [
        "max_host_us not judged: 1 round, at least 5 needed"
    ]


def test_count_budgets_fail_above_and_hold_at_the_limit() -> None:
    assert metrics(neuron_budget(max_ops=3, max_kernels=4)) == []
    assert metrics(neuron_budget(max_ops=2, max_kernels=3)) == [
        ("r", "max_ops", 3),
        ("r", "max_kernels", 4),
    ]


def test_compile_budgets_count_zero_and_give_dynamos_reasons() -> None:
    m = measurement(graph_breaks=1, recompiles=0, compile_notes=("graph break: print()",))
    assert metrics(neuron_budget(max_recompiles=0), m) == []
    (v,) = check(neuron_budget(max_graph_breaks=0), [m])
    assert v.sentence == (
        "neuron_budget: region 'r' had 1 graph break, budget max_graph_breaks=0 "
        "(graph break: print())"
    )


def test_a_recompile_budget_names_the_first_reasons_and_counts_the_rest() -> None:
    notes = (
        *(f"recompiled: s == '{i}'" for i in range(5)),
        "recompiled in warm-up (not budgeted): s == 'w'",
    )
    m = measurement(recompiles=5, compile_notes=notes)
    (v,) = check(neuron_budget(max_recompiles=4), [m])
    assert v.sentence.endswith(
        "(recompiled: s == '0'; recompiled: s == '1'; recompiled: s == '2'; +2 more)"
    )
    (v,) = check(neuron_budget(max_recompiles=2), [replace(m, compile_notes=notes[:3])])
    assert v.sentence.endswith("(recompiled: s == '0'; recompiled: s == '1'; recompiled: s == '2')")


def test_a_region_budget_applies_to_that_region_only() -> None:
    small, big = measurement("small", ops=1), measurement("big", ops=9)
    assert metrics(neuron_budget(max_ops=1, region="small"), small, big) == []
    assert metrics(neuron_budget(max_ops=1), small, big) == [("big", "max_ops", 9)]
    (v,) = check(neuron_budget(max_ops=1, region="gone"), [small, big])
    assert v.sentence == (
        "neuron_budget: region 'gone' was never measured; the test measured 'small', 'big'"
    )


def test_a_test_that_measured_nothing_fails_its_budget() -> None:
    (v,) = check(neuron_budget(max_ops=1), [])
    assert v.metric == "measured" and "measured nothing" in v.sentence


def test_a_count_budget_of_zero_holds_at_zero_and_fails_at_one() -> None:
    """ "This path dispatches nothing" (a cache hit, a view) is a budget (issue 25, 10)."""
    nothing = replace(measurement(), ops=0, kernels=0, op_counts={}, kernel_counts={})
    assert check(neuron_budget(max_ops=0, max_kernels=0), [nothing]) == []
    one = replace(nothing, ops=1, kernels=1)
    found = check(neuron_budget(max_ops=0, max_kernels=0), [one])
    assert [v.metric for v in found] == ["max_ops", "max_kernels"]


def test_flops_budget_needs_counted_work() -> None:
    (v,) = check(neuron_budget(max_flops=10), [measurement()])
    assert v.metric == "max_flops" and v.value is None and "not counted" in v.sentence


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_ops": -1}, "max_ops=-1: expected a whole number >= 0"),
        ({"max_kernels": 1.5}, "max_kernels=1.5: expected a whole number >= 0"),
        ({"max_ops": True}, "max_ops=True: expected a whole number >= 0"),
        ({"max_graph_breaks": -1}, "max_graph_breaks=-1: expected a whole number >= 0"),
        ({"max_device_us": 0}, "max_device_us=0: expected a number of microseconds > 0"),
        ({"max_host_us": float("inf")}, "max_host_us=inf: expected a number of microseconds"),
        ({"max_flops": -1}, "max_flops=-1: expected a number of FLOPs > 0"),
        ({"min_roofline_fraction": 1.5}, "min_roofline_fraction=1.5: expected a fraction"),
        ({"region": ""}, "region='': expected the name of a measurement"),
        ({"tolerance": 0.1}, "tolerance=0.1: ambiguous, the tolerance"),
    ],
)
def test_bad_limits_are_refused_with_what_to_write(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(BudgetError) as info:
        neuron_budget(**kwargs)
    assert message in str(info.value)


def test_the_marker_takes_known_keywords_only() -> None:
    with pytest.raises(BudgetError, match=r"t\.py::t: neuron_budget takes keyword arguments only"):
        budget_from_marker((5,), {}, "t.py::t")
    with pytest.raises(
        BudgetError,
        match=r"neuron_budget has no argument max_op \(did you mean max_ops\?\); known: ",
    ):
        budget_from_marker((), {"max_op": 5}, "t.py::t")
    with pytest.raises(BudgetError, match="neuron_budget has no argument speed; known: "):
        budget_from_marker((), {"speed": 5}, "t.py::t")
    # Each name with its own suggestion; a name far from every argument gets none.
    with pytest.raises(
        BudgetError,
        match=r"no argument max_kernal \(did you mean max_kernels\?\), max_op \(did you mean "
        r"max_ops\?\), max_us; known: ",
    ):
        budget_from_marker((), {"max_op": 1, "max_us": 1, "max_kernal": 1}, "t.py::t")
    with pytest.raises(BudgetError, match=r"t.py::t: neuron_budget max_ops=-1"):
        budget_from_marker((), {"max_ops": -1}, "t.py::t")
    assert budget_from_marker((), {"max_ops": 5}, "t.py::t") == Budget(max_ops=5)


def test_describe_and_tolerance_for() -> None:
    b = neuron_budget(max_ops=5, max_device_us=2.5, tolerance="25%", region="r")
    assert b.describe() == "max_device_us=2.5, max_ops=5, tolerance=25%, region='r'"
    assert neuron_budget().describe() == "measure only"
    general = neuron_budget(tolerance=50)
    assert tolerance_for([general, b], "r", 0.1) == 0.25, "the region's own wins"
    assert tolerance_for([general, b], "other", 0.1) == 0.5
    assert tolerance_for([], "r", 0.1) == 0.1


MIB = 1 << 20


def with_memory(peak: int, retained: int = 0) -> Measurement:
    from pytest_neuronperf.model import Memory

    return measurement(
        memory=Memory(peak_bytes=peak, allocated_bytes=peak, retained_bytes=retained)
    )


def test_memory_budgets_take_bytes_or_units_and_fail_one_byte_over() -> None:
    assert neuron_budget(max_peak_memory="4 MiB") == Budget(max_peak_memory=4 * MIB)
    assert neuron_budget(max_retained_memory=0).max_retained_memory == 0
    budget = neuron_budget(max_peak_memory="4 MiB", max_retained_memory="1 KB")
    assert metrics(budget, with_memory(4 * MIB, 1024)) == []
    assert metrics(budget, with_memory(4 * MIB + 1, 1025)) == [
        ("r", "max_peak_memory", 4 * MIB + 1),
        ("r", "max_retained_memory", 1025),
    ]
    assert "max_peak_memory=4.0 MiB (4194304 bytes)" in budget.describe()


def test_a_memory_budget_on_a_region_without_a_figure_fails_with_the_reason() -> None:
    budget = neuron_budget(max_peak_memory=1)
    [v] = check(budget, [measurement(memory_note="no memory figure: no counters")])
    assert (v.metric, v.value) == ("max_peak_memory", None)
    assert v.sentence.endswith("but no memory figure: no counters")


@pytest.mark.parametrize("bad", ["4 parsecs", -1, 1.5, True])
def test_bad_memory_limits_are_usage_errors(bad: object) -> None:
    with pytest.raises(BudgetError, match="max_peak_memory: expected"):
        budget_from_marker((), {"max_peak_memory": bad}, "t.py::t")


def test_min_roofline_fraction_fails_just_under_it_and_holds_at_it() -> None:
    # Compute-bound at a quarter of the roof: 2.5 GFLOP in the median 100 µs against 100
    # TFLOP/s, with memory traffic far from its roof. A budget a little above fails.
    m = measurement(
        work=Work(flops=2_500_000_000, bytes_read=1000, bytes_written=0),
        peak_flops_per_s=1e14,
        peak_bytes_per_s=1e12,
    )
    r = m.roofline
    assert r is not None and r.bound == "compute"
    assert r.fraction == pytest.approx(0.25)
    assert metrics(neuron_budget(min_roofline_fraction=r.fraction), m) == []
    assert metrics(neuron_budget(min_roofline_fraction=0.2), m) == []
    (v,) = check(neuron_budget(min_roofline_fraction=0.3), [m])
    assert (v.metric, v.limit, v.value) == ("min_roofline_fraction", 0.3, r.fraction)
    assert "reached 25.0% of its compute bound" in v.sentence


def test_max_recompiles_fails_above_and_holds_at_the_limit() -> None:
    notes = ("graph break: print()", "recompiled: x.size()[0] == 8")
    m = measurement(recompiles=2, compile_notes=notes)
    assert metrics(neuron_budget(max_recompiles=2), m) == []
    (v,) = check(neuron_budget(max_recompiles=1), [m])
    assert (v.metric, v.limit, v.value) == ("max_recompiles", 1, 2)
    assert v.sentence == (
        "neuron_budget: region 'r' had 2 recompilations, budget max_recompiles=1 "
        "(recompiled: x.size()[0] == 8)"
    )
    (quiet,) = check(neuron_budget(max_recompiles=0), [measurement(recompiles=1)])
    assert quiet.sentence.endswith("(Dynamo gave no reason during this run)")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_ops": 10**400},
        {"max_flops": 10**400},
        {"max_device_us": 10**400},
        {"max_kernels": 2**53 + 1},
        {"max_recompiles": 10**30},
    ],
)
def test_limits_past_what_a_float_holds_are_refused(kwargs: dict[str, Any]) -> None:
    """Issue 24 item 15: 10**400 was an INTERNALERROR (OverflowError) in the run."""
    with pytest.raises(BudgetError, match=r"expected .*(at most|> 0)"):
        neuron_budget(**kwargs)
    assert check(neuron_budget(max_ops=2**53), [measurement()]) == []
