"""The run's one session object, made in pytest_configure; its heavy parts load on first use.

pytest imports the plugin for every run of every suite in the environment, so this module
imports only settings and peaks: the measuring session (runner, backends, baselines,
reports, torch) is started by ``measuring()``, the one place that starts it
(docs/session.md, "One session, started lazily").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..settings import Settings
from ..work.peaks import Peaks

if TYPE_CHECKING:
    from .measuring import MeasuringSession


class Session:
    """This run's neuronperf session: its settings from configure on, its measuring part
    once something measures (``measuring()``)."""

    def __init__(
        self, config: pytest.Config, settings: Settings, peaks: tuple[tuple[str, Peaks], ...]
    ) -> None:
        self.settings = settings
        self.peaks = peaks
        self._config = config
        self._measuring: MeasuringSession | None = None

    @property
    def started(self) -> bool:
        """Whether the measuring part has been started."""
        return self._measuring is not None

    def measuring(self) -> MeasuringSession:
        """The measuring session, started (and registered with pytest) on the first call."""
        if self._measuring is None:
            # The one lazy import: session/ brings the runner, backends, verdicts and
            # reports; a run that never measures must not pay for them.
            from .roles import start

            self._measuring = start(self._config, self.settings, self.peaks)
        return self._measuring


SESSION = pytest.StashKey[Session]()
