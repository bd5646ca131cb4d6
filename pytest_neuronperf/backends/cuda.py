"""The CUDA backend: CPU+CUDA activities, device time from kernel events."""

from __future__ import annotations

from typing import Any

from .base import Backend


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

        return f"cuda:{torch.cuda.get_device_name(torch.cuda.current_device())}"

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU, ProfilerActivity.CUDA]

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def versions(self) -> dict[str, str]:
        import torch

        out = super().versions()
        out["cuda"] = str(torch.version.cuda)
        return out
