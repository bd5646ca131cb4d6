"""The JSON report records the commit, branch and dirty flag of a rootdir that is a git
checkout, and the CI run: a real pytest run through pytester inside a real git repo."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.slow,  # git subprocesses
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

SUITE = """
import torch

def test_relu(neuron_profile):
    neuron_profile(torch.relu, torch.randn(8), name="relu")
"""
RUN = (
    "-p",
    "no:cacheprovider",
    "--neuron-profile",
    "--neuron-profile-rounds=2",
    "--neuron-profile-json=r.json",
    "--neuron-profile-html=r.html",
)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def test_git_and_ci_land_in_the_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))
    pytester.makepyfile(test_model=SUITE)
    _git(pytester.path, "init", "-q", "-b", "perf-fix")
    _git(pytester.path, "add", "test_model.py")
    _git(pytester.path, "commit", "-qm", "a test")
    for var in (
        "GITHUB_RUN_ID",
        "CI_PIPELINE_ID",
        "BUILDKITE_BUILD_ID",
        "CIRCLE_WORKFLOW_ID",
        "BUILD_TAG",
    ):
        monkeypatch.delenv(var, raising=False)
    pytester.runpytest_inprocess(*RUN).assert_outcomes(passed=1)
    doc = json.loads((pytester.path / "r.json").read_text())
    assert doc["schema_version"] == 2
    assert doc["git"] == {
        "commit": _git(pytester.path, "rev-parse", "HEAD"),
        "branch": "perf-fix",
        "dirty": False,  # the report and the .neuronperf files are untracked
        "commit_time": _git(pytester.path, "log", "-1", "--format=%cI"),
    }
    assert doc["ci"] is None
    html = (pytester.path / "r.html").read_text()
    assert f"commit {doc['git']['commit'][:12]} on perf-fix" in html
    # An edited tracked file is a dirty checkout; a CI run id is recorded with its address.
    (pytester.path / "test_model.py").write_text(SUITE + "\n# edited\n")
    monkeypatch.setenv("GITHUB_RUN_ID", "987")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    pytester.runpytest_inprocess(*RUN).assert_outcomes(passed=1)
    doc = json.loads((pytester.path / "r.json").read_text())
    assert doc["git"]["dirty"] is True
    assert doc["ci"] == {
        "provider": "github",
        "run_id": "987",
        "url": "https://github.com/o/r/actions/runs/987",
    }


def test_outside_a_checkout_git_is_null(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(pytester.path.parent))
    pytester.makepyfile(test_model=SUITE)
    pytester.runpytest_inprocess(*RUN).assert_outcomes(passed=1)
    assert json.loads((pytester.path / "r.json").read_text())["git"] is None
