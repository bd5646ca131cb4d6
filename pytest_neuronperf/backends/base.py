"""The one small interface every backend implements.

A backend knows how to tell whether its device is there, what to call it in baselines,
which profiler activities to record, how to wait for queued work, and whether its cost
lives on the host (CPU) or on a device (analysis mode). Everything else is shared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from ..errors import NeuronPerfError

if TYPE_CHECKING:
    from ..trace.analysis import Mode
    from ..trace.events import Event


class BackendUnavailable(NeuronPerfError, RuntimeError):
    """The requested backend cannot run here; the message says why and what to do."""


class Backend(ABC):
    name: str = ""
    mode: Mode = "host"

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """None when usable, else one sentence for the user."""

    @abstractmethod
    def device_kind(self) -> str:
        """Stable key for baselines, e.g. ``cpu:x86_64``, ``cuda:NVIDIA H200``."""

    @abstractmethod
    def activities(self) -> list[Any]:
        """``torch.profiler.ProfilerActivity`` members to record."""

    def prepare(self) -> None:  # noqa: B027 - optional hook
        """Called once before the first measurement of a session."""

    def synchronize(self) -> None:  # noqa: B027 - host execution is synchronous
        """Block until queued device work is done."""

    def versions(self) -> dict[str, str]:
        import torch

        return {"torch": str(torch.__version__), "backend": self.name}

    def collect(self, prof: Any) -> list[Event]:
        from ..trace.events import events_from_function_events

        return events_from_function_events(prof.events())

    def profiler_kwargs(self) -> dict[str, Any]:
        return {}
