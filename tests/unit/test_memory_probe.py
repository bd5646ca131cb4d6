"""Device memory: the allocator's counters around each round (backends/memory.py) and how
they sit over the profiler's records (measure/memory.py). No GPU here: the device queries
are patched with a fake allocator; the profiled rounds around them are real."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
import torch

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.backends.cuda import CudaBackend
from pytest_neuronperf.backends.memory import (
    AllocatorFigures,
    MemoryProbe,
    accelerator_probe,
)
from pytest_neuronperf.measure.memory import settle_memory
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.trace.analysis import RoundResult
from pytest_neuronperf.trace.memory import RoundMemory


class FakeAllocator:
    """torch.cuda's counters over a plan: each round allocates ``block`` and frees it,
    leaving ``leak`` behind; ``start`` bytes were allocated before."""

    def __init__(self, start: int, block: int, leak: int = 0, total: bool = True) -> None:
        self.current = start
        self.peak = start
        self.total = 0
        self.block, self.leak, self.keeps_total = block, leak, total

    def reset_peak_memory_stats(self) -> None:
        self.peak = self.current

    def memory_allocated(self) -> int:
        return self.current

    def max_memory_allocated(self) -> int:
        return self.peak

    def memory_stats(self) -> OrderedDict[str, Any]:
        stats: OrderedDict[str, Any] = OrderedDict()
        if self.keeps_total:
            stats["allocated_bytes.all.allocated"] = self.total
        return stats

    def run_round(self) -> None:
        self.current += self.block
        self.total += self.block
        self.peak = max(self.peak, self.current)
        self.current -= self.block - self.leak


def test_the_cuda_backend_reads_torch_cuda_counters_around_a_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeAllocator(start=1 << 20, block=8192, leak=512)
    for name in ("reset_peak_memory_stats", "memory_allocated", "max_memory_allocated"):
        monkeypatch.setattr(torch.cuda, name, getattr(fake, name))
    monkeypatch.setattr(torch.cuda, "memory_stats", fake.memory_stats)
    probe = CudaBackend().memory_probe()
    assert CudaBackend.memory_device == "cuda"
    probe.start()
    fake.run_round()
    # Above the level the round began at, whatever was allocated before it.
    assert probe.stop() == AllocatorFigures(8192, 8192, 512)


def test_an_allocator_without_a_running_total_says_so() -> None:
    fake = FakeAllocator(start=0, block=4096, total=False)
    probe = MemoryProbe(fake, "cuda")
    probe.start()
    fake.run_round()
    assert probe.stop() == AllocatorFigures(4096, None, 0)


class _Accelerator:
    def __init__(self, available: bool, fail: Exception | None = None) -> None:
        self.available, self.fail = available, fail

    def is_available(self) -> bool:
        return self.available

    def current_accelerator(self) -> Any:
        return torch.device("privateuseone") if self.available else None

    def memory_allocated(self) -> int:
        if self.fail is not None:
            raise self.fail
        return 0

    def max_memory_allocated(self) -> int:
        return 0


def test_torch_accelerator_is_used_where_it_answers_and_says_why_not_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch, "accelerator", _Accelerator(available=False))
    assert accelerator_probe("privateuse1") == "torch.accelerator sees no accelerator"
    failing = _Accelerator(True, RuntimeError("memory stats not implemented for neuron"))
    monkeypatch.setattr(torch, "accelerator", failing)
    why = accelerator_probe("privateuse1")
    assert isinstance(why, str) and "not implemented here" in why and "neuron" in why
    monkeypatch.setattr(torch, "accelerator", _Accelerator(available=True))
    assert isinstance(accelerator_probe("privateuse1"), MemoryProbe)


def _round(memory: RoundMemory | None) -> RoundResult:
    result = RoundResult()
    result.memory = memory
    return result


def test_the_allocators_figures_go_over_the_records_and_a_disagreement_is_noted() -> None:
    recorded = RoundMemory(
        peak_bytes=4096, allocated_bytes=4096, op_bytes={"aten::mul": 4096}, records=2
    )
    rounds = [_round(recorded)]
    note, notes = settle_memory(
        rounds,
        ["m0"],
        {"m0": AllocatorFigures(4608, 4608, 0)},
        mode="device",
        device="cuda",
    )
    assert note == ""
    mem = rounds[0].memory
    assert mem is not None and mem.source == "allocator"
    assert (mem.peak_bytes, mem.allocated_bytes, mem.op_bytes) == (4608, 4608, {"aten::mul": 4096})
    assert notes == (
        "memory: the allocator's peak 4.5 KiB, the profiler's memory records 4.0 KiB (the "
        "allocator's is gated)",
    )


def test_a_device_with_neither_counters_nor_records_has_no_figure_never_zero() -> None:
    rounds = [_round(RoundMemory(device="privateuse1", records=0))]
    note, _ = settle_memory(
        rounds,
        ["m0"],
        {},
        mode="device",
        device="privateuse1",
        why_no_counters="torch.accelerator sees no accelerator",
    )
    assert rounds[0].memory is None
    assert note == (
        "no memory figure: torch.accelerator sees no accelerator, and the profiler recorded "
        "no privateuse1 memory event in the region"
    )
    # Its records, where the profiler has them, are the figures.
    recorded = RoundMemory(peak_bytes=64, allocated_bytes=64, device="privateuse1", records=1)
    rounds = [_round(recorded)]
    assert settle_memory(rounds, ["m0"], {}, mode="device", device="privateuse1") == ("", ())
    assert rounds[0].memory is recorded


class _CountedCpu(CpuBackend):
    """The CPU backend with a device allocator's counters: the runner's device path, on the
    real profiler."""

    def __init__(self, fake: FakeAllocator) -> None:
        self.fake = fake

    def memory_probe(self) -> MemoryProbe:
        return MemoryProbe(self.fake, "cpu")

    def synchronize(self) -> None:
        self.fake.run_round()  # the round's device work, as the allocator saw it


def test_the_runner_reads_the_counters_around_each_profiled_round() -> None:
    x = torch.ones(1 << 10)
    block = 3 * x.nbytes
    runner = Runner(
        _CountedCpu(FakeAllocator(start=0, block=block, leak=x.nbytes)),
        count_work=False,
        reference=False,
        window=0.0,
        threads=1,
    )
    _, m = runner.measure_callable(
        lambda: x * 2, (), {}, test_id="t", name="r", warmup=1, rounds=2, memory=True
    )
    assert m.memory is not None and m.memory.source == "allocator"
    assert (m.memory.peak_bytes, m.memory.retained_bytes) == (block, x.nbytes)
    # The per-op bytes are the profiler's records of the host allocations.
    assert m.memory.op_bytes["aten::mul"] >= x.nbytes
    assert any("the allocator's peak" in n for n in m.device_notes)


def test_the_row_of_a_region_without_a_figure_says_why() -> None:
    from pytest_neuronperf.model import Measurement
    from pytest_neuronperf.reports.memory import memory_cell, memory_line
    from pytest_neuronperf.stats import Stats

    why = "no memory figure: torch.accelerator sees no accelerator, and the profiler ..."
    m = Measurement(
        test_id="t.py::t",
        region="r",
        backend="neuron",
        device_kind="neuron:trn2:64nc",
        ops=1,
        kernels=1,
        device_us=Stats.of([1.0]),
        host_us=Stats.of([1.0]),
        rounds=1,
        memory_note=why,
    )
    assert memory_cell(m) == "no figure"
    assert memory_line(m) == f"memory: {why}"
