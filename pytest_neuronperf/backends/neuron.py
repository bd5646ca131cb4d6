"""The Neuron backend (Trainium / Inferentia), imported lazily.

``torch-neuronx`` is never imported at module level: it is optional, heavy, and absent on
most machines. Availability follows ../shared/NEURON.md: the native TorchNeuron backend
registers PrivateUse1 under the name ``neuron``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from .base import Backend


class NeuronBackend(Backend):
    name = "neuron"
    mode = "device"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("torch_neuronx") is None:
            return (
                "torch-neuronx is not installed (it comes from AWS's Neuron package index, "
                "not PyPI, whose 'torch-neuronx' is a placeholder)"
            )
        import torch

        if torch._C._get_privateuse1_backend_name() != "neuron" or not hasattr(torch, "neuron"):
            return (
                "torch-neuronx is installed but the native TorchNeuron backend is not "
                "registered (PrivateUse1 is not 'neuron'); is TORCH_DEVICE_BACKEND_AUTOLOAD=0 set?"
            )
        if not _torch_neuron().is_available():
            return "torch.neuron reports no Neuron device on this machine"
        return None

    def device_kind(self) -> str:

        return f"neuron:{_torch_neuron().device_count()}nc"

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]

    def synchronize(self) -> None:

        _torch_neuron().synchronize()


def _torch_neuron() -> Any:
    """``torch.neuron``, which torch-neuronx registers at import (unknown to torch's stubs)."""
    import torch

    module: Any = torch
    return module.neuron
