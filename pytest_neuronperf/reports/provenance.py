"""Where a report came from: the git commit, branch and dirty flag of the rootdir, and the
CI run. ``neuronperf compare`` names both sides by them and ``neuronperf history`` orders
reports by them. Every part is optional: no git, no checkout or no CI is a report without
that part, never an error."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A hung git (a network file system, a credential prompt) must not hold up the session.
GIT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Git:
    commit: str
    branch: str | None  # None: a detached HEAD with no CI variable naming the branch
    dirty: bool  # tracked files differ from the commit
    commit_time: str  # committer date, ISO 8601 with offset

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "branch": self.branch,
            "dirty": self.dirty,
            "commit_time": self.commit_time,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Git:
        branch = d.get("branch")
        return cls(
            str(d["commit"]),
            None if branch is None else str(branch),
            bool(d.get("dirty", False)),
            str(d.get("commit_time", "")),
        )


@dataclass(frozen=True)
class Ci:
    provider: str
    run_id: str
    url: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "run_id": self.run_id, "url": self.url}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Ci:
        return cls(str(d["provider"]), str(d["run_id"]), str(d.get("url", "")))


@dataclass(frozen=True)
class Provenance:
    git: Git | None = None
    ci: Ci | None = None

    def line(self) -> str:
        """``commit 1a2b3c4 on main (dirty), github run 42``, or "" when nothing is known."""
        parts = []
        if self.git is not None:
            g = self.git
            text = f"commit {g.commit[:12]}"
            if g.branch:
                text += f" on {g.branch}"
            if g.dirty:
                text += " (dirty: uncommitted changes)"
            parts.append(text)
        if self.ci is not None:
            parts.append(f"{self.ci.provider} run {self.ci.run_id}")
        return ", ".join(parts)


# (provider, variable holding the run id, how to build the run's address)
_CI: tuple[tuple[str, str, str], ...] = (
    ("github", "GITHUB_RUN_ID", "{GITHUB_SERVER_URL}/{GITHUB_REPOSITORY}/actions/runs/{id}"),
    ("gitlab", "CI_PIPELINE_ID", "{CI_PIPELINE_URL}"),
    ("buildkite", "BUILDKITE_BUILD_ID", "{BUILDKITE_BUILD_URL}"),
    ("circleci", "CIRCLE_WORKFLOW_ID", "{CIRCLE_BUILD_URL}"),
    ("jenkins", "BUILD_TAG", "{BUILD_URL}"),
)
# A checkout CI made on a detached HEAD still has a branch: the variables that name it.
_BRANCH_VARS = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH")


def ci(env: Mapping[str, str] | None = None) -> Ci | None:
    env = os.environ if env is None else env
    for provider, var, url in _CI:
        run_id = env.get(var, "")
        if run_id:
            try:
                address = url.format(id=run_id, **env)
            except (KeyError, IndexError, ValueError):
                address = ""
            return Ci(provider, run_id, address)
    return None


def _git(root: Path, *args: str) -> str | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git(root: Path, env: Mapping[str, str] | None = None) -> Git | None:
    """The checkout ``root`` is in, or None (no git, not a checkout, no commit yet)."""
    env = os.environ if env is None else env
    head = _git(root, "log", "-1", "--format=%H%n%cI")
    if not head or "\n" not in head:
        return None
    commit, when = head.split("\n", 1)
    branch = _git(root, "symbolic-ref", "--short", "-q", "HEAD") or next(
        (env[v] for v in _BRANCH_VARS if env.get(v)), None
    )
    # Untracked files are left out: the run itself writes reports and traces into the tree.
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return Git(commit, branch, bool(status), when)


def collect(root: Path | None, env: Mapping[str, str] | None = None) -> Provenance:
    return Provenance(git(root, env) if root is not None else None, ci(env))
