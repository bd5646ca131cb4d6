"""The Neuron backend (Trainium / Inferentia), imported lazily.

``torch-neuronx`` is never imported at module level: it is optional, heavy, and absent on
most machines. Availability follows ../shared/NEURON.md: the native TorchNeuron backend
registers PrivateUse1 under the name ``neuron``. What turns Neuron's profiler output into
our metrics is ``neuron_adapter`` (pure, with its UNVERIFIED assumptions listed there);
``benchmarks/verify_neuron.py`` checks them on hardware.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Backend
from .neuron_events import neuron_device_kind, neuron_events, read_instance_type

if TYPE_CHECKING:
    from ..trace.events import Event


class NeuronBackend(Backend):
    name = "neuron"
    mode = "device"

    def __init__(self, profile_dir: Path | None = None) -> None:
        self._profile_dir = profile_dir

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("torch_neuronx") is None:
            return (
                "torch-neuronx is not installed (it comes from AWS's Neuron package index, "
                "not PyPI, whose 'torch-neuronx' is a placeholder)"
            )
        import torch

        if torch._C._get_privateuse1_backend_name() != "neuron" or not hasattr(torch, "neuron"):
            if importlib.util.find_spec("torch_xla") is not None:
                return (
                    "torch-neuronx is the PyTorch/XLA stack (torch_xla, no native 'neuron' "
                    "device); this backend profiles the native TorchNeuron backend only "
                    "(Neuron SDK 2.33+, torch-neuronx 2.13.3 or later)"
                )
            return (
                "torch-neuronx is installed but the native TorchNeuron backend is not "
                "registered (PrivateUse1 is not 'neuron'); is TORCH_DEVICE_BACKEND_AUTOLOAD=0 set?"
            )
        if not _torch_neuron().is_available():
            return "torch.neuron reports no Neuron device on this machine"
        return None

    def device_kind(self) -> str:
        return neuron_device_kind(read_instance_type(), int(_torch_neuron().device_count()))

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]

    def synchronize(self) -> None:
        _torch_neuron().synchronize()

    def prepare(self) -> None:
        if self._profile_dir is None:
            # Neuron's profiler writes device captures (ntff, neff) here; per session, so
            # parallel workers never share one.
            self._profile_dir = Path(tempfile.mkdtemp(prefix="neuronperf-neuron-"))

    @property
    def profile_dir(self) -> Path | None:
        return self._profile_dir

    def profiler_kwargs(self) -> dict[str, Any]:
        # UNVERIFIED (no Neuron device here): the API as AWS's TorchNeuron tutorial uses it.
        from torch_neuronx.profiling import NeuronConfig, ProfileMode

        self.prepare()
        config = NeuronConfig(
            modes=[ProfileMode.DEVICE, ProfileMode.RUNTIME],
            profile_output_dir=str(self._profile_dir),
            correlate_device_time=True,
        )
        return {"experimental_config": config}

    def collect(self, prof: Any) -> list[Event]:
        return neuron_events(prof.events())

    def versions(self) -> dict[str, str]:
        out = super().versions()
        try:
            out["torch_neuronx"] = importlib.metadata.version("torch-neuronx")
        except importlib.metadata.PackageNotFoundError:
            out["torch_neuronx"] = "?"
        return out


def _torch_neuron() -> Any:
    """``torch.neuron``, which torch-neuronx registers at import (unknown to torch's stubs)."""
    import torch

    module: Any = torch
    return module.neuron
