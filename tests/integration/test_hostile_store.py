"""The baseline store under hostile conditions (issue 24): no entry lost, no damaged file
replaced by a partial run, no temporary file left behind. Real pytest runs (pytester)."""

from __future__ import annotations

import json
import re
import os
from pathlib import Path

import pytest

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.store import file_name

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NAME = file_name(CpuBackend().device_kind())
FILE = Path(".neuronperf") / NAME

TWO_REGIONS = """
import pytest
import torch

{marker}
def test_t(neuron_profile):
    x = torch.ones(64)
    neuron_profile(lambda: torch.relu(x), name="one")
    neuron_profile(lambda: torch.relu(x) + x, name="two")

def test_other(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="other")
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        "--neuron-profile-rounds=3",
        "--neuron-profile-warmup=1",
        "--neuron-profile-work=off",
        *args,
    )


def entries(path: Path) -> dict[str, dict[str, object]]:
    loaded: dict[str, dict[str, object]] = json.loads(path.read_text())["entries"]
    return loaded


def test_an_over_budget_region_under_update_keeps_every_entry_of_its_test(
    pytester: pytest.Pytester,
) -> None:
    """Item 1: region 'two' over budget was removed as stale and 'one' of the failed test
    rewritten. A test with a region that failed is neither written nor removed."""
    pytester.makepyfile(test_it=TWO_REGIONS.format(marker=""))
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=2)
    before = entries(pytester.path / FILE)
    assert set(before["test_it.py::test_t"]) == {"one", "two"}

    budget = '@pytest.mark.neuron_budget(region="two", max_ops=1)'
    pytester.makepyfile(test_it=TWO_REGIONS.format(marker=budget))
    result = run(pytester, "--neuron-profile-update")
    result.assert_outcomes(passed=1, failed=1)
    after = entries(pytester.path / FILE)
    assert after["test_it.py::test_t"] == before["test_it.py::test_t"]
    assert re.search(r"[1-9]\d* stale removed", result.stdout.str()) is None


ONE_TEST = """
import torch

def test_{name}(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
"""


def test_a_directory_shared_by_two_rootdirs_keeps_both_rootdirs_entries(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2: the second rootdir's update removed the first's entry ('file gone'). Entries
    of a store in a common ancestor are keyed relative to it (docs/baseline-store.md)."""
    shared = pytester.path / "mono" / ".neuronperf"
    monkeypatch.setenv("NEURONPERF_DIR", str(shared))
    for pkg in ("pkgA", "pkgB"):
        root = pytester.path / "mono" / pkg
        root.mkdir(parents=True)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / f"test_{pkg}.py").write_text(ONE_TEST.format(name=pkg))
    for pkg in ("pkgA", "pkgB"):
        monkeypatch.chdir(pytester.path / "mono" / pkg)
        result = run(pytester, "--neuron-profile-update")
        result.assert_outcomes(passed=1)
        assert re.search(r"[1-9]\d* stale removed", result.stdout.str()) is None
    assert sorted(entries(shared / NAME)) == [
        "pkgA/test_pkgA.py::test_pkgA",
        "pkgB/test_pkgB.py::test_pkgB",
    ]
    # Each rootdir compares against its own entry, and a test removed is removed.
    monkeypatch.chdir(pytester.path / "mono" / "pkgA")
    run(pytester).stdout.fnmatch_lines(["*1 same*"])
    (pytester.path / "mono" / "pkgA" / "test_pkgA.py").write_text(ONE_TEST.format(name="new"))
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=1)
    assert sorted(entries(shared / NAME)) == [
        "pkgA/test_pkgA.py::test_new",
        "pkgB/test_pkgB.py::test_pkgB",
    ]
