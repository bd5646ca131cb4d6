"""What a measured test costs the session: one baseline comparison per measurement."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Counts each comparison the session makes, per test id, into $COMPARED at the end.
CONFTEST = """
import json, os
import pytest_neuronperf.session.measuring as measuring

SEEN = []
REAL = measuring.compare_one


def counted(entry, m, *args, **kwargs):
    SEEN.append(m.test_id)
    return REAL(entry, m, *args, **kwargs)


def pytest_configure(config):
    measuring.compare_one = counted


def pytest_runtest_teardown(item):
    # Items live as long as the session: once judged, the measurements are the report's.
    assert measuring.measurements_key not in item.stash
    assert measuring.comparisons_key not in item.stash


def pytest_unconfigure(config):
    measuring.compare_one = REAL
    with open(os.environ["COMPARED"], "w") as f:
        json.dump(SEEN, f)
"""

MODULE = """
import torch

def test_callable(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
    neuron_profile(torch.neg, torch.ones(64), name="neg")

def test_block(neuron_profile):
    with neuron_profile.region("block"):
        torch.ones(8).sum()
"""


def test_each_measurement_is_compared_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second-look check compares a callable's measurement as soon as it is taken; the
    verdict reuses that comparison instead of making it again (each is a few bootstraps)."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_it=MODULE)
    compared = pytester.path / "compared.json"
    monkeypatch.setenv("COMPARED", str(compared))
    args = ["-p", "no:cacheprovider", "--neuron-profile-rounds=5"]
    once = ["test_it.py::test_callable"] * 2 + ["test_it.py::test_block"]
    # Recording compares too (an entry that still holds is kept byte for byte), once each.
    pytester.runpytest_inprocess(*args, "--neuron-profile-update").assert_outcomes(passed=2)
    assert sorted(json.loads(compared.read_text())) == sorted(once)
    result = pytester.runpytest_inprocess(*args, "--neuron-profile", "-v")
    result.assert_outcomes(passed=2)
    # Two measurements of test_callable, one of test_block: one comparison each. A
    # measurement whose first window regressed is sampled again and compared again, as a
    # new measurement: on an unchanged region that is rare, and the detail line says so.
    second_looks = result.stdout.str().count("in the first window; judged on")
    assert sorted(json.loads(compared.read_text())) == sorted(
        once + ["test_it.py::test_callable"] * second_looks
    )
