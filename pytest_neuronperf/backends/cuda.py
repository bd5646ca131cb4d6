"""The CUDA backend (ROCm too, through torch.cuda): CPU+CUDA activities. A region's kernels
and device time are every device event whose launch call starts inside it, however it was
launched: under an aten op, a CUDA-graph replay, a Triton or extension launch, on any
thread (trace/device.py; the same code reads saved traces). Host time comes from the
Runner's unprofiled rounds, each ended by ``torch.cuda.synchronize()``: wall time of the
work including the GPU, never the profiler's CPU timestamps."""

from __future__ import annotations

from typing import Any

from .base import Backend
from .memory import MemoryProbe


class CudaBackend(Backend):
    name = "cuda"
    mode = "device"

    def unavailable_reason(self) -> str | None:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is a dependency
            return "torch is not installed"
        if not torch.cuda.is_available():
            return (
                "no CUDA device is visible to torch "
                f"(torch {torch.__version__}, built with CUDA {torch.version.cuda})"
            )
        return None

    def device_kind(self) -> str:
        import torch

        name = torch.cuda.get_device_name(torch.cuda.current_device())
        # A ROCm build answers torch.cuda too; its baselines must not mix with NVIDIA's.
        return f"{'rocm' if torch.version.hip else 'cuda'}:{name}"

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU, ProfilerActivity.CUDA]

    memory_device = "cuda"

    def memory_probe(self) -> MemoryProbe:
        import torch

        return MemoryProbe(torch.cuda, "cuda")

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def versions(self) -> dict[str, str]:
        import torch

        out = super().versions()
        out["cuda"] = str(torch.version.cuda)
        if torch.version.hip:
            out["hip"] = str(torch.version.hip)
        return out
