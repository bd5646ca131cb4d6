"""The baseline store and the reference setting through real pytest runs (pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.store import file_name

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODULE = """
import torch

def test_a(neuron_profile):
    neuron_profile(torch.relu, torch.ones(256), name="relu")
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_it=MODULE)
    return pytester


# The file of this machine's CPU, wherever the suite runs.
FILE = Path(".neuronperf") / file_name(CpuBackend().device_kind())


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


def test_a_baseline_that_is_not_utf8_is_refused_in_one_line_and_replaced_by_update(
    project: pytest.Pytester,
) -> None:
    """Not UTF-8: once an INTERNALERROR (UnicodeDecodeError), even under update."""
    path = project.path / FILE
    path.parent.mkdir()
    # A test id with an e-acute in Latin-1: one byte 0xE9, not UTF-8.
    content = '{"schema_version": 1, "entries": {"test_it.py::test_caf\u00e9": {}}}'.encode(
        "latin-1"
    )
    path.write_bytes(content)
    result = run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*neuronperf: baseline file *{FILE.name}: is not UTF-8 text*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert path.read_bytes() == content

    result = run(project, "--neuron-profile-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*{FILE.name} was unreadable (is not UTF-8 text*"])
    assert list(json.loads(path.read_text())["entries"]) == ["test_it.py::test_a"]


def test_an_infinite_sample_is_a_damaged_file(project: pytest.Pytester) -> None:
    """1e400 once read as inf and was judged 'same +inf%'."""
    run(project, "--neuron-profile-update").assert_outcomes(passed=1)
    path = project.path / FILE
    text = path.read_text()
    data = json.loads(text)
    samples = data["entries"]["test_it.py::test_a"]["relu"]["host_us"]["samples"]
    old = json.dumps(samples)
    path.write_text(text.replace(old, "[1e400" + old[old.index(",") :]))
    damaged = path.read_bytes()
    result = run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*region 'relu' is malformed (host_us samples must all be >= 0 and finite, got inf*"]
    )
    assert path.read_bytes() == damaged


@pytest.mark.parametrize(("value", "timed"), [("off", False), ("on", True)])
def test_reference_setting_reaches_the_measurement(
    project: pytest.Pytester, value: str, timed: bool
) -> None:
    """--neuron-profile-reference=off: no reference workload is timed, so none is stored."""
    result = run(project, f"--neuron-profile-reference={value}", "--neuron-profile-json=r.json")
    result.assert_outcomes(passed=1)
    (record,) = json.loads((project.path / "r.json").read_text())["measurements"]
    m = record["measurement"]
    for name in ("reference_us", "device_reference_us", "host_relative"):
        assert (m[name] is not None) is timed, name
