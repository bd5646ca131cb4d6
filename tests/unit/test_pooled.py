from __future__ import annotations

from dataclasses import replace

import helpers

from pytest_neuronperf.gate.pooled import pooled
from pytest_neuronperf.stats import Stats


def test_pooled_concatenates_each_processes_rounds_in_turn() -> None:
    a = helpers.measurement(ops={"aten::mul": 1}, device=[1.0, 2.0, 3.0])
    b = replace(a, host_us=Stats((7.0, 8.0)), device_us=Stats((4.0, 5.0)), rounds=2)
    p = pooled([a, b])
    assert p.device_us.samples == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert p.host_us.samples == (*a.host_us.samples, 7.0, 8.0)
    assert p.rounds == a.rounds + 2
    assert p.region == a.region and p.op_counts == a.op_counts


def test_a_figure_one_process_did_not_time_is_dropped() -> None:
    a = replace(
        helpers.measurement(ops={"aten::mul": 1}, device=[1.0, 2.0]), reference_us=Stats((1.0,))
    )
    b = replace(a, reference_us=None)
    assert pooled([a, b]).reference_us is None
    assert pooled([a, a]).reference_us == Stats((1.0, 1.0))
