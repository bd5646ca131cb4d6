"""reports/export.py: the optional measures (peak memory, issue 28; collectives, issue 27)
from a measurement's fields, when it has them; nothing from fields that are not figures."""

from __future__ import annotations

import math
from dataclasses import replace

from pytest_neuronperf.model import Collective, Measurement, Memory, Record
from pytest_neuronperf.reports.export import MEASURES, metrics, optional_metrics
from pytest_neuronperf.stats import Stats

MIB = 1 << 20


def test_memory_and_collectives_become_their_measures() -> None:
    got = {
        m.measure: m.value
        for m in optional_metrics(
            {
                "memory": {"peak_bytes": 4 * 2**20, "retained_bytes": 0, "allocated_bytes": 8},
                "collectives": {
                    "all_reduce": {"calls": 2, "bytes": 1024},
                    "all_gather": {"calls": 1, "bytes": 4096},
                },
            }
        )
    }
    assert got == {
        "peak-memory-bytes": 4 * 2**20,
        "retained-memory-bytes": 0,
        "collective-calls": 3,
        "collective-bytes": 5120,
    }
    assert set(got) <= set(MEASURES)


def test_absent_or_non_numeric_fields_give_no_measure() -> None:
    assert list(optional_metrics({})) == []
    assert list(optional_metrics({"memory": None})) == []
    assert list(optional_metrics({"memory": {"peak_bytes": None, "retained_bytes": True}})) == []
    assert list(optional_metrics({"memory": {"peak_bytes": math.nan}, "collectives": {}})) == []


def test_a_measurements_collectives_and_memory_are_exported_from_its_own_fields() -> None:
    """Through Measurement.to_dict, as the model (issues 27 and 28) writes them."""
    m = Measurement(
        test_id="t.py::t",
        region="mlp",
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=3,
        kernels=3,
        device_us=Stats.of([10.0, 12.0, 11.0]),
        host_us=Stats.of([20.0, 22.0, 21.0]),
        rounds=3,
        collectives={
            "all_reduce": Collective(2, 2048, 2, "shapes"),
            "all_gather": Collective(1, 512, 2, "shapes"),
        },
        world_size=2,
    )
    got = {x.measure: x.value for x in metrics(Record(m))}
    assert got["collective-calls"] == 3 and got["collective-bytes"] == 2560
    assert got["device-time-us"] == 11.0 and got["ops"] == 3
    assert "peak-memory-bytes" not in got
    # Memory (issue 28): 4 MiB allocated and 1 MiB kept, as the model holds them.
    leak = replace(
        m, memory=Memory(peak_bytes=4 * MIB, allocated_bytes=4 * MIB, retained_bytes=MIB)
    )
    got = {x.measure: x.value for x in metrics(Record(leak))}
    assert (got["peak-memory-bytes"], got["retained-memory-bytes"]) == (4 * MIB, MIB)
