"""pytest-neuronperf: accelerator performance budgets and baselines for pytest."""

from .model import Measurement, OpRow
from .stats import Stats

__version__ = "0.1.0"
__all__ = ["Measurement", "OpRow", "Stats", "__version__"]
