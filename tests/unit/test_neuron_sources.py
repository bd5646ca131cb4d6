"""The two Neuron device-time sources -> one figure per round, notes, or a loud error.

What these tests stand on: rounds as the backfill reader gives them (RoundResult per round,
see test_neuron_events.py for how they come from FunctionEvents) and executions as the
runtime-trace reader gives them (see test_neuron_runtime.py for the documented Parquet
schema). No Neuron output has been seen from hardware; the margin and the error texts are
this project's.
"""

from __future__ import annotations

import pytest

from pytest_neuronperf.backends.neuron.events import BackfillRound
from pytest_neuronperf.backends.neuron.runtime import Execution, RoundExecutions
from pytest_neuronperf.backends.neuron.sources import (
    MARGIN,
    NeuronDeviceTimeError,
    Tried,
    agreement,
    combine,
)
from pytest_neuronperf.trace.analysis import RoundResult

OPS = ["aten::mul", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::mul"]
TRIED = Tried(backfill_passed=True, runtime="on (/opt/aws/neuron/bin/neuron-explorer)")


def backfill(device_us: float, ops: list[str] | None = None) -> BackfillRound:
    ops = OPS if ops is None else ops
    per_op = {name: device_us / len(ops) * ops.count(name) for name in ops} if ops else {}
    return BackfillRound(
        RoundResult(ops=list(ops), kernels=["k"] if device_us else [], device_us=device_us,
                    op_device_us=per_op),
        (),
    )  # fmt: skip


def runtime(*durations_us: float, model: str = "model 7") -> RoundExecutions:
    execs, t = [], 1_000
    for d in durations_us:
        execs.append(Execution(model, t, t + int(d * 1e3), 2, 0))
        t += int(d * 1e3) + 500
    return RoundExecutions(tuple(execs))


def test_backfill_is_the_device_time_and_runtime_agrees_within_margin() -> None:
    rounds = [backfill(2355.0), backfill(2365.0)]
    out = combine("naive", rounds, [runtime(2300.0), runtime(2310.0)], TRIED)
    assert out.source == "backfill"
    assert [r.device_us for r in out.rounds] == [2355.0, 2365.0]
    assert out.notes[0].startswith("device time: the key_averages() backfill")
    assert "agrees with the backfill within 10%" in out.notes[1]
    assert [s.runtime_us for s in out.per_round] == [2300.0, 2310.0]
    assert [s.executions for s in out.per_round] == [1, 1]


def test_disagreement_beyond_the_margin_is_said() -> None:
    # Just past the margin: 100 against 100 / (1 - MARGIN) + a little.
    far = 100.0 / (1 - MARGIN) + 1.0
    out = combine("r", [backfill(100.0)], [runtime(far)], TRIED)
    assert "DISAGREES with the backfill by 11% (beyond the 10% margin)" in out.notes[1]
    assert agreement(100.0, 100.0 / (1 - MARGIN) - 0.01)[0]
    assert not agreement(100.0, far)[0]


def test_runtime_trace_is_the_device_time_where_the_backfill_is_absent() -> None:
    tried = Tried(backfill_passed=False, runtime=TRIED.runtime)
    out = combine("naive", [backfill(0.0), backfill(0.0)], [runtime(5.0, 7.0), runtime(6.0, 6.5)],
                  tried)  # fmt: skip
    assert out.source == "runtime trace"
    assert [r.device_us for r in out.rounds] == [12.0, 12.5]
    assert out.rounds[0].kernels == ["model 7", "model 7"]
    assert "Neuron Runtime trace" in out.notes[0] and "does not accept correlate" in out.notes[0]
    assert out.notes[1] == "device executions a round: model 7 ×2"


def test_no_device_time_from_either_source_is_an_error_naming_what_was_tried() -> None:
    with pytest.raises(NeuronDeviceTimeError) as err:
        combine("naive", [backfill(0.0)], [runtime()], TRIED)
    text = str(err.value)
    assert "region 'naive' dispatched ops (aten::mul ×3" in text
    assert "correlate_device_time=True) was passed, yet key_averages() shows no device time" in text
    assert "no nc_exec_running execution in the host window of round 0" in text
    for cause in ("torch-neuronx too old", "max_events_per_nc", "CPU fallback", "2.14.3"):
        assert cause in text
    assert "\n" not in text


def test_runtime_not_read_and_no_backfill_is_an_error_saying_why_not_read() -> None:
    tried = Tried(backfill_passed=False, runtime="off: needs pyarrow")
    with pytest.raises(
        NeuronDeviceTimeError, match=r"Runtime trace: not read \(off: needs pyarrow"
    ):
        combine("naive", [backfill(0.0)], None, tried)


def test_a_round_without_ops_needs_no_device_time() -> None:
    out = combine("setup", [backfill(0.0, ops=[])], None, TRIED)
    assert out.source == "none" and out.notes == ()


def test_rounds_differing_in_models_are_an_error() -> None:
    with pytest.raises(NeuronDeviceTimeError, match="round 1 ran no execution"):
        combine("naive", [backfill(5.0), backfill(5.0)], [runtime(5.0), runtime()], TRIED)
    with pytest.raises(NeuronDeviceTimeError, match="round 1 ran model 8 ×1"):
        combine("naive", [backfill(5.0), backfill(5.0)],
                [runtime(5.0), runtime(5.0, model="model 8")], TRIED)  # fmt: skip


def test_runtime_empty_in_every_round_beside_a_backfill_is_a_noted_disagreement() -> None:
    out = combine("naive", [backfill(5.0), backfill(5.0)], [runtime(), runtime()], TRIED)
    assert out.source == "backfill"
    assert "runtime trace disagrees: no nc_exec_running execution" in out.notes[1]


def test_runtime_not_read_beside_a_backfill_is_noted() -> None:
    out = combine("naive", [backfill(5.0)], None, TRIED, runtime_failure="no host window")
    assert out.notes[1] == "runtime trace: not read (no host window)"
