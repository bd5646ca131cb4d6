"""FunctionEvents -> per-op device time on the native TorchNeuron backend, without a device.

What these tests stand on: torch's own ``FunctionEvent`` / ``EventList`` objects, built the
way torch's ``_parse_kineto_results`` builds them for a PrivateUse1 device (``build`` below
repeats its two steps: the elapsed-time hook's kernel on CPU events, and every device event
appended to the frontend op its ``linked_correlation_id`` names), then ``_build_tree()`` as
``prof.events()`` does. The three ways device time may arrive (the fields only, linked
device events only, both) come from torch's code and the tutorial's description; which one
torch-neuronx actually uses has not been seen from hardware (docs/neuron.md), and
benchmarks/verify_neuron.py checks it there. Expected figures are the durations put in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from torch._C._autograd import DeviceType
from torch.autograd.profiler_util import EventList as _EventList
from torch.autograd.profiler_util import FunctionEvent as _FunctionEvent

from pytest_neuronperf.backends.neuron.events import (
    backfill_rounds,
    key_averages_device_us,
)
from pytest_neuronperf.trace.analysis import AnalysisError

# torch's event classes, untyped in its stubs.
FunctionEvent: Any = _FunctionEvent
EventList: Any = _EventList
USE_DEVICE = "neuron"


@dataclass
class Raw:
    """One Kineto event as torch's parser reads it."""

    id: int
    name: str
    start: float
    end: float
    linked: int = 0
    device: bool = False  # a PrivateUse1 (device) event
    elapsed: float = 0.0  # privateuse1_elapsed_us(): the backend's elapsed-time hook
    annotation: bool = False


def build(raws: list[Raw]) -> Any:
    """FunctionEvents as ``_parse_kineto_results`` makes them, tree built."""
    events = []
    device_corr_map: dict[int, list[Any]] = {}
    frontend = []
    for r in raws:
        fe = FunctionEvent(
            id=r.id,
            name=r.name,
            thread=0 if r.device else 1,
            start_us=r.start,
            end_us=r.end,
            input_shapes=[],
            stack=[],
            use_device=USE_DEVICE,
            device_type=DeviceType.PrivateUse1 if r.device else DeviceType.CPU,
            device_index=0,
            is_user_annotation=r.annotation,
            linked_correlation_id=r.linked,
        )
        if not r.device and r.elapsed > 0:
            fe.append_kernel(fe.name, fe.device_index, r.elapsed)
            fe.is_legacy = True
        events.append(fe)
        if r.linked > 0:
            device_corr_map.setdefault(r.linked, []).append(fe)
        else:
            frontend.append(fe)
    for fe in frontend:
        if fe.device_type == DeviceType.CPU and fe.id in device_corr_map:
            for f_evt in device_corr_map[fe.id]:
                if f_evt.device_type == DeviceType.PrivateUse1:
                    fe.append_kernel(
                        f_evt.name,
                        f_evt.device_index,
                        f_evt.time_range.end - f_evt.time_range.start,
                    )
                else:
                    f_evt.thread = fe.thread
    out = EventList(events, use_device=USE_DEVICE)
    out._build_tree()
    return out


MARKER = Raw(1, "m", 0.0, 100.0, annotation=True)


def test_fields_only_elapsed_hook_reads_the_top_ops_inclusive_time() -> None:
    # The elapsed-time hook times every op inclusively: rms_norm's 400 holds its child's 390.
    raws = [
        MARKER,
        Raw(2, "aten::rms_norm", 10.0, 50.0, elapsed=400.0),
        Raw(3, "aten::_fused_rms_norm", 12.0, 48.0, elapsed=390.0),
        Raw(4, "aten::mul", 55.0, 60.0, elapsed=12.5),
    ]
    fes = build(raws)
    [b] = backfill_rounds(fes, ["m"])
    assert b.result.ops == ["aten::rms_norm", "aten::mul"]
    assert b.result.op_device_us == {"aten::rms_norm": 400.0, "aten::mul": 12.5}
    assert b.result.device_us == 400.0 + 12.5
    # One kernel entry per top op (the child's is inside its parent's).
    assert b.result.kernels == ["aten::rms_norm", "aten::mul"]
    rms = b.ops[0]
    assert (rms.total_us, rms.self_us, rms.linked_us, rms.source) == (400.0, 10.0, 0.0, "fields")
    assert key_averages_device_us(fes.key_averages()) == b.result.device_us


def test_linked_device_events_only_through_the_runtime_call() -> None:
    # The device event is linked to the runtime call, not to the op: torch appends it to
    # nothing, so the op's fields are empty and the linked event carries the time.
    raws = [
        MARKER,
        Raw(2, "aten::mul", 10.0, 40.0),
        Raw(900, "nrt_execute", 15.0, 30.0, linked=2),
        Raw(900, "neff_mul_0", 50.0, 58.0, linked=900, device=True),
    ]
    fes = build(raws)
    [b] = backfill_rounds(fes, ["m"])
    [op] = b.ops
    assert (op.total_us, op.linked_us, op.source) == (0.0, 8.0, "linked events")
    assert b.result.device_us == 8.0 and b.result.kernels == ["neff_mul_0"]
    assert b.result.launch_gaps_us == [50.0 - 15.0]
    assert key_averages_device_us(fes.key_averages()) == 8.0


def test_both_linked_event_and_fields_count_once() -> None:
    # CUDA's way: the device event names the op, torch appends it to the op's kernels, and
    # it is also in the event list. 8 µs, not 16.
    raws = [
        MARKER,
        Raw(2, "aten::mul", 10.0, 40.0),
        Raw(900, "nrt_execute", 15.0, 30.0, linked=2),
        Raw(900, "neff_mul_0", 50.0, 58.0, linked=2, device=True),
    ]
    fes = build(raws)
    [b] = backfill_rounds(fes, ["m"])
    [op] = b.ops
    assert (op.total_us, op.linked_us, op.source) == (8.0, 8.0, "fields")
    assert b.result.device_us == 8.0
    assert b.result.kernels == ["neff_mul_0"] and b.result.op_kernels == {"aten::mul": 1}
    assert key_averages_device_us(fes.key_averages()) == 8.0


def test_mixed_region_sums_each_op_once_and_equals_key_averages() -> None:
    raws = [
        MARKER,
        Raw(2, "aten::add", 5.0, 9.0, elapsed=3.0),  # fields only
        Raw(3, "aten::mul", 10.0, 40.0),  # linked through its runtime call
        Raw(800, "nrt_execute", 15.0, 30.0, linked=3),
        Raw(800, "neff_mul", 41.0, 47.5, linked=800, device=True),
        Raw(4, "aten::rsqrt", 50.0, 70.0),  # both
        Raw(801, "nrt_execute", 52.0, 60.0, linked=4),
        Raw(801, "neff_rsqrt", 71.0, 73.25, linked=4, device=True),
        Raw(5, "aten::view", 80.0, 81.0),  # no device work at all
    ]
    fes = build(raws)
    [b] = backfill_rounds(fes, ["m"])
    expected = {"aten::add": 3.0, "aten::mul": 6.5, "aten::rsqrt": 2.25, "aten::view": 0.0}
    assert b.result.op_device_us == expected
    assert b.result.device_us == sum(expected.values())
    assert [o.source for o in b.ops] == ["fields", "linked events", "fields", "none"]
    assert key_averages_device_us(fes.key_averages()) == b.result.device_us


def test_rounds_are_separate_and_events_outside_them_do_not_count() -> None:
    raws = [
        Raw(1, "r0", 0.0, 50.0, annotation=True),
        Raw(2, "aten::mul", 10.0, 20.0, elapsed=5.0),
        Raw(3, "r1", 60.0, 100.0, annotation=True),
        Raw(4, "aten::mul", 70.0, 80.0, elapsed=7.0),
        Raw(5, "aten::mul", 120.0, 130.0, elapsed=100.0),  # between or after rounds
    ]
    r0, r1 = backfill_rounds(build(raws), ["r0", "r1"])
    assert (r0.result.device_us, r1.result.device_us) == (5.0, 7.0)


def test_no_device_time_anywhere_reads_zero_and_says_ops_were_dispatched() -> None:
    [b] = backfill_rounds(build([MARKER, Raw(2, "aten::mul", 10.0, 20.0)]), ["m"])
    assert b.result.device_us == 0.0 and b.dispatched
    [empty] = backfill_rounds(build([MARKER]), ["m"])
    assert not empty.dispatched


def test_missing_marker_is_an_analysis_error() -> None:
    with pytest.raises(AnalysisError, match="lacks the region markers"):
        backfill_rounds(build([MARKER]), ["m", "other"])
