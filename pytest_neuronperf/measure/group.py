"""The default process group as the measuring code sees it: which rank, how many, and
what the profiler records under one. Its own module so that rounds.py and distributed.py
both read it without importing each other."""

from __future__ import annotations

from typing import Any


def group() -> tuple[int, int] | None:
    """(rank, world size) of the default process group; None when there is none."""
    try:
        import torch.distributed as dist
    except ImportError:  # a torch built without distributed support
        return None
    if not dist.is_available() or not dist.is_initialized():
        return None
    return dist.get_rank(), dist.get_world_size()


def profiler_kwargs() -> dict[str, Any]:
    """What the profiler records beside a backend's own: shapes under a process group,
    without which gloo's calls carry no size."""
    return {"record_shapes": True} if group() is not None else {}
