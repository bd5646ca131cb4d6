"""baselines/update.py: what a run writes to the baseline file, pooling included."""

from __future__ import annotations

from pathlib import Path

import helpers

from pytest_neuronperf.baselines.store import Baselines
from pytest_neuronperf.baselines.update import plan_update
from pytest_neuronperf.reports.footer import baseline_footer


def test_update_plan_pools_what_it_can_and_replaces_the_rest() -> None:
    key_same, key_other, key_new = ("t::a", "r"), ("t::b", "r"), ("t::c", "r")
    current = Baselines(
        Path("x.json"),
        "cpu:x86_64",
        {"t::a": {"r": helpers.process_entry(5.0)}, "t::b": {"r": helpers.process_entry(5.0)}},
    )
    measured = {
        key_same: (helpers.process_entry(5.5, 7), False),
        key_other: (helpers.process_entry(5.0, ops=3, op_counts={"aten::mul": 3}), True),
        key_new: (helpers.process_entry(5.0), True),
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
