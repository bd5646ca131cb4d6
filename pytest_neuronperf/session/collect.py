"""The budgets of collected tests, read from their ``neuron_budget`` markers. Loaded for
every run (the plugin reads markers before it knows whether anything will be measured), so
it imports nothing beyond the marker's own module."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ..gate.marker import Budget, BudgetError, budget_from_marker

FIXTURE = "neuron_profile"
budgets_key = pytest.StashKey[tuple[Budget, ...]]()


def read_budgets(items: Sequence[pytest.Item]) -> list[str]:
    """Stash each item's budgets, every marker's (class, function, one per region); the
    errors to report, one line each."""
    return [e for item in items if (e := _read(item))]


def uses_neuronperf(items: Sequence[pytest.Item]) -> bool:
    return any(budgets_key in i.stash or FIXTURE in getattr(i, "fixturenames", ()) for i in items)


def _read(item: pytest.Item) -> str:
    marks = list(item.iter_markers("neuron_budget"))
    if not marks:
        return ""
    try:
        item.stash[budgets_key] = tuple(
            budget_from_marker(m.args, dict(m.kwargs), item.nodeid) for m in marks
        )
    except BudgetError as exc:
        return str(exc)
    if FIXTURE not in getattr(item, "fixturenames", ()):
        return (
            f"{item.nodeid}: has a neuron_budget marker but does not use the {FIXTURE} "
            "fixture, so the budget could never be checked; add the fixture argument or "
            "remove the marker"
        )
    return ""
