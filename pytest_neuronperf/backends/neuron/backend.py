"""The Neuron backend (Trainium / Inferentia), imported lazily.

``torch-neuronx`` is never imported at module level: it is optional, heavy, and absent on
most machines. Availability follows docs/neuron.md: the native TorchNeuron backend registers
PrivateUse1 under the name ``neuron``. Device time is read the tutorial's way
(events, from ``key_averages()``'s fields with ``correlate_device_time=True``) and
cross-checked against the Neuron Runtime's own executions (runtime), or taken from
them where the backfill is absent (sources). ``benchmarks/verify_neuron.py`` checks
it all on hardware in one command.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import itertools
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...markers import parse_marker
from ...settings import DEFAULT_NEURON_CONFIG
from ..base import Backend, BackendMisconfigured, RegionRounds, Window
from ..memory import MemoryProbe, accelerator_probe
from .config import (
    PAIRING,
    BuiltConfig,
    RuntimePlan,
    build_config,
    config_summary,
    environment_conflict,
    find_explorer,
    runtime_plan,
)
from .events import (
    backfill_rounds,
    instance_family,
    logical_core_setting,
    neuron_device_kind,
    read_instance_type,
)
from .sources import Combined, NeuronDeviceTimeError, Tried, combine

if TYPE_CHECKING:
    from ...settings import Settings
    from .runtime import RoundExecutions


class NeuronBackend(Backend):
    name = "neuron"
    mode = "device"

    def __init__(self, profile_dir: Path | None = None) -> None:
        self._root = profile_dir
        self._options: dict[str, str] = dict(DEFAULT_NEURON_CONFIG)
        self._plan: RuntimePlan | None = None
        self._sessions = itertools.count()
        self._session: Path | None = None
        self._built: BuiltConfig | None = None
        # The last analysis, region by region: for verify_neuron.py and bug reports.
        self.last: list[Combined] = []

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("torch_neuronx") is None:
            return (
                "torch-neuronx is not installed (the native TorchNeuron backend; the documented "
                f"pairing is {PAIRING}, from AWS's Neuron package index, not PyPI, whose "
                "'torch-neuronx' is a placeholder)"
            )
        import torch

        if torch._C._get_privateuse1_backend_name() != "neuron" or not hasattr(torch, "neuron"):
            found = f"torch {torch.__version__}, torch-neuronx {_neuronx_version()}"
            if importlib.util.find_spec("torch_xla") is not None:
                return (
                    f"torch-neuronx is the PyTorch/XLA stack ({found}: torch_xla, no native "
                    "'neuron' device); this backend profiles the native TorchNeuron backend "
                    f"only, documented as {PAIRING}"
                )
            return (
                f"torch-neuronx is installed ({found}) but the native TorchNeuron backend is "
                "not registered (PrivateUse1 is not 'neuron'; is TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
                f"set?); the documented native pairing is {PAIRING}"
            )
        if not _torch_neuron().is_available():
            return "torch.neuron reports no Neuron device on this machine"
        return None

    def configure(self, settings: Settings) -> None:
        self._options = dict(settings.neuron_config)
        self._setup()

    def _setup(self) -> None:
        """Start-up checks: a conflicting environment, a NeuronConfig that refuses the
        options, and the device-time sources this torch-neuronx and this machine offer
        (usage errors when there is none)."""
        conflict = environment_conflict(os.environ)
        if conflict:
            raise BackendMisconfigured(conflict)
        from torch_neuronx.profiling import NeuronConfig, ProfileMode

        if self._root is None:
            # One directory per process: xdist workers and parallel sessions never share.
            self._root = Path(tempfile.mkdtemp(prefix=f"neuronperf-neuron-{os.getpid()}-"))
        # Built once now so that what it accepts is known, and recorded, before any test.
        self._built = build_config(NeuronConfig, ProfileMode, self._options, self._root / "check")
        self._plan = runtime_plan(
            self._built.backfill,
            self._options["modes"].split(","),
            importlib.util.find_spec("pyarrow") is not None,
            find_explorer(),
        )

    def device_kind(self) -> str:
        instance = read_instance_type()
        lnc = logical_core_setting(os.environ, instance_family(instance or ""))
        return neuron_device_kind(instance, int(_torch_neuron().device_count()), lnc)

    def activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        return [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]

    def synchronize(self) -> None:
        _torch_neuron().synchronize()

    def prepare(self) -> None:
        if self._plan is None:
            self._setup()
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix=f"neuronperf-neuron-{os.getpid()}-"))

    @property
    def profile_dir(self) -> Path | None:
        return self._root

    @property
    def built(self) -> BuiltConfig | None:
        """The NeuronConfig of the latest profiler session and what went into it."""
        return self._built

    @property
    def runtime_plan(self) -> RuntimePlan | None:
        return self._plan

    def profiler_kwargs(self) -> dict[str, Any]:
        """The tutorial's profiler arguments: a NeuronConfig with a fresh output directory
        per profiler session, and ``NeuronProfiler(cfg).export_trace`` placing the framework
        trace beside Neuron's system trace."""
        from torch_neuronx.profiling import NeuronConfig, NeuronProfiler, ProfileMode

        built = build_config(NeuronConfig, ProfileMode, self._options, self._new_session())
        self._built = built
        return {
            "experimental_config": built.config,
            "on_trace_ready": NeuronProfiler(built.config).export_trace,
        }

    # TorchNeuron registers as PrivateUse1: its memory records carry that device type.
    memory_device = "privateuse1"

    def memory_probe(self) -> MemoryProbe | str:
        return accelerator_probe(self.memory_device)

    def _new_session(self) -> Path:
        """The output directory of the profiler session about to start."""
        self.prepare()
        assert self._root is not None
        session = self._root / f"session-{next(self._sessions):04d}"
        session.mkdir(parents=True, exist_ok=True)
        self._session = session
        return session

    def analyze(
        self, prof: Any, regions: Sequence[Sequence[str]], windows: Mapping[str, Window]
    ) -> list[RegionRounds]:
        flat = [m for markers in regions for m in markers]
        backfill = dict(zip(flat, backfill_rounds(prof.events(), flat), strict=True))
        runtime, failure = self._runtime(flat, windows)
        tried = Tried(
            backfill_passed=self._built is not None and self._built.backfill,
            runtime=self._plan.reason if self._plan is not None else "off",
        )
        self.last = []
        out = []
        for markers in regions:
            found = [runtime[m] for m in markers if m in runtime]
            combined = combine(
                _region_name(markers[0]),
                [backfill[m] for m in markers],
                found if len(found) == len(markers) else None,
                tried,
                labels=[_round_label(m) for m in markers],
                # Nested regions get no host window of their own (docs/neuron.md).
                runtime_failure=failure or "no host window: a nested region",
            )
            self.last.append(combined)
            out.append(RegionRounds(combined.rounds, combined.notes))
        self._add_memory(prof, flat, out)
        return out

    def _add_memory(self, prof: Any, flat: Sequence[str], out: Sequence[RegionRounds]) -> None:
        """The profiler's device memory records per round, where memory was profiled
        (the runner puts the allocator's counters over them where torch.accelerator has
        them)."""
        records = self.memory_records(prof)
        if records is None:
            return
        from ...trace.analysis import markers_memory
        from ...trace.events import events_from_function_events

        events = events_from_function_events(prof.events())
        rounds = iter(markers_memory(events, flat, records, self.memory_device))
        for region in out:
            for r in region.rounds:
                r.memory = next(rounds)

    def _runtime(
        self, markers: Sequence[str], windows: Mapping[str, Window]
    ) -> tuple[dict[str, RoundExecutions], str]:
        """Each timed round's executions from this session's runtime trace, or ({}, why
        not). A trace that contradicts the rounds (a straddling execution) raises."""
        from .explorer import ingest_all, session_dirs
        from .runtime import RuntimeTraceError, executions, per_window, read_exec_rows

        timed = [m for m in markers if m in windows]
        if self._plan is None or not self._plan.enabled:
            return {}, self._plan.reason if self._plan is not None else "off"
        if not timed or self._session is None or self._root is None:
            return {}, "no host window"
        explorer = find_explorer()
        sessions = session_dirs(self._session, os.getpid())
        if explorer is None or not sessions:
            what = "no neuron-explorer" if explorer is None else "no ntrace.pb / trace_info.pb"
            return {}, f"{what} under {self._session}"
        try:
            files = ingest_all(explorer, sessions, self._root / "explorer-data", self._session.name)
            execs = executions(read_exec_rows(files), pid=os.getpid())
        except RuntimeTraceError as exc:
            return {}, str(exc)
        try:
            rounds = per_window(
                execs, [windows[m] for m in timed], [_round_label(m) for m in timed]
            )
        except RuntimeTraceError as exc:
            raise NeuronDeviceTimeError(
                f"neuron: region {_region_name(timed[0])!r}: {exc}"
            ) from None
        return dict(zip(timed, rounds, strict=True)), ""

    def versions(self) -> dict[str, str]:
        out = super().versions()
        out["torch_neuronx"] = _neuronx_version()
        if self._built is not None:
            out["neuron_config"] = config_summary(self._options, self._built)
            if self._built.refused:
                out["neuron_config_refused"] = ", ".join(self._built.refused)
        if self._plan is not None:
            out["neuron_runtime_trace"] = self._plan.reason
        return out


def _region_name(marker: str) -> str:
    parsed = parse_marker(marker)
    return parsed.region if parsed is not None else marker


def _round_label(marker: str) -> str:
    parsed = parse_marker(marker)
    if parsed is None or parsed.round is None:
        return "the region"
    return f"round {parsed.round}"


def _neuronx_version() -> str:
    try:
        return importlib.metadata.version("torch-neuronx")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _torch_neuron() -> Any:
    """``torch.neuron``, which torch-neuronx registers at import (unknown to torch's stubs)."""
    import torch

    module: Any = torch
    return module.neuron
