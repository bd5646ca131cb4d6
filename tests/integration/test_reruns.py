"""pytest-rerunfailures (``--reruns``): the last attempt is the measurement, in the table,
the footer, the JSON and JUnit reports and the baseline file; earlier attempts count for
nothing. Through pytester with the real plugin, on the real CPU profiler."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# The first attempt of test_flaky dispatches one op too many; the next is within budget.
MODULE = """
import pytest, torch
from pathlib import Path

torch.set_num_threads(1)
ATTEMPTS = Path(__file__).with_name("attempts")

def work(x, extra):
    y = x * 2.0
    if extra:
        y = y + 1.0
    return y.sum()

@pytest.mark.neuron_budget(max_ops=2)
def test_flaky(neuron_profile):
    n = int(ATTEMPTS.read_text()) if ATTEMPTS.exists() else 0
    ATTEMPTS.write_text(str(n + 1))
    neuron_profile(work, torch.ones(64), n == 0, name="work")

def test_steady(neuron_profile):
    neuron_profile(work, torch.ones(64), False, name="work")
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    (pytester.path / "attempts").unlink(missing_ok=True)
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--reruns",
        "2",
        "--neuron-profile",
        "--neuron-profile-rounds=3",
        "--neuron-profile-warmup=1",
        *args,
    )


def assert_outcomes(result: pytest.RunResult) -> None:
    assert result.parseoutcomes() == {"passed": 2, "rerun": 1}


def test_the_last_attempt_is_the_measurement(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MODULE)
    result = run(pytester, "--junitxml=junit.xml", "--neuron-profile-json=report.json")
    assert_outcomes(result)
    assert (pytester.path / "attempts").read_text() == "2"
    out = result.stdout.str()
    rows = [line for line in out.splitlines() if line.startswith("test_it.py::test_flaky ")]
    assert len(rows) == 1 and " ok " in rows[0], out
    assert "over budget" not in out
    result.stdout.fnmatch_lines(["*baselines .neuronperf/cpu_*.json: 2 new", "2 new measurements*"])

    doc = json.loads((pytester.path / "report.json").read_text())
    assert doc["summary"] == {
        "measurements": 2,
        "by_status": {"baseline new": 2, "measured": 1, "ok": 1},
    }
    # JUnit files a testcase per attempt; only the last carries the figures, each once.
    flaky = [
        {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(pytester.path / "junit.xml").iter("testcase")
        if case.get("name") == "test_flaky"
    ]
    assert flaky[:-1] == [{}] * (len(flaky) - 1)
    assert flaky[-1]["neuronperf.work.status"] == "ok"
    assert flaky[-1]["neuronperf.work.ops"] == "2"
    statuses = [
        str(p.get("value"))
        for p in ET.parse(pytester.path / "junit.xml").iter("property")
        if p.get("name") == "neuronperf.work.status"
    ]
    assert sorted(statuses) == ["measured", "ok"]


def test_an_update_records_the_last_attempt(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MODULE)
    result = run(pytester, "--neuron-profile-update")
    assert_outcomes(result)
    result.stdout.fnmatch_lines(["baselines written to *: 2 added, 0 changed, 0 stale removed*"])
    (stored,) = (pytester.path / ".neuronperf").glob("cpu_*.json")
    entries = json.loads(stored.read_text())["entries"]
    assert entries["test_it.py::test_flaky"]["work"]["ops"] == 2
    # And the next run, unchanged, is judged against it and passes.
    assert_outcomes(run(pytester))
