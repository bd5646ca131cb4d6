"""Backend selection: ``auto`` picks neuron, then cuda, then cpu."""

from __future__ import annotations

from ..settings import BACKEND_NAMES as NAMES
from .base import Backend, BackendUnavailable
from .cpu import CpuBackend
from .cuda import CudaBackend
from .neuron import NeuronBackend

_CLASSES: dict[str, type[Backend]] = {
    "cpu": CpuBackend,
    "cuda": CudaBackend,
    "neuron": NeuronBackend,
}


def select(name: str) -> tuple[Backend, str]:
    """The backend for ``name`` and a one-line note on how it was chosen.

    Raises BackendUnavailable when an explicitly named backend cannot run here.
    """
    if name == "auto":
        skipped = []
        for candidate in ("neuron", "cuda"):
            backend = _CLASSES[candidate]()
            reason = backend.unavailable_reason()
            if reason is None:
                return backend, f"auto -> {candidate}"
            skipped.append(f"{candidate}: {reason.split(' (')[0]}")
        return CpuBackend(), "auto -> cpu; " + "; ".join(skipped)
    if name not in _CLASSES:
        raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(NAMES)}")
    backend = _CLASSES[name]()
    reason = backend.unavailable_reason()
    if reason is not None:
        raise BackendUnavailable(f"backend {name!r} is unavailable: {reason}")
    return backend, name


__all__ = [
    "NAMES",
    "Backend",
    "BackendUnavailable",
    "CpuBackend",
    "CudaBackend",
    "NeuronBackend",
    "select",
]
