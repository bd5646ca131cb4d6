"""One command for a person with an NVIDIA (or ROCm) GPU: verify the CUDA backend.

    python benchmarks/verify_cuda.py [--out DIR] [--rounds 20]     # DIR defaults to $OUT

Measures naive / fused / compiled RMSNorm under the CUDA backend, and the regions that
launch outside any aten op (issue 14): the naive RMSNorm under
``torch.compile(mode="reduce-overhead")`` (a CUDA-graph replay inside the compiled region),
a ``torch.cuda.CUDAGraph`` of it replayed by hand (a bare ``cudaGraphLaunch``), and, where
triton is installed, a Triton kernel called directly (a driver launch under no op). Each
prints PASS/FAIL on device time > 0 and on kernels = what the call runs, counted plainly
from torch's profiler. Saves the traces and ``results.json`` in DIR and prints the table
and a PASS/FAIL line per check (see verify_device.py). Without a GPU it says so ("no
CUDA device") and exits 2.
"""

from __future__ import annotations

import importlib.util
import sys

import torch
from verify_device import Case, main, raw_kernel_count, rmsnorm_naive

from pytest_neuronperf.backends import Backend


def graph_cases(backend: Backend, x: torch.Tensor, w: torch.Tensor) -> list[Case]:
    """Regions whose device work is launched outside any aten op."""
    reduce_overhead = torch.compile(rmsnorm_naive, mode="reduce-overhead")
    # A graph captured from the eager function holds exactly the kernels one eager call
    # runs; capture on a side stream after a warm-up call, as torch's docs do.
    static_x, static_w = x.clone(), w.clone()
    side = torch.cuda.Stream()  # type: ignore[no-untyped-call, unused-ignore]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        rmsnorm_naive(static_x, static_w)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        rmsnorm_naive(static_x, static_w)
    torch.cuda.synchronize()
    cases = [
        Case(
            "rmsnorm_reduce_overhead",
            reduce_overhead,
            (x, w),
            ops=None,
            kernels=lambda: raw_kernel_count(backend, reduce_overhead, x, w),
            count_work=False,
        ),
        Case(
            "cuda_graph_replay",
            graph.replay,
            (),
            ops=None,  # a replay dispatches no aten op
            kernels=lambda: raw_kernel_count(backend, rmsnorm_naive, static_x, static_w),
            count_work=False,
        ),
    ]
    if importlib.util.find_spec("triton") is not None:
        cases.append(_triton_case(backend, x))
    return cases


def _triton_case(backend: Backend, x: torch.Tensor) -> Case:
    from triton_scale import launch as scale

    flat = x.reshape(-1).contiguous()
    out = torch.empty_like(flat)

    def launch() -> None:
        scale(flat, out)

    launch()  # JIT-compile before measuring
    torch.cuda.synchronize()
    return Case(
        "triton_direct",
        launch,
        (),
        ops=None,
        kernels=lambda: raw_kernel_count(backend, launch),
        count_work=False,
    )


if __name__ == "__main__":
    sys.exit(main(backend="cuda", extra=graph_cases))
