"""The terminal table fits the terminal: columns drop or merge by priority, long test ids
and regions are elided in the middle, footer sentences wrap."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_neuronperf.model import Measurement, Record, Work
from pytest_neuronperf.reports.fit import fit_table, terminal_width, wrap
from pytest_neuronperf.reports.terminal import baseline_footer, summary_table
from pytest_neuronperf.stats import Stats

LONG_ID = "tests/models/test_llama.py::test_mlp[" + "x" * 300 + "]"


def record(test_id: str = LONG_ID, region: str = "mlp", **kwargs: object) -> Record:
    m = Measurement(
        test_id=test_id,
        region=region,
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=6,
        kernels=7,
        op_counts={"aten::mul": 6},
        kernel_counts={"aten::mul": 7},
        device_us=Stats.of([10.0, 11.0, 12.0]),
        host_us=Stats.of([20.0, 21.0, 22.0]),
        per_op=(),
        rounds=3,
        work=Work(flops=4_000, bytes_read=8_000, bytes_written=4_000),
        peak_flops_per_s=1e11,
        peak_bytes_per_s=1e10,
    )
    defaults: dict[str, object] = {
        "budget": "max_ops=6, max_flops=65568",
        "status": "ok",
        "baseline": "same",
        "baseline_cell": "same +2%",
    }
    return Record(m, **{**defaults, **kwargs})  # type: ignore[arg-type]


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("width", [80, 100, 120, 160])
def test_table_fits_and_keeps_what_matters(width: int) -> None:
    records = [record(), record("t.py::test_b", "other")]
    full = summary_table(records)
    assert widest(full) > 300, "unfitted, the long id widens every row"
    fitted = summary_table(records, width)
    assert widest(fitted) <= width
    header = fitted.splitlines()[0].split()
    for kept in ("test", "region", "host", "status", "baseline"):
        assert kept in header, (width, header)
    assert "t.py::test_b" in fitted and "same +2%" in fitted


def test_columns_go_in_priority_order_and_counts_merge() -> None:
    records = [record("t.py::test_a")]
    wide = summary_table(records, 400)
    assert wide == summary_table(records), "nothing goes when everything fits"
    header = summary_table(records, 120).splitlines()[0]
    # Work detail goes first, then device, rounds: all of it is in JSON and HTML.
    assert "FLOP/B" not in header and "MB moved" not in header and "rounds" not in header
    assert "budget" in header
    at_80 = summary_table(records, 80).splitlines()
    assert at_80[0].split() == ["test", "region", "ops/kernels", "host", "µs", "status", "baseline"]
    assert at_80[2].split()[2] == "6/7"
    # On cpu host time is gated: device µs goes before it.
    at_60 = summary_table(records, 60).splitlines()[0].split()
    assert at_60 == ["test", "region", "ops", "host", "µs", "status", "baseline"]


def test_fit_table_shrinks_the_widest_elastic_column_first() -> None:
    rows = [["a" * 100, "r" * 30, "ok"]]
    table = fit_table(["test", "region", "status"], rows, 60)
    assert widest(table) <= 60
    test_cell, region_cell, _ = table.splitlines()[2].split()
    # Both above their kept widths (40, 24), then shrunk alike towards their floors.
    assert (len(test_cell), len(region_cell)) == (28, 20)


def test_footer_sentences_wrap_to_the_width() -> None:
    records = [record(baseline="new", baseline_cell="new")]
    stale = [(LONG_ID, "gone")]
    lines = baseline_footer(records, Path(".neuronperf/cpu.json"), stale=stale, width=80)
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("  ") for line in lines), "continuations are indented"
    assert wrap("short", 80) == ["short"]


def test_terminal_width_is_pytests_then_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    class Writer:
        fullwidth = 99

    class Config:
        def get_terminal_writer(self) -> Writer:
            return Writer()

    assert terminal_width(Config()) == 99
    monkeypatch.setenv("COLUMNS", "123")
    assert terminal_width(None) == 123

    class NoTerminal:
        def get_terminal_writer(self) -> Writer:
            raise AssertionError  # as pytest's Config does under -p no:terminal

    assert terminal_width(NoTerminal()) == 123
