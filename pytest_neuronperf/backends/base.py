"""The one small interface every backend implements.

A backend knows how to tell whether its device is there, what to call it in baselines,
which profiler activities to record, how to wait for queued work, and whether its cost
lives on the host (CPU) or on a device (analysis mode). Everything else is shared.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NeuronPerfError

if TYPE_CHECKING:
    from ..settings import Settings
    from ..trace.analysis import Mode, RoundResult
    from ..trace.events import Event
    from ..trace.memory import MemoryRecord
    from .memory import MemoryProbe

# time.time_ns() at a profiled round's start and right after its synchronize.
Window = tuple[int, int]


class BackendUnavailable(NeuronPerfError, RuntimeError):
    """The requested backend cannot run here; the message says why and what to do."""


class BackendMisconfigured(BackendUnavailable):
    """The device is there but this setup cannot measure it (a conflicting environment
    variable, a missing tool); the message names the conflict and the fix."""


@dataclass(frozen=True)
class RegionRounds:
    """One measured region's rounds, analysed, and the backend's notes on its device time
    (where it came from, how a second source agreed)."""

    rounds: list[RoundResult]
    notes: tuple[str, ...] = field(default=())


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

    def configure(self, settings: Settings) -> None:  # noqa: B027 - optional hook
        """Called once the backend is chosen; raises BackendMisconfigured."""

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

    # The device whose profiler memory records a region's memory counts (trace/memory.py).
    memory_device = "cpu"

    def memory_probe(self) -> MemoryProbe | str | None:
        """The device allocator's counters, read around each round (backends/memory.py);
        None where the profiler's memory records are the figures (CPU); a sentence saying
        why a device has no counters (its profiler records are then the figures)."""
        return None

    def memory_records(self, prof: Any) -> list[MemoryRecord] | None:
        """The profile's memory records; None when it was run without profile_memory."""
        if not getattr(prof, "profile_memory", False):
            return None
        from ..trace.memory import records_from_kineto

        return records_from_kineto(getattr(prof.profiler, "kineto_results", None))

    def analyze(
        self, prof: Any, regions: Sequence[Sequence[str]], windows: Mapping[str, Window]
    ) -> list[RegionRounds]:
        """Each region's rounds (one marker per round) from a finished profiler session.
        ``windows`` holds the host window of every round the runner timed."""
        from ..trace.analysis import analyze_markers

        flat = [marker for markers in regions for marker in markers]
        memory = self.memory_records(prof)
        results = iter(
            analyze_markers(self.collect(prof), flat, self.mode, memory, self.memory_device)
        )
        return [RegionRounds([next(results) for _ in markers]) for markers in regions]
