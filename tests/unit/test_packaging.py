"""What pyproject.toml claims against what tox, .ci/run and pre-commit run."""

from __future__ import annotations

import configparser
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

import pytest_neuronperf

ROOT = Path(__file__).resolve().parents[2]


def _torch_floor() -> Version:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [torch] = [r for r in map(Requirement, project["dependencies"]) if r.name == "torch"]
    [floor] = [Version(s.version) for s in torch.specifier if s.operator == ">="]
    return floor


def test_the_oldest_torch_claimed_is_the_one_tox_runs_the_suite_on() -> None:
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini")
    [pin] = map(Requirement, tox["testenv:oldest-torch"]["deps"].split())
    [spec] = pin.specifier
    assert (pin.name, spec.operator) == ("torch", "==")
    assert Version(spec.version) == _torch_floor(), (
        "pyproject.toml's torch floor and tox.ini's oldest-torch env must name one version"
    )


def _ci_commands() -> list[str]:
    """The check commands .ci/run runs, one per line, as written there."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    tools = ("ruff ", "mypy", "lint-imports")
    return [line.strip() for line in lines if line.strip().startswith(tools)]


def test_pre_commit_runs_the_checks_ci_runs() -> None:
    entries = re.findall(
        r"^\s*entry:\s*(.+)$", (ROOT / ".pre-commit-config.yaml").read_text(), re.M
    )
    assert _ci_commands() and len(_ci_commands()) == 4
    for command in _ci_commands():
        # pre-commit passes file names after the entry: ``ruff check`` then checks those.
        assert command.removesuffix(" .") in entries, command


def test_the_version_and_the_torch_pin_are_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert pytest_neuronperf.__version__ == version("pytest-neuronperf")
    pin = [
        line
        for line in (ROOT / ".ci" / "torch.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(pin) == 1 and Requirement(pin[0]).name == "torch"
    assert "-r .ci/torch.txt" in (ROOT / ".ci" / "run").read_text()
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini")
    for env in ("testenv", "testenv:lint"):
        assert tox[env]["deps"].split() == ["-r{toxinidir}/.ci/torch.txt"]
    assert tox["testenv:oldest-torch"]["extras"] == "dev"
