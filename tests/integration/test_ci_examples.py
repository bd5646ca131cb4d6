"""The GitHub Actions workflows in examples/ci: valid YAML of the workflow layout, and every
``neuronperf`` command and ``--neuron-profile-*`` option they use is one this version has."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_neuronperf.cli.main import _parser
from pytest_neuronperf.settings import SPECS

EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples" / "ci").glob("*.yml"))
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


def _runs(workflow: dict[str, Any]) -> list[str]:
    return [s["run"] for job in workflow["jobs"].values() for s in job["steps"] if "run" in s]


def test_every_engine_has_a_workflow() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"perf-bencher.yml", "perf-github-action-benchmark.yml", "perf-shards.yml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_workflow_is_yaml_of_the_actions_layout(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(workflow["name"], str)
    assert True in workflow  # "on:", which YAML 1.1 reads as true
    for name, job in workflow["jobs"].items():
        assert "runs-on" in job, name
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (name, step)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_its_commands_and_options_exist(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    options = {s.cli for s in SPECS}
    for run in _runs(workflow):
        for line in run.replace("\\\n", " ").splitlines():
            words = shlex.split(EXPRESSION.sub("X", line))
            used = {w.split("=", 1)[0] for w in words if w.startswith("--neuron-profile")}
            assert used <= options, (path.name, used - options)
            if words[:1] == ["neuronperf"]:
                # argparse exits on an unknown command or option.
                _parser().parse_args([EXPRESSION.sub("X", w) for w in words[1:]])
