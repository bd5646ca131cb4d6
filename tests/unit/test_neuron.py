"""The Neuron backend without a Neuron device: availability, device kind, and the live
path, which skips here with a reason.

What these tests stand on: availability and device-kind logic (pure; the logical-core
setting and its defaults from AWS's logical-neuroncore-config page). Device time is tested
in test_neuron_events.py (FunctionEvents), test_neuron_runtime.py (the runtime trace's
documented Parquet schema) and test_neuron_sources.py; no Neuron profiler output has been
seen from hardware (docs/neuron.md), and benchmarks/verify_neuron.py checks it there.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.backends import BackendUnavailable, NeuronBackend, select
from pytest_neuronperf.backends.neuron.events import (
    instance_family,
    logical_core_setting,
    neuron_device_kind,
    read_instance_type,
)

UNAVAILABLE = NeuronBackend().unavailable_reason()
HAS_NEURON = UNAVAILABLE is None


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
    assert reason is not None and reason.startswith("torch-neuronx is not installed (")
    assert "torch 2.14 with torch-neuronx 2.14.3, Neuron SDK 2.33" in reason
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
    assert "torch 2.14 with torch-neuronx 2.14.3" in reason


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


def test_device_kind_names_family_cores_and_logical_core_setting(tmp_path: Path) -> None:
    assert neuron_device_kind("trn2.48xlarge", 64, "lnc2") == "neuron:trn2:64nc:lnc2"
    assert neuron_device_kind(None, 2, "lnc?") == "neuron:unknown:2nc:lnc?"
    product = tmp_path / "product_name"
    product.write_text("inf2.xlarge\n")
    assert read_instance_type(product) == "inf2.xlarge"
    assert read_instance_type(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("env", "family", "lnc"),
    [
        ({}, "trn2", "lnc2"),  # Trn2's documented default
        ({}, "trn2u", "lnc2"),
        ({}, "trn3", "lnc2"),
        ({"NEURON_LOGICAL_NC_CONFIG": "1"}, "trn2", "lnc1"),
        ({"NEURON_LOGICAL_NC_CONFIG": " 2 "}, "trn2", "lnc2"),
        ({}, "trn1", "lnc1"),  # no logical cores outside Trn2 / Trn3
        ({}, "inf2", "lnc1"),
        ({}, None, "lnc?"),
        ({"NEURON_LOGICAL_NC_CONFIG": "two"}, "trn2", "lnc?"),
    ],
)
def test_logical_core_setting(env: dict[str, str], family: str | None, lnc: str) -> None:
    assert logical_core_setting(env, family) == lnc


@pytest.mark.skipif(not HAS_NEURON, reason=f"neuron backend unavailable: {UNAVAILABLE}")
def test_live_rmsnorm_on_neuron() -> None:
    import torch

    from pytest_neuronperf.measure.runner import Runner
    from pytest_neuronperf.settings import defaults

    def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    backend, _ = select("neuron", replace(defaults(), backend="neuron"))
    x, w = torch.randn(16, 256).to("neuron"), torch.randn(256).to("neuron")
    _, m = Runner(backend).measure_callable(
        naive, (x, w), {}, test_id="t", name="naive", warmup=3, rounds=5
    )
    assert m.device_kind.startswith("neuron:") and ":lnc" in m.device_kind and m.ops == 6
    assert m.kernels >= 1 and m.device_us.median > 0 and m.device_notes
