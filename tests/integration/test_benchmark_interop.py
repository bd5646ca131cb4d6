"""A test that uses both pytest-benchmark and neuron_profile: our figures land in its JSON."""

from __future__ import annotations

import json

# The dev extra's own: imported, not skipped, so that a broken install fails.
import pytest
import pytest_benchmark  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_measurements_go_into_benchmark_extra_info(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_both="""
import torch

def naive(x):
    return torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * x

def test_both(benchmark, neuron_profile):
    x = torch.randn(4, 32)
    benchmark(naive, x)
    neuron_profile(naive, x, name="naive")
"""
    )
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        "--neuron-profile-rounds=2",
        "--benchmark-json=bench.json",
        "--benchmark-max-time=0.01",
    )
    result.assert_outcomes(passed=1)
    [bench] = json.loads((pytester.path / "bench.json").read_text())["benchmarks"]
    info = bench["extra_info"]["neuronperf"]["naive"]
    assert info["ops"] == 5 and info["op_counts"]["aten::mul"] == 2
    assert info["device_us_median"] > 0 and info["device_kind"].startswith("cpu:")
