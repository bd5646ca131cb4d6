"""The one base of the errors pytest-neuronperf raises on purpose.

Each error keeps its built-in second base (ValueError for bad input, RuntimeError for a
device or API misuse), so code that caught those before still catches them."""

from __future__ import annotations


class NeuronPerfError(Exception):
    """Raised by pytest-neuronperf with a message that names the thing and what to do;
    ``except NeuronPerfError`` catches every such error and nothing else."""
