"""One base for the errors the plugin raises on purpose, exported from the package."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest_neuronperf
from pytest_neuronperf.errors import NeuronPerfError

# A built-in second base each error keeps, so that code catching it before still does.
BUILTINS = (ValueError, RuntimeError, TimeoutError)


def exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in the package, found by importing each module."""
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(pytest_neuronperf.__path__, "pytest_neuronperf."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
            ):
                found.append(obj)
    return found


def test_the_search_finds_the_errors_of_every_room() -> None:
    # A search that found nothing would pass the test below on nothing.
    names = {e.__name__ for e in exception_classes()}
    assert {"BudgetError", "BaselineError", "ReportError", "RuntimeTraceError"} <= names


def test_every_error_has_the_one_base_and_keeps_its_builtin() -> None:
    for error in exception_classes():
        if error is NeuronPerfError:
            continue
        assert issubclass(error, NeuronPerfError), error
        assert issubclass(error, BUILTINS), error


def test_the_base_is_exported_from_the_package() -> None:
    assert pytest_neuronperf.NeuronPerfError is NeuronPerfError
    assert "NeuronPerfError" in pytest_neuronperf.__all__
