"""reports/export.py: the optional measures (peak memory, issue 28; collectives, issue 27)
from a measurement's fields, when it has them; nothing from fields that are not figures."""

from __future__ import annotations

import math

from pytest_neuronperf.reports.export import MEASURES, optional_metrics


def test_memory_and_collectives_become_their_measures() -> None:
    got = {
        m.measure: m.value
        for m in optional_metrics(
            {
                "peak_bytes": 4 * 2**20,
                "retained_bytes": 0,
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
    assert list(optional_metrics({"peak_bytes": None, "retained_bytes": True})) == []
    assert list(optional_metrics({"peak_bytes": math.nan, "collectives": {}})) == []
