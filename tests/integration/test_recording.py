"""Recording baselines end to end: each measurement pools passes until its figures are
pinned down, and --neuron-profile-pool and ``python -m pytest_neuronperf record`` pool
recording processes."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from helpers import sampled_windows
from test_baseline import FILE, MODULE, run, stored

from pytest_neuronperf.measure.window import PASSES
from pytest_neuronperf.model import APART_NOTE, ROUND_SAMPLES
from pytest_neuronperf.stats import Stats

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_recording_a_baseline_pools_several_windows(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_it="""
import torch

def test_a(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
"""
    )
    args = ["-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-window=0.06"]
    # The plain run measures into a directory of its own: this test is about what is
    # sampled, not about judging a 4 µs region against a baseline from 0.2 s of windows.
    plain = [f"--neuron-profile-dir={pytester.path / 'elsewhere'}"]
    # A recording samples passes of a fifth of the window until its figures are pinned down
    # (gate/record.py), up to one window, in one plan; a JSON report one window.
    windows = sampled_windows(monkeypatch)
    for extra, passes, settles in (
        (["--neuron-profile-update"], PASSES, True),
        (plain, PASSES, False),
    ):
        windows.clear()
        report = pytester.path / "report.json"
        result = pytester.runpytest_inprocess(*args, *extra, f"--neuron-profile-json={report}")
        result.assert_outcomes(passed=1)
        (row,) = json.loads(report.read_text())["measurements"]
        # What was sampled, not how long it took: one plan of 0.06 s windows' passes.
        assert [(p.seconds, p.passes, p.settled is not None) for p, _ in windows] == [
            (0.06, passes, settles)
        ]
        # window_s is how long the sampling ran.
        spent = sum(samples.seconds for _, samples in windows)
        assert row["measurement"]["window_s"] == pytest.approx(spent), extra
        assert row["measurement"]["host_us"]["n"] == 10, "pooling keeps the rounds"


def test_pool_end_to_end_through_pytest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it=MODULE)
    result = run(pytester, rounds=5)
    result.stdout.fnmatch_lines(
        [
            "2 new measurements: run pytest --neuron-profile --neuron-profile-update to record "
            "them (python -m pytest_neuronperf record --processes 3 -- ARGS pools several "
            "recording processes, steadier on CPU)"
        ]
    )
    run(pytester, "--neuron-profile-update", rounds=5).assert_outcomes(passed=2)
    first = stored(pytester)["entries"]["test_it.py::test_a"]["work"]  # type: ignore[index]
    assert "processes" not in first
    for n in (2, 3):
        result = run(pytester, "--neuron-profile-pool", rounds=5)
        result.assert_outcomes(passed=2)
        result.stdout.fnmatch_lines(
            [f"*baselines written to *: 0 added, 2 pooled (now over {n} processes), 0 changed*"]
        )
    entry = stored(pytester)["entries"]["test_it.py::test_a"]["work"]  # type: ignore[index]
    assert entry["processes"] == 3 and entry["rounds"] == 5
    assert len(entry["host_relative"]["samples"]) == 15
    assert entry["host_relative"]["samples"][:5] == first["host_relative"]["samples"]
    # Judged against the pool: unchanged code passes at a tolerance above the noise of
    # 50 ms windows, and one more op fails with the op diff.
    run(pytester, "--neuron-profile-tolerance=50", rounds=5).assert_outcomes(passed=2)
    monkeypatch.setenv("NP_EXTRA_OP", "1")
    result = run(pytester, rounds=5)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*+ aten::add ×1*"])
    # Pooling what no longer measures the same thing replaces it.
    result = run(pytester, "--neuron-profile-pool", rounds=5)
    result.stdout.fnmatch_lines(["*: 0 added, 2 changed*"])
    assert "processes" not in stored(pytester)["entries"]["test_it.py::test_a"]["work"]  # type: ignore[index]
    assert (pytester.path / FILE).exists()


def as_processes(entry: dict[str, Any], speeds: tuple[float, ...]) -> None:
    """``entry``, recorded by one process, rewritten as if one recording process per speed
    had recorded it, each running the region that many times as long beside the same
    ticks."""
    for name in ROUND_SAMPLES:
        if name not in entry:
            continue
        timed = name == "host_us" or name.startswith("host_relative")
        rounds = entry[name]["samples"]
        entry[name] = Stats.of(
            [v * (s if timed else 1.0) for s in speeds for v in rounds]
        ).to_dict()
    entry["processes"] = len(speeds)


def recorded(pytester: pytest.Pytester) -> dict[str, object]:
    """MODULE's two tests recorded by one process, as stored."""
    pytester.makepyfile(test_it=MODULE)
    run(pytester, "--neuron-profile-update", rounds=5).assert_outcomes(passed=2)
    return stored(pytester)


def test_a_slowdown_one_recording_process_already_showed_is_not_a_regression(
    pytester: pytest.Pytester,
) -> None:
    data = recorded(pytester)
    entries: dict[str, Any] = data["entries"]  # type: ignore[assignment]
    # Both baselines ran the region twice as fast as this machine does now: test_a's in
    # four of five recording processes, the fifth three times slower than those; test_b's
    # in all five.
    as_processes(entries["test_it.py::test_a"]["work"], (0.5, 0.5, 1.5, 0.5, 0.5))
    as_processes(entries["test_it.py::test_b"]["work"], (0.5,) * 5)
    (pytester.path / FILE).write_text(json.dumps(data))
    report = pytester.path / "report.json"
    result = run(pytester, f"--neuron-profile-json={report}", rounds=5)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_b*host time regressed +*"])
    footer = " ".join(result.stdout.str().split())  # as wrapped to the terminal's width
    assert (
        "1 time change past the tolerance stayed within how far its baseline's recording "
        "processes ran apart (work): judged the same; python -m pytest_neuronperf record"
    ) in footer
    rows = {r["measurement"]["test_id"]: r for r in json.loads(report.read_text())["measurements"]}
    a = rows["test_it.py::test_a"]
    assert a["baseline"] == "same" and a["baseline_cell"].startswith("same +")
    assert [n for n in a["baseline_notes"] if n.startswith(APART_NOTE)]
    assert rows["test_it.py::test_b"]["baseline"] == "regressed"


def test_a_recording_whose_processes_ran_apart_says_so_as_it_pools(
    pytester: pytest.Pytester,
) -> None:
    data = recorded(pytester)
    entries: dict[str, Any] = data["entries"]  # type: ignore[assignment]
    # As if four recording processes had run test_a, two at this machine's speed, one at
    # 0.8 and one at 1.25 times it: the pooled median stays near the two, so however the
    # pooling process runs, the spread is at least -20%..+25% and, unless that process runs
    # four times off, within 300%.
    as_processes(entries["test_it.py::test_a"]["work"], (1.0, 1.0, 0.8, 1.25))
    saved = json.dumps(data)
    said = (
        r"1 pooled region: its recording processes ran further apart than the tolerance "
        r"\(test_it\.py::test_a \[work\] -\d+%\.\.\+\d+%\): a later time change counts "
        r"only past the tolerance beyond that spread; record it again on a quieter machine "
        r"to gate closer"
    )
    for tolerance, warned in (("10", True), ("300", False)):
        (pytester.path / FILE).write_text(saved)
        result = run(
            pytester, "--neuron-profile-pool", f"--neuron-profile-tolerance={tolerance}",
            "-k", "test_a", rounds=5,
        )  # fmt: skip
        result.assert_outcomes(passed=1, deselected=1)
        footer = " ".join(result.stdout.str().split())  # as wrapped to the terminal's width
        assert "0 added, 1 pooled (now over 5 processes)" in footer
        assert bool(re.search(said, footer)) is warned, (tolerance, footer[-600:])


@pytest.mark.slow  # a subprocess per recording process
def test_record_command_end_to_end(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MODULE)
    result = pytester.run(
        sys.executable,
        "-m",
        "pytest_neuronperf",
        "record",
        "--processes",
        "2",
        "--",
        "-p",
        "no:cacheprovider",
        "--neuron-profile-rounds=5",
        "--neuron-profile-warmup=1",
    )
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines(
        [
            "neuronperf record: process 1 of 2 (--neuron-profile-update)",
            "*2 added*",
            "neuronperf record: process 2 of 2 (--neuron-profile-pool)",
            "*2 pooled (now over 2 processes)*",
        ]
    )
    entry = stored(pytester)["entries"]["test_it.py::test_b"]["work"]  # type: ignore[index]
    assert entry["processes"] == 2 and len(entry["host_us"]["samples"]) == 10


@pytest.mark.slow
def test_record_says_what_the_failing_first_process_wrote(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_rec="""
import torch

def test_good(neuron_profile):
    neuron_profile(torch.exp, torch.ones(64))

def test_bad(neuron_profile):
    neuron_profile(torch.exp, torch.ones(64))
    assert False
"""
    )
    args = (
        "--",
        "-p",
        "no:cacheprovider",
        "--neuron-profile-rounds=2",
        "--neuron-profile-warmup=1",
    )
    result = pytester.run(
        sys.executable, "-m", "pytest_neuronperf", "record", "--processes", "3", *args
    )
    assert result.ret == 1
    written = json.loads(next((pytester.path / ".neuronperf").glob("*.json")).read_text())
    assert list(written["entries"]) == ["test_rec.py::test_good"]
    result.stderr.fnmatch_lines(
        [
            "neuronperf record: process 1 of 3 exited with status 1: it recorded the entries "
            "of the tests that passed, not of those that failed; processes 2-3 did not run"
        ]
    )
    # A run that wrote nothing says so.
    empty = pytester.run(
        sys.executable, "-m", "pytest_neuronperf", "record", "--processes", "2", *args, "-k", "none"
    )
    assert empty.ret == 5
    empty.stderr.fnmatch_lines(
        [
            "neuronperf record: process 1 of 2 exited with status 5: it wrote nothing "
            "(baselines are written only after exit status 0 or 1); process 2 did not run"
        ]
    )
