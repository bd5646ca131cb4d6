"""What pyproject.toml claims about torch against what tox runs the suite on."""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

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
