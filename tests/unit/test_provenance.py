"""Where a report came from: a real git checkout in a temporary directory, a detached HEAD
named by CI, no git at all, and the CI run from the environment."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_neuronperf.reports.provenance import Ci, ci, collect, git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q", "-b", "feature")
    (tmp_path / "model.py").write_text("x = 1\n")
    _git(tmp_path, "add", "model.py")
    _git(tmp_path, "commit", "-qm", "first")
    return tmp_path


@pytest.mark.slow
@needs_git
def test_commit_branch_and_dirty_flag_of_a_checkout(repo: Path) -> None:
    g = git(repo, env={})
    assert g is not None
    assert g.commit == _git(repo, "rev-parse", "HEAD") and g.branch == "feature"
    assert not g.dirty and g.commit_time == _git(repo, "log", "-1", "--format=%cI")
    # A file the run writes (untracked) leaves it clean; an edited tracked file does not.
    (repo / "report.json").write_text("{}")
    assert git(repo, env={}) == g
    (repo / "model.py").write_text("x = 2\n")
    dirty = git(repo, env={})
    assert dirty is not None and dirty.dirty
    # A subdirectory of the checkout is in it too.
    (repo / "tests").mkdir()
    assert git(repo / "tests", env={}) == dirty


@pytest.mark.slow
@needs_git
def test_a_detached_head_takes_its_branch_from_ci(repo: Path) -> None:
    _git(repo, "checkout", "-q", "--detach")
    g = git(repo, env={})
    assert g is not None and g.branch is None
    named = git(repo, env={"GITHUB_HEAD_REF": "fix-rmsnorm"})
    assert named is not None and named.branch == "fix-rmsnorm"


@pytest.mark.slow
@needs_git
def test_no_checkout_and_no_git_are_no_git_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert git(outside) is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert git(outside) is None and collect(outside, env={}).git is None


def test_the_ci_run_from_the_environment() -> None:
    env = {
        "GITHUB_RUN_ID": "123",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
    }
    assert ci(env) == Ci("github", "123", "https://github.com/o/r/actions/runs/123")
    assert ci({"CI_PIPELINE_ID": "9", "CI_PIPELINE_URL": "https://gl/p/9"}) == Ci(
        "gitlab", "9", "https://gl/p/9"
    )
    # An address that cannot be built is left empty, the run id kept.
    assert ci({"GITHUB_RUN_ID": "5"}) == Ci("github", "5", "")
    assert ci({}) is None
    assert collect(None, env={}).line() == ""
