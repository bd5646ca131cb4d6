"""The terminal table fits the terminal: columns drop or merge by priority, long test ids
and regions are elided in the middle."""

from __future__ import annotations

from dataclasses import replace

import helpers
import pytest

from pytest_neuronperf.model import Record, TimeJudged, Work
from pytest_neuronperf.reports.change import time_text
from pytest_neuronperf.reports.fit import elide_apart, fit_table, terminal_width
from pytest_neuronperf.reports.terminal import amount, summary_table

LONG_ID = "tests/models/test_llama.py::test_mlp[" + "x" * 300 + "]"


def record(test_id: str = LONG_ID, region: str = "mlp", **kwargs: object) -> Record:
    m = helpers.measurement(
        region,
        test_id=test_id,
        ops={"aten::mul": 6},
        kernels={"aten::mul": 7},
        device=[10.0, 11.0, 12.0],
        host=[20.0, 21.0, 22.0],
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
    # Grouped by test: the id on a line of its own, so ops and kernels both keep a column.
    for kept in ("region", "ops", "kernels", "host", "status"):
        assert kept in header, (width, header)
    lines = fitted.splitlines()
    assert "t.py::test_b" in lines and lines[2].startswith("tests/models/test_llama.py::test_mlp[")
    cells = lines[3].split()
    assert cells[0] == "mlp" and cells[cells.index("6") + 1] == "7", cells


def test_columns_go_in_priority_order_and_the_table_groups_by_test() -> None:
    records = [record("t.py::test_a")]
    wide = summary_table(records, 400)
    assert wide == summary_table(records), "nothing goes when everything fits"
    assert wide.splitlines()[2].split()[:2] == ["t.py::test_a", "mlp"], "one line a region"
    header = summary_table(records, 120).splitlines()[0]
    # Work detail goes first, then device, rounds: all of it is in JSON and HTML.
    assert "FLOP/B" not in header and "MB moved" not in header and "rounds" not in header
    assert "budget" in header
    at_80 = summary_table(records, 80).splitlines()
    assert at_80[0].split() == ["region", "ops", "kernels", "device", "µs", "host", "µs", "status"]
    assert at_80[2] == "t.py::test_a" and at_80[3].split()[:3] == ["mlp", "6", "7"]
    # On cpu host time is gated: device µs goes before it, then ops and kernels merge.
    at_60 = summary_table(records, 60).splitlines()[0].split()
    assert at_60 == ["region", "ops/kernels", "device", "µs", "host", "µs", "status"]
    at_50 = summary_table(records, 50).splitlines()[0].split()
    assert at_50 == ["region", "ops/kernels", "host", "µs", "status"]


def test_a_row_that_moved_says_against_what_and_a_failed_test_is_never_ok() -> None:
    slower = TimeJudged("host_us", 399.0, 813.0, 1.49, 1.37, "regressed")
    records = [
        record("t.py::test_a", "fwd", status="ok", baseline="regressed", time_judged=slower),
        record("t.py::test_a", "block", status="test failed", baseline="same", baseline_ops=6),
        record("t.py::test_b", "mlp", baseline="regressed", baseline_ops=5, baseline_kernels=7),
    ]
    lines = summary_table(records, 80).splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[2:] == [
        "t.py::test_a",
        lines[3],
        "    baseline regressed: host 399.0 → 813.0 µs +104% raw, refs +37%, judged +49%",
        lines[5],
        "t.py::test_b",
        lines[7],
        "    baseline regressed: ops 5 → 6",
    ]
    assert [lines[i].split()[-1] for i in (3, 5, 7)] == ["regressed", "failed", "regressed"]


def test_a_row_says_when_the_raw_rounds_overruled_the_references() -> None:
    # The resnet18: 10% faster as measured beside ticks 20% faster, +16% against
    # them; the raw rounds overruled it, and the row says what the references alone said.
    held = TimeJudged("host_us", 17_721.4, 15_977.0, 1.16, 0.8, "same", 0.1, "regressed")
    assert time_text(held) == (
        "host 17,721.4 → 15,977.0 µs -10% raw, refs -20%, judged +16%, regressed only against refs"
    )
    agreed = replace(held, verdict="regressed", overruled="")
    assert time_text(agreed) == "host 17,721.4 → 15,977.0 µs -10% raw, refs -20%, judged +16%"
    # Under its row in the table, though the row held; a plain "same" says nothing.
    rows = [
        record("t.py::test_a", "resnet", baseline="same", time_judged=held),
        record("t.py::test_a", "llama", baseline="same", time_judged=replace(held, overruled="")),
    ]
    said = [line.strip() for line in summary_table(rows, 80).splitlines()[2:]]
    assert said[2:] == [
        "baseline same: host 17,721.4 → 15,977.0 µs -10% raw, refs -20%, judged +16%,",
        "regressed only against refs",
        said[4],
    ]


def test_test_ids_that_elide_alike_are_told_apart() -> None:
    ids = [f"tests/test_models.py::test_attention[batch1-seq128-heads{h}-dim64]" for h in (8, 16)]
    short = elide_apart(ids, 40)
    assert all(len(s) <= 40 for s in short.values())
    assert short[ids[0]].endswith("::test_attention[…heads8…]")
    assert short[ids[1]].endswith("::test_attention[…heads16…]")
    assert elide_apart(["a.py::t"], 40) == {"a.py::t": "a.py::t"}


@pytest.mark.parametrize("width", [40, 80, 120])
def test_ids_that_differ_at_the_end_keep_their_ends_and_the_test_name(width: int) -> None:
    module = "tests/test_huggingface_transformer_decoder_blocks_against_reference_numerics.py"
    name = "test_decoder_block_matches_the_reference_implementation"
    case = "tiny-llama-2-layers-4-heads-hidden-64-seq-128-rope-10000-eager-attention"
    ids = [f"{module}::{name}[{case}-{end}]" for end in ("slowed", "extra-op")]
    ids.append(f"{module}::test_scaled_dot_product_attention_matches_naive")
    short = elide_apart(ids, width)
    assert all(len(s) == width for s in short.values()), short
    assert short[ids[0]].endswith("[…slowed]") and short[ids[1]].endswith("op]")
    if width >= 80:
        # The test's name whole, and what tells the two cases apart whole.
        assert f"::{name}[…slowed]" in short[ids[0]]
        assert f"::{name}[…extra-op]" in short[ids[1]]
        assert short[ids[2]].endswith("::test_scaled_dot_product_attention_matches_naive")
    # The file's name gives way from its start: its end is what tells files apart.
    assert all(s.startswith("…") for s in short.values())


def test_fit_table_shrinks_the_widest_elastic_column_first() -> None:
    rows = [["a" * 100, "r" * 30, "ok"]]
    table = fit_table(["test", "region", "status"], rows, 60)
    assert widest(table) <= 60
    test_cell, region_cell, _ = table.splitlines()[2].split()
    # Both above their kept widths (40, 24), then shrunk alike towards their floors.
    assert (len(test_cell), len(region_cell)) == (28, 20)


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


def test_amounts_never_read_in_exponents() -> None:
    """Issue 25, item 11: no exponents (the rest of the item: test_detail.py)."""
    assert [amount(v) for v in (0, 8e-9, 0.00131, 2.5, 1234.6)] == [
        "0",
        "<0.001",
        "0.00131",
        "2.5",
        "1,235",
    ]


def test_an_error_of_ours_is_wrapped_to_the_lines_pytest_prints_it_on() -> None:
    from pytest_neuronperf.measure.errors import MeasureError
    from pytest_neuronperf.reports.fit import fit_error

    words = "the callable returned a generator so nothing of it would be measured " * 4
    exc = MeasureError(words.strip())
    fit_error(exc, 120)
    name = "pytest_neuronperf.measure.errors.MeasureError: "
    first, *rest = str(exc).splitlines()
    # pytest prints "E       " before each line, and the qualified name before the first.
    assert len("E       " + name + first) <= 120 and first.startswith("the callable")
    assert rest and all(len("E       " + line) <= 120 for line in rest)
    assert " ".join(str(exc).split()) == " ".join(words.split()), "no word lost"
    # At 80 the name leaves too little room: the message starts on the next line.
    narrow = MeasureError(words.strip())
    fit_error(narrow, 80)
    assert str(narrow).startswith("\n") and all(len(x) <= 72 for x in str(narrow).splitlines())
    # A message that fits is left as it was.
    short = MeasureError("fits")
    fit_error(short, 80)
    assert str(short) == "fits"
