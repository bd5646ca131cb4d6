"""Counts read as words: one of a thing is singular."""

from __future__ import annotations

from pytest_neuronperf.words import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [counted(n, "op") for n in (0, 1, 2)] == ["0 ops", "1 op", "2 ops"]
    assert counted(1, "graph break") == "1 graph break"
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(1, "entry", "entries") == "1 entry"
