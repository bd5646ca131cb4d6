"""The session's objects for this process, by role: the measuring part, and the controller
(a serial run is its own controller) or an xdist worker."""

from __future__ import annotations

import pytest

from ..settings import Settings
from ..work.peaks import Peaks
from .controller import Controller
from .measuring import MeasuringSession
from .ranks import Follower, torchrun_rank
from .worker import Worker

NAME = "neuronperf-session"


def start(
    config: pytest.Config, settings: Settings, peaks: tuple[tuple[str, Peaks], ...]
) -> MeasuringSession:
    """Register this process's objects with pytest; the measuring one is returned."""
    # xdist gives its workers' configs a workerinput: the one place the role is chosen.
    role: type[Controller] | type[Worker] = Worker if hasattr(config, "workerinput") else Controller
    rank = torchrun_rank()
    if role is Controller and rank is not None and rank[0] != 0:
        role = Follower
    session = MeasuringSession(config, settings, peaks, progress=role.progress(config))
    config.pluginmanager.register(session, NAME)
    config.pluginmanager.register(role(session), f"{NAME}-{role.name}")
    return session
