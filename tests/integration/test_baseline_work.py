"""FLOPs and bytes in the baseline: deterministic, so compared exactly, like ops."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SUITE = """
import os, torch

K = int(os.environ.get("INNER", "32"))

def project(a, b):
    return a @ b

def test_matmul(neuron_profile):
    neuron_profile(project, torch.randn(8, K), torch.randn(K, 16), name="project")
"""
FAST = (
    "-p",
    "no:cacheprovider",
    "--neuron-profile",
    "--neuron-profile-rounds=5",
    "--neuron-profile-warmup=1",
    "--neuron-profile-tolerance=1000%",
)


def test_more_flops_through_the_same_ops_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_work=SUITE)
    pytester.runpytest_inprocess(*FAST, "--neuron-profile-update").assert_outcomes(passed=1)
    [stored] = json.loads((pytester.path / ".neuronperf" / "cpu_x86_64.json").read_text())[
        "entries"
    ]["test_work.py::test_matmul"].values()
    assert stored["flops"] == 2 * 8 * 32 * 16
    assert stored["bytes_moved"] == 4 * (8 * 32 + 32 * 16 + 8 * 16)

    pytester.runpytest_inprocess(*FAST).assert_outcomes(passed=1)  # same work: passes
    monkeypatch.setenv("INNER", "48")  # same one op, 1.5x the FLOPs
    result = pytester.runpytest_inprocess(*FAST)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*neuronperf baseline: region 'project' did 12,288 FLOPs, baseline 8,192*",
            "*neuronperf baseline: region 'project' moved 5,120 bytes, baseline 3,584*",
        ]
    )
