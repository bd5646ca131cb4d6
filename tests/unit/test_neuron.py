"""The Neuron backend without a Neuron device.

What these tests stand on: availability and device-kind logic (pure), and the adapter fed
torch's own ``FunctionEvent`` objects built the way torch's Kineto parser builds them for
a PrivateUse1 device (device events linked to their op by ``linked_correlation_id``; or,
the fallback, kernels appended to the op). No real Neuron profiler output exists in
public (../shared/NEURON.md); what stays untested is listed in neuron_adapter's docstring
and checked on hardware by benchmarks/verify_neuron.py.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from torch._C._autograd import DeviceType
from torch.autograd.profiler_util import FunctionEvent as _FunctionEvent

from pytest_neuronperf.backends import BackendUnavailable, NeuronBackend, select
from pytest_neuronperf.backends.neuron_events import (
    instance_family,
    neuron_device_kind,
    neuron_events,
    read_instance_type,
)
from pytest_neuronperf.trace.analysis import analyze_markers

HAS_NEURON = NeuronBackend().unavailable_reason() is None
# torch's own event class, untyped in its stubs.
FunctionEvent: Any = _FunctionEvent


@pytest.mark.slow  # a fresh interpreter in a subprocess
def test_importing_the_plugin_imports_neither_torch_neuronx_nor_torch() -> None:
    code = (
        "import sys, pytest_neuronperf.backends, pytest_neuronperf.trace.offline;"
        "print('torch_neuronx' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.skipif(HAS_NEURON, reason="a Neuron device is present")
def test_unavailable_reason_here() -> None:
    reason = NeuronBackend().unavailable_reason()
    assert reason is not None and "torch-neuronx is not installed" in reason
    with pytest.raises(BackendUnavailable, match="backend 'neuron' is unavailable"):
        select("neuron")


@pytest.mark.parametrize(
    ("present", "expected"),
    [
        ({"torch_neuronx", "torch_xla"}, "PyTorch/XLA stack"),
        ({"torch_neuronx"}, "native TorchNeuron backend is not registered"),
    ],
)
def test_installed_but_not_native_says_which_stack(
    monkeypatch: pytest.MonkeyPatch, present: set[str], expected: str
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return object() if name in present else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    reason = NeuronBackend().unavailable_reason()
    assert reason is not None and expected in reason


@pytest.mark.parametrize(
    ("instance", "family"),
    [
        ("trn1.32xlarge", "trn1"),
        ("trn1n.32xlarge", "trn1n"),
        ("trn2.48xlarge", "trn2"),
        ("trn2u.48xlarge", "trn2u"),
        ("inf2.xlarge", "inf2"),
        ("inf1.6xlarge", "inf1"),
        ("m5.large", None),
        ("", None),
    ],
)
def test_instance_family(instance: str, family: str | None) -> None:
    assert instance_family(instance) == family


def test_device_kind_names_family_and_cores(tmp_path: Path) -> None:
    assert neuron_device_kind("trn2.48xlarge", 64) == "neuron:trn2:64nc"
    assert neuron_device_kind(None, 2) == "neuron:unknown:2nc"
    product = tmp_path / "product_name"
    product.write_text("inf2.xlarge\n")
    assert read_instance_type(product) == "inf2.xlarge"
    assert read_instance_type(tmp_path / "missing") is None


def _annotation(fid: int, name: str, start: float, end: float) -> Any:
    return FunctionEvent(fid, name, 1, start, end, is_user_annotation=True)


def test_adapter_links_privateuse1_device_events_to_their_op() -> None:
    marker = _annotation(1, "m", 0.0, 100.0)
    op = FunctionEvent(2, "aten::mul", 1, 10.0, 40.0)
    launch = FunctionEvent(900, "nrt_execute", 1, 15.0, 30.0, linked_correlation_id=2)
    device = FunctionEvent(
        900,
        "neff_mul_0",
        0,
        50.0,
        58.0,
        device_type=DeviceType.PrivateUse1,
        linked_correlation_id=2,
    )
    [r] = analyze_markers(neuron_events([marker, op, launch, device]), ["m"], "device")
    assert r.ops == ["aten::mul"] and r.kernels == ["neff_mul_0"]
    assert r.device_us == pytest.approx(8.0)
    assert r.launch_gaps_us == [pytest.approx(35.0)]


def test_adapter_falls_back_to_kernels_appended_to_ops() -> None:
    marker = _annotation(1, "m", 0.0, 100.0)
    op = FunctionEvent(2, "aten::rms_norm", 1, 10.0, 40.0)
    op.append_kernel("nc_exec_running", 0, 12.5)
    other = FunctionEvent(3, "aten::add", 1, 50.0, 60.0)
    [r] = analyze_markers(neuron_events([marker, op, other]), ["m"], "device")
    assert r.ops == ["aten::rms_norm", "aten::add"]
    assert r.op_device_us == {"aten::rms_norm": 12.5, "aten::add": 0.0}
    assert r.kernels == ["nc_exec_running"] and r.launch_gaps_us == []


@pytest.mark.skipif(not HAS_NEURON, reason="no Neuron device (needs native TorchNeuron)")
def test_live_rmsnorm_on_neuron() -> None:
    import torch

    from pytest_neuronperf.measure.runner import Runner

    def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    x, w = torch.randn(16, 256).to("neuron"), torch.randn(256).to("neuron")
    _, m = Runner(NeuronBackend()).measure_callable(
        naive, (x, w), {}, test_id="t", name="naive", warmup=3, rounds=5
    )
    assert m.device_kind.startswith("neuron:") and m.ops == 6
    assert m.kernels >= 1 and m.device_us.median > 0
