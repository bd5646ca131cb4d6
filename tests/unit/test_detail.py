"""A region's breakdown: its figures, per-op table and notes, fitted to the width."""

from __future__ import annotations

from dataclasses import replace

from test_terminal import record

from pytest_neuronperf.model import OpRow, Work
from pytest_neuronperf.reports.detail import beyond_torch_sentence, duration, measurement_detail


def test_a_long_first_call_reads_in_seconds_and_one_cold_run_is_said() -> None:
    """Issue 25, item 11 (the exponents: test_terminal.py)."""
    assert [duration(v) for v in (812.0, 25_000.0, 19_480_452.0)] == [
        "812.0 µs",
        "25.0 ms",
        "19.5 s",
    ]
    cold = replace(record().measurement, rounds=1, warmup_rounds=0, first_call_us=0.0)
    detail = measurement_detail(cold)
    assert "one cold execution" in detail and "first call 0.0" not in detail


def test_detail_fits_the_width_with_its_per_op_table() -> None:
    m = replace(
        record().measurement,
        per_op=(OpRow("aten::_scaled_dot_product_flash_attention_for_cpu", 1, 5.0, 1.0, 1),),
    )
    lines = measurement_detail(m, 80).splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert any(line.startswith("aten::_scaled") for line in lines)


def test_detail_names_the_ops_beside_flop_counter_mode_largest_first() -> None:
    """Issue 35, item 4: the FLOPs we count and torch's FlopCounterMode does not, by op."""
    beyond = {f"aten::op{i}": 1_000 * i for i in (3, 8, 1, 6, 2, 7, 5, 4)}
    beyond["aten::evil\x1b]0;x"] = 500  # a name is escaped for the terminal
    work = Work(flops=100_000, bytes_read=8_000, bytes_written=4_000, flops_beyond_torch=beyond)
    m = replace(record().measurement, work=work)
    (line,) = [x for x in measurement_detail(m).splitlines() if "FlopCounterMode" in x]
    assert line == (
        "FLOPs beside torch's FlopCounterMode: it counts 63,500; ours adds 36,500 for "
        "aten::op8 8,000, aten::op7 7,000, aten::op6 6,000, aten::op5 5,000, "
        "aten::op4 4,000, aten::op3 3,000 (+3 more)"
    )
    few = replace(m, work=replace(work, flops_beyond_torch={"aten::_softmax": 10_240}))
    assert "ours adds 10,240 for aten::_softmax 10,240\n" in measurement_detail(few) + "\n"
    # A sentence that wraps, every word kept.
    narrow = measurement_detail(m, 60).splitlines()
    assert all(len(x) <= 60 for x in narrow)
    start = next(i for i, x in enumerate(narrow) if x.startswith("FLOPs beside"))
    assert " ".join(" ".join(narrow[start:]).split()).startswith(line)
    # torch counts it all: no sentence.
    assert "FlopCounterMode" not in measurement_detail(record().measurement)


def test_beside_torch_sentence_escapes_op_names() -> None:
    work = Work(1_000, 0, 0, flops_beyond_torch={"aten::a\x1b[2J": 10})
    assert beyond_torch_sentence(work).endswith("for aten::a\\x1b[2J 10")
    assert beyond_torch_sentence(Work(1_000, 0, 0)) == ""
