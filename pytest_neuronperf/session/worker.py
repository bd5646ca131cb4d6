"""The xdist worker's role: it measures and judges (measuring.py), and sends the controller
what it collected. It writes no files and prints nothing: its terminal goes nowhere."""

from __future__ import annotations

from typing import Any

import pytest

from ..measure.progress import Writer
from .measuring import MeasuringSession

# workeroutput key: the test ids a worker collected, for the controller's stale check.
COLLECTED = "neuronperf_collected"


class Worker:
    name = "worker"

    def __init__(self, session: MeasuringSession) -> None:
        self.session = session

    @staticmethod
    def progress(config: pytest.Config) -> Writer | None:
        return None

    @pytest.hookimpl(trylast=True)  # after the measuring session has read the collection
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        output: dict[str, Any] = session.config.workeroutput  # type: ignore[attr-defined]
        output[COLLECTED] = self.session.baselines.collection.dumps()
