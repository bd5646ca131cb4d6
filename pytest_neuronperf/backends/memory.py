"""A device allocator's counters around one profiled round: peak, allocated, retained.

CUDA (and ROCm) through ``torch.cuda``; any other accelerator through
``torch.accelerator`` (torch 2.9+), which answers for a PrivateUse1 backend such as
TorchNeuron when that backend implements the allocator's device stats. The figures are
the allocator's: sizes as it rounds them (CUDA: to 512 B), which the profiler's memory
records of the same allocations also show (docs/memory.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The running total of bytes handed out, in the allocator's DeviceStats (CUDA's and any
# backend's that fills the same struct).
_ALLOCATED_KEY = "allocated_bytes.all.allocated"


@dataclass(frozen=True)
class AllocatorFigures:
    """One round, above the level allocated when it began; ``allocated_bytes`` None when
    the allocator keeps no running total."""

    peak_bytes: int
    allocated_bytes: int | None
    retained_bytes: int


class MemoryProbe:
    """``api`` is ``torch.cuda`` or ``torch.accelerator``: both have these functions."""

    def __init__(self, api: Any, device: str) -> None:
        self._api = api
        self.device = device
        self._start = 0
        self._allocated: int | None = None

    def start(self) -> None:
        self._api.reset_peak_memory_stats()
        self._start = int(self._api.memory_allocated())
        self._allocated = self._total()

    def stop(self) -> AllocatorFigures:
        peak = int(self._api.max_memory_allocated()) - self._start
        retained = int(self._api.memory_allocated()) - self._start
        total = self._total()
        allocated = (
            total - self._allocated if total is not None and self._allocated is not None else None
        )
        return AllocatorFigures(max(peak, 0), allocated, retained)

    def _total(self) -> int | None:
        value = self._api.memory_stats().get(_ALLOCATED_KEY)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def accelerator_probe(device: str) -> MemoryProbe | str:
    """A probe through ``torch.accelerator`` for the current accelerator, or why there is
    none (no such API, another accelerator, counters not implemented)."""
    import torch

    api = getattr(torch, "accelerator", None)
    if api is None or not hasattr(api, "max_memory_allocated"):
        return f"torch {torch.__version__} has no torch.accelerator memory counters"
    try:
        current = api.current_accelerator() if api.is_available() else None
        if current is None:
            return "torch.accelerator sees no accelerator"
        api.memory_allocated()
    except (RuntimeError, NotImplementedError, AttributeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"torch.accelerator's memory counters are not implemented here ({first})"
    return MemoryProbe(api, device)
