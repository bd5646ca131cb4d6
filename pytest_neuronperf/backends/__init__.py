"""Backend selection: ``auto`` picks neuron, then cuda, then cpu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..settings import BACKEND_NAMES as NAMES
from .base import Backend, BackendMisconfigured, BackendUnavailable, RegionRounds, Window
from .cpu import CpuBackend
from .cuda import CudaBackend
from .neuron import NeuronBackend

if TYPE_CHECKING:
    from ..settings import Settings

_CLASSES: dict[str, type[Backend]] = {
    "cpu": CpuBackend,
    "cuda": CudaBackend,
    "neuron": NeuronBackend,
}


def select(name: str, settings: Settings | None = None) -> tuple[Backend, str]:
    """The backend for ``name`` and a one-line note on how it was chosen, configured with
    ``settings`` when given.

    Raises BackendUnavailable when an explicitly named backend cannot run here, and
    BackendMisconfigured when the chosen one is there but cannot measure as set up.
    """
    backend, note = _choose(name)
    if settings is not None:
        backend.configure(settings)
    return backend, note


def _choose(name: str) -> tuple[Backend, str]:
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
    "BackendMisconfigured",
    "BackendUnavailable",
    "CpuBackend",
    "CudaBackend",
    "NeuronBackend",
    "RegionRounds",
    "Window",
    "select",
]
