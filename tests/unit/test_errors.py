"""One base for the errors the plugin raises on purpose, exported from the package."""

from __future__ import annotations

import pytest

import pytest_neuronperf
from pytest_neuronperf.backends.base import BackendUnavailable
from pytest_neuronperf.baselines.store import BaselineError, NewerSchemaError
from pytest_neuronperf.codec import DecodeError
from pytest_neuronperf.errors import NeuronPerfError
from pytest_neuronperf.gate.marker import BudgetError
from pytest_neuronperf.measure.errors import MeasureError
from pytest_neuronperf.settings import SettingError
from pytest_neuronperf.trace.analysis import AnalysisError
from pytest_neuronperf.trace.events import TraceError
from pytest_neuronperf.work.peaks import PeaksError


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (BaselineError, ValueError),
        (NewerSchemaError, ValueError),
        (BudgetError, ValueError),
        (SettingError, ValueError),
        (PeaksError, ValueError),
        (TraceError, ValueError),
        (AnalysisError, ValueError),
        (DecodeError, ValueError),
        (MeasureError, RuntimeError),
        (BackendUnavailable, RuntimeError),
    ],
)
def test_every_error_has_the_one_base_and_keeps_its_builtin(
    error: type[Exception], builtin: type[Exception]
) -> None:
    assert issubclass(error, NeuronPerfError) and issubclass(error, builtin)


def test_the_base_is_exported_from_the_package() -> None:
    assert pytest_neuronperf.NeuronPerfError is NeuronPerfError
    assert "NeuronPerfError" in pytest_neuronperf.__all__
