"""What measures: the backend, the Runner over it and the fixture's object. The session
imports this module only when something is measured (see MeasuringSession.instruments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .. import backends
from ..fixture import NeuronProfile, benchmark_extra_info
from ..measure.progress import Writer
from ..measure.runner import Runner
from ..measure.window import WindowPlan
from ..model import Measurement
from ..settings import Settings
from ..work.calibrate import cpu_peaks
from ..work.peaks import Peaks, PeakTable


class Instruments:
    def __init__(
        self,
        settings: Settings,
        peaks: tuple[tuple[str, Peaks], ...],
        progress: Writer | None,
    ) -> None:
        self.settings = settings
        self.peaks = peaks
        self.progress = progress
        self.backend_note = ""
        self._runner: Runner | None = None

    @property
    def runner(self) -> Runner:
        """The session's one Runner, made on first use: choosing the backend loads torch."""
        if self._runner is None:
            s = self.settings
            try:
                backend, self.backend_note = backends.select(s.backend, s)
            except backends.BackendUnavailable as exc:
                # A misconfigured device is fixed where it is, not by choosing another.
                hint = (
                    ""
                    if isinstance(exc, backends.BackendMisconfigured)
                    else " Use --neuron-profile-backend=auto or cpu to run here."
                )
                raise pytest.UsageError(f"neuronperf: {exc}.{hint}") from None
            self._runner = Runner(
                backend,
                trace_dir=s.trace_dir,
                progress=self.progress,
                peaks=PeakTable(self.peaks, calibrate=cpu_peaks),
                count_work=s.count_work,
                reference=s.reference,
                window=s.window,
                threads=s.threads,
                fixed_heap=s.heap == "fixed",
            )
        return self._runner

    @property
    def host_timed(self) -> bool:
        return self.runner.backend.mode == "host"

    def trace_note(self, test_id: str, regions: set[str]) -> str:
        """Where the named regions' traces are, with --neuron-profile-trace-dir."""
        return self._runner.trace_note(test_id, regions) if self._runner is not None else ""

    def profile(
        self,
        test_id: str,
        *,
        enabled: bool,
        recheck: Callable[[Measurement], str | None],
        window: Callable[[str], WindowPlan] | None = None,
        memory: Callable[[str], bool] | None = None,
        benchmark: Any = None,
    ) -> NeuronProfile:
        profile = NeuronProfile(
            test_id=test_id,
            enabled=enabled,
            runner=lambda: self.runner,
            rounds=self.settings.rounds,
            warmup=self.settings.warmup,
            recheck=recheck,
            window=window,
            memory=memory,
        )
        if benchmark is not None:
            # pytest-benchmark in the same test: our figures ride in its extra_info, so its
            # JSON, compare and history carry them.
            profile.listeners.append(benchmark_extra_info(benchmark))
        return profile
