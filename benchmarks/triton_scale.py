"""A Triton kernel for verify_cuda.py: the plainest direct launch, under no aten op.

Imported only where triton is installed. The kernel's parameters carry no annotations
(Triton reads them as type hints) and its block size is a literal, not a parameter.
"""
# mypy: allow-untyped-defs

from __future__ import annotations

import importlib
from typing import Any

triton: Any = importlib.import_module("triton")
tl: Any = importlib.import_module("triton.language")
BLOCK = 1024  # the literal in scale_kernel


@triton.jit
def scale_kernel(x_ptr, out_ptr, n):
    offsets = tl.program_id(0) * 1024 + tl.arange(0, 1024)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


def launch(x: Any, out: Any) -> None:
    """One launch of ``scale_kernel`` over the flat tensors ``x`` -> ``out``."""
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n)
