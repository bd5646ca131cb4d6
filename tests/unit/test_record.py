"""cli/record.py: ``python -m pytest_neuronperf record`` runs one recording process, then
pools the rest into its baselines."""

from __future__ import annotations

import sys

import pytest

from pytest_neuronperf.cli.main import main
from pytest_neuronperf.cli.record import record

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_record_runs_update_then_pool_and_stops_at_a_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[list[str]] = []

    def fails_second(argv: list[str]) -> int:
        calls.append(argv)
        return 1 if len(calls) == 2 else 0

    def passes(argv: list[str]) -> int:
        calls.append(argv)
        return 0

    assert record(["--", "tests", "-k", "x"], 3, run=passes) == 0
    assert [c[3] for c in calls] == [
        "--neuron-profile-update",
        "--neuron-profile-pool",
        "--neuron-profile-pool",
    ]
    assert all(
        c[:3] == [sys.executable, "-m", "pytest"] and c[4:] == ["tests", "-k", "x"] for c in calls
    )
    calls.clear()
    assert record(["tests"], 3, run=fails_second) == 1
    assert len(calls) == 2
    assert (
        "process 2 of 3 exited with status 1: it added the rounds of the tests that passed"
        in capsys.readouterr().err
    )
    assert main(["record", "--processes", "0"]) == 2
