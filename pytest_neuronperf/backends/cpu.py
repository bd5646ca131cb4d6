"""The CPU backend: real torch.profiler on the host; works on every CI."""

from __future__ import annotations

import platform
from typing import Any

from ..trace.events import Event, events_from_kineto
from .base import Backend


class CpuBackend(Backend):
    name = "cpu"
    mode = "host"

    def unavailable_reason(self) -> str | None:
        return None

    def device_kind(self) -> str:
        return f"cpu:{platform.machine() or 'unknown'}"

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU]

    def collect(self, prof: Any) -> list[Event]:
        # Kineto's results read directly: the same events as prof.events() gives, at a
        # fourth of the time (trace/events.py); torch's parse where they hold more.
        events = events_from_kineto(getattr(prof.profiler, "kineto_results", None))
        return events if events is not None else super().collect(prof)

    def prepare(self) -> None:
        # Inductor emits a profiler event per generated C++ kernel only with this set, and
        # only for graphs compiled afterwards; without it a compiled graph is one opaque
        # kernel (see analysis.host_kernels).
        import torch._inductor.config as inductor_config

        inductor_config.cpp.enable_kernel_profile = True
