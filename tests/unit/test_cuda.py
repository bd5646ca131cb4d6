"""The CUDA backend. Its analysis runs on real CUDA/ROCm traces in test_offline.py; the
live tests here need a GPU and are skipped without one."""

from __future__ import annotations

import pytest
import torch

from pytest_neuronperf.backends import BackendUnavailable, CudaBackend, NeuronBackend, select
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.trace.offline import report_trace

HAS_CUDA = torch.cuda.is_available()
needs_gpu = pytest.mark.skipif(
    not HAS_CUDA, reason="no CUDA/ROCm device visible to torch (torch.cuda.is_available())"
)
HIDDEN = 1024


def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, 1e-6)


@pytest.mark.skipif(HAS_CUDA, reason="a CUDA device is present")
def test_without_a_gpu_the_backend_says_why() -> None:
    reason = CudaBackend().unavailable_reason()
    assert reason is not None and "no CUDA device is visible to torch" in reason
    with pytest.raises(BackendUnavailable, match="backend 'cuda' is unavailable"):
        select("cuda")


def test_backend_profiles_host_and_device_and_is_device_mode() -> None:
    from torch.profiler import ProfilerActivity

    backend = CudaBackend()
    assert backend.mode == "device"
    assert backend.activities() == [ProfilerActivity.CPU, ProfilerActivity.CUDA]


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(CudaBackend(), trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def xw() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(64, HIDDEN, device="cuda"), torch.randn(HIDDEN, device="cuda")


@needs_gpu
def test_naive_rmsnorm_on_the_gpu(runner: Runner, xw: tuple[torch.Tensor, torch.Tensor]) -> None:
    _, m = runner.measure_callable(naive, xw, {}, test_id="t", name="naive", warmup=2, rounds=5)
    assert m.device_kind.startswith(("cuda:", "rocm:"))
    assert m.device_kind.split(":", 1)[1] == torch.cuda.get_device_name()
    assert m.ops == 6
    assert m.kernels >= 5  # one kernel an elementwise op; mean is one reduction
    assert m.device_us.median > 0 and m.host_us.median > 0
    assert sum(r.device_us for r in m.per_op) == pytest.approx(m.device_us.median, rel=0.5)
    # The live measurement carries each kernel's launch gap; the host reference is not timed.
    assert m.launch_gap_us is not None and m.launch_gap_us.n >= m.kernels
    assert m.reference_us is None and m.device_reference_us is None
    # What the Runner saved reads back the same offline, with the launch gaps.
    rep = report_trace(runner.trace_paths[("t", "naive")], region="naive")
    om = rep.regions[0].measurement
    assert (om.ops, om.kernels, om.op_counts) == (m.ops, m.kernels, m.op_counts)
    assert rep.regions[0].launch_gap_us.n >= m.kernels


@needs_gpu
def test_rms_norm_is_one_op_on_the_gpu(
    runner: Runner, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    _, m = runner.measure_callable(fused, xw, {}, test_id="t", name="fused", warmup=2, rounds=5)
    assert m.ops == 1 and m.op_counts == {"aten::rms_norm": 1}
    assert 1 <= m.kernels <= 3
    assert m.per_op[0].device_us > 0


# --- the device queries patched: what the backend makes of each answer, on any machine


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """torch.cuda answering as a machine with one NVIDIA H200 would; the calls it received."""
    calls: list[str] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: f"NVIDIA H200#{index}")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: calls.append("synchronize"))
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.version, "hip", None)
    return calls


def test_a_visible_device_makes_the_backend_available(
    gpu: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CudaBackend().unavailable_reason() is None
    backend, note = select("cuda")
    assert (backend.name, note) == ("cuda", "cuda")
    monkeypatch.setattr(NeuronBackend, "unavailable_reason", lambda self: "no Neuron device")
    backend, note = select("auto")
    assert (backend.name, note) == ("cuda", "auto -> cuda")


def test_an_nvidia_device_is_a_cuda_kind_named_for_the_device(gpu: list[str]) -> None:
    backend = CudaBackend()
    assert backend.device_kind() == "cuda:NVIDIA H200#0"
    assert backend.versions() == {
        "torch": str(torch.__version__),
        "backend": "cuda",
        "cuda": "12.8",
    }
    backend.synchronize()
    assert gpu == ["synchronize"]


def test_a_rocm_build_is_a_rocm_kind_so_its_baselines_never_mix_with_nvidias(
    gpu: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    monkeypatch.setattr(torch.version, "cuda", None)
    backend = CudaBackend()
    assert backend.device_kind() == "rocm:NVIDIA H200#0"
    assert backend.versions()["hip"] == "6.2.41133"
    assert backend.versions()["cuda"] == "None"


def test_no_visible_device_names_the_torch_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    reason = CudaBackend().unavailable_reason()
    assert reason == (
        f"no CUDA device is visible to torch (torch {torch.__version__}, built with CUDA 12.8)"
    )
