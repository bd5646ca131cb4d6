"""The TorchNeuron tutorial's RMSNorm comparison as tests that assert the fusion.

Naive RMSNorm is six eager ops; ``torch.rms_norm`` is one fused op; ``torch.compile`` of the
naive version is one compiled region running one generated kernel. The budgets below make
those claims fail a merge when they stop being true. In roofline terms (see
pytest_neuronperf/roofline.py) all three do the same FLOPs, but the naive version's six
dispatches each read and write whole tensors: it moves about 3.4 times the bytes of the
fused op or the compiled graph, which read x and w and write y.

Memory, measured on CPU from the profiler's memory records (peak bytes allocated above
the call's start, the result included): the naive version peaks at two tensors of x's
size (``x * r`` is alive while ``* w`` allocates the result); ``torch.rms_norm`` on CPU runs
``_fused_rms_norm``, which materialises its own intermediate, so it peaks at two as well
plus one float per row: on CPU it saves dispatches, not memory; the compiled graph
allocates only its result and one float per row. Run:

    pytest examples/test_rmsnorm.py --neuron-profile
"""

from __future__ import annotations

import pytest
import torch

from pytest_neuronperf import NeuronProfile

HIDDEN = 1024
EPS = 1e-6


def rmsnorm_naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def rmsnorm_fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, EPS)


Inputs = tuple[torch.Tensor, torch.Tensor]

# One compiled function for the whole module: compiling is the slow part.
rmsnorm_compiled = torch.compile(rmsnorm_naive)


@pytest.fixture(scope="module")
def inputs() -> Inputs:
    torch.manual_seed(0)
    return torch.randn(16, HIDDEN), torch.randn(HIDDEN)


# 4 FLOPs per element (square, sum, scale, weight) and 2 per row (eps, rsqrt).
FLOPS = 4 * 16 * HIDDEN + 2 * 16
# Bytes of one float32 tensor of x's shape, and of one float32 per row.
X_BYTES = 16 * HIDDEN * 4
ROW_BYTES = 16 * 4


@pytest.mark.neuron_budget(max_ops=6, max_flops=FLOPS, max_peak_memory=2 * X_BYTES)
def test_naive(neuron_profile: NeuronProfile, inputs: Inputs) -> None:
    x, w = inputs
    out = neuron_profile(rmsnorm_naive, x, w)
    torch.testing.assert_close(out, rmsnorm_fused(x, w))


@pytest.mark.neuron_budget(max_ops=1, max_flops=FLOPS, max_peak_memory=2 * X_BYTES + ROW_BYTES)
def test_rms_norm_is_one_op(neuron_profile: NeuronProfile, inputs: Inputs) -> None:
    x, w = inputs
    out = neuron_profile(rmsnorm_fused, x, w)
    torch.testing.assert_close(out, rmsnorm_naive(x, w))


@pytest.mark.neuron_budget(max_ops=1, max_kernels=1, max_peak_memory=X_BYTES + ROW_BYTES)
@pytest.mark.slow  # torch.compile takes seconds: -m "not slow" leaves it out
def test_compiled_is_one_fused_kernel(neuron_profile: NeuronProfile, inputs: Inputs) -> None:
    x, w = inputs
    out = neuron_profile(rmsnorm_compiled, x, w, name="rmsnorm_compiled")
    torch.testing.assert_close(out, rmsnorm_naive(x, w))


@pytest.mark.neuron_budget(max_flops=FLOPS)
def test_fusion_moves_fewer_bytes_for_the_same_flops(
    neuron_profile: NeuronProfile, inputs: Inputs
) -> None:
    x, w = inputs
    neuron_profile(rmsnorm_naive, x, w)
    neuron_profile(rmsnorm_fused, x, w)
    naive, fused = neuron_profile["rmsnorm_naive"].work, neuron_profile["rmsnorm_fused"].work
    assert naive is not None and fused is not None
    assert naive.flops == fused.flops == FLOPS
    assert fused.bytes_moved == 2 * x.nbytes + w.nbytes
    # Six dispatches (x*x, mean, +eps, rsqrt, *r, *w), each reading and writing whole
    # tensors: seven of x's size, six of one float per row, and w; 3.4x the fused bytes.
    rows = x.shape[0] * x.element_size()
    assert naive.bytes_moved == 7 * x.nbytes + w.nbytes + 6 * rows


@pytest.mark.neuron_budget(max_retained_memory=0)
@pytest.mark.slow  # compiles (once for the module, shared with the test above)
def test_memory_side_by_side(neuron_profile: NeuronProfile, inputs: Inputs) -> None:
    x, w = inputs
    neuron_profile(rmsnorm_naive, x, w)
    neuron_profile(rmsnorm_fused, x, w)
    neuron_profile(rmsnorm_compiled, x, w, name="rmsnorm_compiled")
    peak = {
        name: memory.peak_bytes
        for name in ("rmsnorm_naive", "rmsnorm_fused", "rmsnorm_compiled")
        if (memory := neuron_profile[name].memory) is not None
    }
    rows = x.shape[0] * x.element_size()
    assert peak == {
        "rmsnorm_naive": 2 * x.nbytes,
        "rmsnorm_fused": 2 * x.nbytes + rows,
        "rmsnorm_compiled": x.nbytes + rows,
    }
    # The naive version materialises x * x, x * r and the result: three of x's size.
    naive = neuron_profile["rmsnorm_naive"].memory
    assert naive is not None and naive.op_bytes["aten::mul"] == 3 * x.nbytes
