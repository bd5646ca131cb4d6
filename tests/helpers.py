"""What several test files share: one Measurement factory (and the recording processes
pooling tests draw from it, and the host-timed ones the window and stop-rule tests judge),
a record of the host windows a run sampled, and the suite and arguments the report tests
run through pytester."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.measure import host
from pytest_neuronperf.measure.reference import Reference
from pytest_neuronperf.measure.window import HostSamples, WindowPlan, sample_window
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.stats import Stats

TIMES = [100.0 + i for i in range(10)]
ENV = {"torch": "2.13.0", "device_kind": "cpu:x86_64", "backend": "cpu"}


def measurement(
    region: str = "r",
    *,
    ops: Mapping[str, int] | None = None,
    kernels: Mapping[str, int] | None = None,
    device: Sequence[float] = TIMES,
    host: Sequence[float] | None = None,
    **changes: Any,
) -> Measurement:
    """A CPU measurement of ``t.py::t``: ``ops`` and ``kernels`` are the per-name counts
    (kernels default to the ops), their totals the counts; host time defaults to device's;
    ``changes`` sets any other field."""
    op_counts = dict(ops if ops is not None else {"aten::mul": 1, "aten::sum": 1})
    kernel_counts = dict(kernels if kernels is not None else op_counts)
    values: dict[str, Any] = dict(
        test_id="t.py::t",
        region=region,
        backend="cpu",
        device_kind="cpu:x86_64",
        ops=sum(op_counts.values()),
        kernels=sum(kernel_counts.values()),
        op_counts=op_counts,
        kernel_counts=kernel_counts,
        device_us=Stats.of(list(device)),
        host_us=Stats.of(list(device if host is None else host)),
        per_op=(),
        rounds=len(device),
        environment=dict(ENV),
    )
    values.update(changes)
    return Measurement(**values)


# Recording processes whose baselines are pooled (baselines/entry, baselines/update).
POOL_ROUNDS = 10


def timed(device: list[float], host: list[float]) -> Measurement:
    """A one-op CPU measurement with these device and host rounds."""
    return measurement(ops={"aten::mul": 1}, device=device, host=host)


def two_ticks(memory: float, dispatch: float) -> Measurement:
    """A host-timed measurement whose relative rounds are ``memory`` and ``dispatch`` times
    a steady base, against a memory tick of 10 µs and a dispatch tick of 2 µs; its ops'
    dispatch is most of its time, so both ticks judge it (gate/ticks.py)."""
    rel = [10.0 + 0.01 * i for i in range(10)]
    return replace(
        timed(TIMES, TIMES),
        ops=1_000,
        reference_us=Stats.of([10.0] * 10),
        host_relative=Stats.of([v * memory for v in rel]),
        dispatch_reference_us=Stats.of([2.0] * 10),
        host_relative_dispatch=Stats.of([v * 5 * dispatch for v in rel]),
    )


def _noisy(level: float, seed: int, n: int = POOL_ROUNDS, sd: float = 0.01) -> Stats:
    rng = random.Random(seed)
    return Stats.of([round(level * (1 + rng.gauss(0, sd)), 3) for _ in range(n)])


def process_measurement(level: float, seed: int) -> Measurement:
    """One recording process whose host time sits at ``level`` reference units."""
    ref = Stats.of([20.0] * POOL_ROUNDS)
    return measurement(
        kernels={"aten::mul": 1},
        device=[level * 20] * POOL_ROUNDS,
        host=list(_noisy(level * 20, seed + 1).samples),
        reference_us=ref,
        host_relative=_noisy(level, seed),
        dispatch_reference_us=ref,
        host_relative_dispatch=_noisy(level, seed + 3),
    )


def process_entry(level: float, seed: int = 0, **changes: object) -> Entry:
    """The baseline entry one recording process at ``level`` writes."""
    return replace(Entry.of(process_measurement(level, seed)), **changes)  # type: ignore[arg-type]


def sampled_windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[WindowPlan, HostSamples]]:
    """Each host window the measurements sample from now on, with its plan: what the code
    decided to sample, asserted in place of how long the sampling took (a wall clock)."""
    seen: list[tuple[WindowPlan, HostSamples]] = []

    def spy(
        call: Callable[[], Any],
        rounds: int,
        plan: WindowPlan,
        reference: Reference | None,
        clock: Callable[[], int] = time.perf_counter_ns,
        *,
        long_tick: bool = False,
    ) -> HostSamples:
        samples = sample_window(call, rounds, plan, reference, clock, long_tick=long_tick)
        seen.append((plan, samples))
        return samples

    monkeypatch.setattr(host, "sample_window", spy)
    return seen


# A fused RMSNorm under max_ops=1 that BREAK_FUSION=1 unfuses, and a plain region beside it.
FUSION_SUITE = """
import os, pytest, torch

H = 64

def rmsnorm(x, w):
    if os.environ.get("BREAK_FUSION"):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w
    return torch.rms_norm(x, (H,), w, 1e-6)

@pytest.fixture
def xw():
    return torch.randn(4, H), torch.ones(H)

@pytest.mark.neuron_budget(max_ops=1)
def test_fused(neuron_profile, xw):
    neuron_profile(rmsnorm, *xw, name="rmsnorm")

def test_plain(neuron_profile, xw):
    neuron_profile(torch.relu, xw[0], name="relu")
"""

# Three rounds: too few to judge times (stats.MIN_ROUNDS), so two real runs differ only in
# what they dispatched.
FAST = (
    "-p",
    "no:cacheprovider",
    "--neuron-profile",
    "--neuron-profile-rounds=3",
    "--neuron-profile-warmup=1",
)


# Python source defining ``churn()``: three 4 MB blocks made, touched and freed ten times,
# the minor page faults of each round. glibc's moving thresholds (measure/heap.py) return
# the 12 MB to the OS after every round; fixed, only the first round faults.
HEAP_CHURN = """
import ctypes, resource

def churn():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = (ctypes.c_void_p,)
    size, faults = 4 << 20, []
    for _ in range(10):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        blocks = [libc.malloc(size) for _ in range(3)]
        for b in blocks:
            ctypes.memset(b, 1, size)
        for b in blocks:
            libc.free(b)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return faults
"""
# The pages one round touches.
CHURN_PAGES = 3 * (4 << 20) // 4096
