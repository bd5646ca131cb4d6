"""pytest-neuronperf: accelerator performance budgets and baselines for pytest."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import NeuronPerfError
    from .fixture import NeuronProfile
    from .model import Measurement, OpRow, Record
    from .stats import Stats

__version__ = "0.1.0"
__all__ = [
    "Measurement",
    "NeuronPerfError",
    "NeuronProfile",
    "OpRow",
    "Record",
    "Stats",
    "__version__",
]

# Loaded on first use: pytest imports this package for every run, measuring or not.
_LAZY = {
    "NeuronPerfError": ".errors",
    "NeuronProfile": ".fixture",
    "Measurement": ".model",
    "OpRow": ".model",
    "Record": ".model",
    "Stats": ".stats",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
