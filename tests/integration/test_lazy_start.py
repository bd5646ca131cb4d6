"""pytest imports the plugin for every run: one that never measures loads its settings and
marker code only, not the session, the Runner, the backends or torch. Fresh processes."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CONFTEST = """
import sys

def pytest_unconfigure(config):
    loaded = sorted(m for m in sys.modules if m.startswith(("pytest_neuronperf", "torch")))
    print("LOADED", " ".join(loaded))
    from pytest_neuronperf.session.lazy import SESSION
    print("STARTED", config.stash[SESSION].started)
"""
HEAVY = (
    "torch",
    "pytest_neuronperf.session.measuring",
    "pytest_neuronperf.session.controller",
    "pytest_neuronperf.fixture",
    "pytest_neuronperf.measure.runner",
    "pytest_neuronperf.backends",
    "pytest_neuronperf.reports",
    "pytest_neuronperf.baselines",
)


def started(result: pytest.RunResult) -> str:
    """Whether the run's one session (made at configure) started its measuring part."""
    (line,) = [line for line in result.stdout.lines if line.startswith("STARTED ")]
    return line.split()[1]


def loaded(result: pytest.RunResult) -> set[str]:
    (line,) = [line for line in result.stdout.lines if line.startswith("LOADED ")]
    return set(line.split()[1:])


def test_a_run_that_never_measures_loads_no_session(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    modules = loaded(result)
    assert "pytest_neuronperf.plugin" in modules
    assert not {m for m in modules if m.startswith(HEAVY)}, sorted(modules)
    assert started(result) == "False", "the session exists from configure, unstarted"


def test_the_fixture_or_a_marker_starts_it(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_uses="""
import pytest

def test_fixture(neuron_profile):
    assert neuron_profile(lambda: 3) == 3   # disabled: only runs the code
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    modules = loaded(result)
    assert "pytest_neuronperf.session.measuring" in modules
    assert "pytest_neuronperf.session.controller" in modules
    assert started(result) == "True"
