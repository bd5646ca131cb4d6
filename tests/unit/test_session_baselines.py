"""session/baselines.py: which regions a pooling run names for their recording processes'
spread, each at the tolerance a compare run would judge it at."""

from __future__ import annotations

from pathlib import Path

import helpers

from pytest_neuronperf.baselines.store import Baselines
from pytest_neuronperf.baselines.update import plan_update
from pytest_neuronperf.session.baselines import spread_apart


def test_a_pooled_region_is_named_at_its_markers_tolerance() -> None:
    # Two recording processes 20% apart against the memory tick: about -9%..+9% from their
    # pooled median, and one at the same speed as its first.
    current = Baselines(
        Path("x.json"),
        "cpu:x86_64",
        {"t::a": {"r": helpers.process_entry(1.0)}, "t::b": {"r": helpers.process_entry(1.0)}},
    )
    measured = {
        ("t::a", "r"): (helpers.process_entry(1.2, 3), False),
        ("t::b", "r"): (helpers.process_entry(1.0, 5), False),
    }
    plan = plan_update(current, measured, (), pool=True)
    assert plan.pooled == (("t::a", "r"), ("t::b", "r"))
    (named,) = spread_apart(plan, {}, 0.05)
    assert named[:2] == ("t::a", "r") and named[2].startswith("-")
    # Its marker's 15% holds it, whatever the session's; another's 1% names that one too.
    assert spread_apart(plan, {("t::a", "r"): 0.15}, 0.05) == []
    assert [t for t, _, _ in spread_apart(plan, {("t::b", "r"): 1e-9}, 0.05)] == ["t::a", "t::b"]
    assert spread_apart(plan, {}, 0.15) == []
