"""The neuron backend's analysis through the real Runner, on a real CPU profile.

What these tests stand on: everything but the device is real. The Runner times each
profiled round's host window and hands the profile to ``NeuronBackend.analyze``, which reads
the backfill from torch's FunctionEvents (on CPU there is none, as on a torch-neuronx
without ``correlate_device_time``) and the runtime trace through ``neuron-explorer``. Two
things stand in for what is not installable here: ``HostNeuron`` runs the backend on the
host (CPU activity, no synchronize, no torch-neuronx config), and a stand-in
``neuron-explorer`` script, given the documented flags, writes the documented
SystemProfileEvents table from rows the measured function logged as its "executions" (its
own start and end, as ``time.time_ns()``). So the windows, the ingest command, the Parquet
round trip, the per-round attribution and the loud failures run as they would on Trainium;
whether real Neuron output looks like this is checked there by benchmarks/verify_neuron.py.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
import shutil
import stat
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from test_neuron_runtime import SCHEMA

from pytest_neuronperf.backends import BackendMisconfigured
from pytest_neuronperf.backends.neuron import NeuronBackend
from pytest_neuronperf.backends.neuron.config import RuntimePlan
from pytest_neuronperf.backends.neuron.sources import NeuronDeviceTimeError
from pytest_neuronperf.markers import marker_name
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.settings import defaults

ROWS_VARIABLE = "NEURONPERF_TEST_EXECUTIONS"

STAND_IN = """#!{python}
# Stand-in for neuron-explorer view --ingest-only: documented flags in, documented table out.
import json, os, pathlib, sys
import pyarrow as pa, pyarrow.parquet as pq
sys.path.insert(0, {tests!r})
from test_neuron_runtime import SCHEMA
args = sys.argv[1:]
assert args[:1] == ["view"] and "--ingest-only" in args, args
for flag in ("--ignore-instruction-trace", "--ignore-dma-trace", "--ignore-event-trace"):
    assert flag in args, flag
session, data, name = (args[args.index(f) + 1] for f in ("-d", "--data-path", "--display-name"))
assert (pathlib.Path(session) / "ntrace.pb").is_file(), session
rows = [json.loads(line) for line in open(os.environ["{variable}"])]
out = pathlib.Path(data) / "profiles" / "global" / (name + "@latest")
out.mkdir(parents=True)
pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), out / "SystemProfileEvents.parquet")
"""


class HostNeuron(NeuronBackend):
    """The neuron backend with the host as its device (see the module docstring)."""

    def __init__(self, root: Path, plan: RuntimePlan) -> None:
        super().__init__(root)
        self.plan = plan

    def _setup(self) -> None:
        self._plan = self.plan

    def device_kind(self) -> str:
        return "neuron:host:1nc:lnc1"

    def activities(self) -> list[Any]:
        return [torch.profiler.ProfilerActivity.CPU]

    def synchronize(self) -> None:
        pass

    def profiler_kwargs(self) -> dict[str, Any]:
        # Where the Neuron profiler would write this session's runtime trace.
        session = self._new_session() / f"i-0abc_pid_{os.getpid()}" / "1700000000"
        session.mkdir(parents=True)
        (session / "ntrace.pb").write_bytes(b"")
        return {}

    def versions(self) -> dict[str, str]:
        return {"torch": str(torch.__version__), "backend": self.name}


class Device:
    """A function whose every call logs itself as one execution, LNC=2 style (a row per
    physical core sharing a flow id)."""

    def __init__(self, log: Path, lead_ns: int = 0, models: tuple[int, ...] = (7,)) -> None:
        self.log, self.lead_ns, self.models = log, lead_ns, models
        self.calls: list[tuple[int, int]] = []

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        t0 = time.time_ns()
        y = (x * 2.0).sum()
        t1 = time.time_ns()
        n = len(self.calls)
        self.calls.append((t0, t1))
        model = self.models[n % len(self.models)]
        with self.log.open("a") as f:
            for pcore, (a, b) in enumerate([(t0 - self.lead_ns, t1 - 1), (t0 + 1, t1)]):
                f.write(json.dumps(_row(a, b, str(n), model, pcore)) + "\n")
        return y


def _row(start: int, end: int, flow: str, model: int, pcore: int) -> dict[str, Any]:
    names = [field.name for field in SCHEMA]
    row: dict[str, Any] = dict.fromkeys(names)
    row.update(
        name="nc_exec_running",
        start_ts=start,
        end_ts=end,
        duration_ns=end - start,
        trace_event_source="neuron_hw",
        process_id=os.getpid(),
        nc_idx=0,
        pcore_idx=pcore,
        flow_id=[flow],
        extra_attributes_json=json.dumps({"model_id": model}),
    )
    return row


@pytest.fixture
def explorer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "neuron-explorer"
    tests = str(Path(__file__).parent)
    tool.write_text(STAND_IN.format(python=sys.executable, tests=tests, variable=ROWS_VARIABLE))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "executions.jsonl"
    monkeypatch.setenv(ROWS_VARIABLE, str(log))
    return log


ON = RuntimePlan(True, "on (stand-in neuron-explorer)")
ROUNDS = 4


def measure(backend: NeuronBackend, fn: Device) -> Measurement:
    runner = Runner(backend, count_work=False, window=0.0)
    _, m = runner.measure_callable(
        fn, (torch.ones(64),), {}, test_id="t", name="device", warmup=1, rounds=ROUNDS
    )
    return m


@pytest.mark.slow
def test_runtime_trace_is_the_device_time_without_the_backfill(
    tmp_path: Path, explorer: Path
) -> None:
    fn = Device(explorer)
    m = measure(HostNeuron(tmp_path / "neuron", ON), fn)
    # The profiled rounds follow warm-up and the prime round, and the host timing (one call
    # a round, no window) comes after them; each logged one execution spanning its own
    # [start, end].
    expected = [(b - a) / 1e3 for a, b in fn.calls[-2 * ROUNDS : -ROUNDS]]
    assert m.device_us.samples == pytest.approx(expected, abs=1e-9)
    assert m.kernels == 1 and m.kernel_counts == {"model 7": 1}
    assert m.device_notes[0].startswith("device time: the Neuron Runtime trace")
    assert m.device_notes[1] == "device executions a round: model 7 ×1"


@pytest.mark.slow
def test_no_device_time_from_either_source_fails_the_measurement(tmp_path: Path) -> None:
    off = RuntimePlan(False, "off: needs pyarrow (pip install 'pytest-neuronperf[neuron]')")
    with pytest.raises(NeuronDeviceTimeError, match="no device time from either source") as err:
        measure(HostNeuron(tmp_path / "neuron", off), Device(tmp_path / "log.jsonl"))
    assert "Runtime trace: not read (off: needs pyarrow" in str(err.value)


@pytest.mark.slow
def test_execution_straddling_a_round_fails_the_measurement(tmp_path: Path, explorer: Path) -> None:
    # Each execution "began" 50 ms before its call: before its round's window opened.
    with pytest.raises(NeuronDeviceTimeError, match="round 0: an execution of model 7"):
        measure(HostNeuron(tmp_path / "neuron", ON), Device(explorer, lead_ns=50_000_000))


@pytest.mark.slow
def test_rounds_running_other_models_fail_the_measurement(tmp_path: Path, explorer: Path) -> None:
    with pytest.raises(NeuronDeviceTimeError, match="rounds differ in which models ran"):
        measure(HostNeuron(tmp_path / "neuron", ON), Device(explorer, models=(7, 8)))


@pytest.mark.slow
def test_with_region_gets_its_window_too(tmp_path: Path, explorer: Path) -> None:
    fn = Device(explorer)
    runner = Runner(HostNeuron(tmp_path / "neuron", ON), count_work=False, window=0.0)
    done: list[Measurement] = []
    with runner.region("block", test_id="t", on_done=done.append):
        fn(torch.ones(64))
    [m] = done
    (a, b) = fn.calls[-1]
    assert m.device_us.samples == pytest.approx([(b - a) / 1e3], abs=1e-9)
    assert m.device_notes[0].startswith("device time: the Neuron Runtime trace")


# --- the backend's own code, with torch-neuronx stood in for: a module that carries the
# documented NeuronConfig signature (test_neuron_config.py's Tutorial / Documented classes)
# and torch.neuron's device queries. Fast: no measurement, no subprocess but the failing
# explorer below.


class Stack:
    """What the fake torch-neuronx and torch.neuron were asked."""

    def __init__(self) -> None:
        self.synchronized = 0
        self.available = True
        self.exported: list[str] = []

    def is_available(self) -> bool:
        return self.available

    def device_count(self) -> int:
        return 2

    def synchronize(self) -> None:
        self.synchronized += 1


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Stack:
    from test_neuron_config import ProfileMode, Tutorial

    state = Stack()

    class NeuronProfiler:
        def __init__(self, config: Any) -> None:
            self.config = config

        def export_trace(self, prof: Any) -> None:
            state.exported.append(self.config.kwargs["profile_output_dir"])

    package = types.ModuleType("torch_neuronx")
    package.__spec__ = importlib.machinery.ModuleSpec("torch_neuronx", None)
    profiling = types.ModuleType("torch_neuronx.profiling")
    profiling.__dict__.update(
        NeuronConfig=Tutorial, ProfileMode=ProfileMode, NeuronProfiler=NeuronProfiler
    )
    package.__dict__["profiling"] = profiling
    monkeypatch.setitem(sys.modules, "torch_neuronx", package)
    monkeypatch.setitem(sys.modules, "torch_neuronx.profiling", profiling)
    monkeypatch.setattr(torch._C, "_get_privateuse1_backend_name", lambda: "neuron")
    monkeypatch.setattr(torch, "neuron", state, raising=False)
    monkeypatch.delenv("NEURON_RT_INSPECT_ENABLE", raising=False)
    monkeypatch.delenv("NEURON_LOGICAL_NC_CONFIG", raising=False)
    return state


def configured(tmp_path: Path) -> NeuronBackend:
    backend = NeuronBackend(tmp_path / "neuron")
    backend.configure(defaults())
    return backend


def test_a_registered_native_backend_with_a_device_is_available(stack: Stack) -> None:
    assert NeuronBackend().unavailable_reason() is None
    stack.available = False
    assert NeuronBackend().unavailable_reason() == (
        "torch.neuron reports no Neuron device on this machine"
    )


def test_the_device_is_named_for_its_instance_cores_and_logical_core_setting(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_neuronperf.backends.neuron.backend as module

    monkeypatch.setattr(module, "read_instance_type", lambda: "trn2.48xlarge")
    backend = NeuronBackend()
    assert backend.device_kind() == "neuron:trn2:2nc:lnc2"
    assert backend.activities() == [
        torch.profiler.ProfilerActivity.CPU,
        torch.profiler.ProfilerActivity.PrivateUse1,
    ]
    backend.synchronize()
    assert stack.synchronized == 1


def test_configure_builds_the_tutorials_config_and_records_it(
    stack: Stack, tmp_path: Path, explorer: Path
) -> None:
    backend = configured(tmp_path)
    assert backend.profile_dir == tmp_path / "neuron"
    assert backend.built is not None and backend.built.backfill
    assert backend.runtime_plan is not None and backend.runtime_plan.enabled
    kwargs = backend.profiler_kwargs()
    session = tmp_path / "neuron" / "session-0000"
    assert session.is_dir() and kwargs["experimental_config"].kwargs["profile_output_dir"] == (
        str(session)
    )
    kwargs["on_trace_ready"](None)
    assert stack.exported == [str(session)]
    versions = backend.versions()
    assert versions["torch_neuronx"] == "?"  # the stand-in has no distribution metadata
    assert versions["neuron_config"] == (
        "modes=DEVICE,RUNTIME; profile_output_dir=<per session>; correlate_device_time=True"
    )
    assert versions["neuron_runtime_trace"].startswith("on (")
    assert "neuron_config_refused" not in versions


def test_a_config_without_the_backfill_parameter_is_recorded_as_refused(
    stack: Stack, tmp_path: Path, explorer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_neuron_config import Documented

    monkeypatch.setattr(sys.modules["torch_neuronx.profiling"], "NeuronConfig", Documented)
    backend = configured(tmp_path)
    assert backend.built is not None and not backend.built.backfill
    assert backend.versions()["neuron_config_refused"] == "correlate_device_time"


def test_environment_capture_is_a_misconfiguration(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEURON_RT_INSPECT_ENABLE", "1")
    with pytest.raises(BackendMisconfigured, match="unset NEURON_RT_INSPECT_ENABLE"):
        configured(tmp_path)


def test_prepare_without_configure_sets_up_once_in_a_directory_of_its_own(
    stack: Stack, explorer: Path
) -> None:
    backend = NeuronBackend()
    backend.prepare()
    root = backend.profile_dir
    assert root is not None and root.is_dir() and f"-{os.getpid()}-" in root.name
    backend.prepare()
    assert backend.profile_dir == root
    root.rmdir()


def cpu_profile(markers: list[str]) -> tuple[Any, dict[str, tuple[int, int]]]:
    """A real CPU profile with one round per marker, and each round's host window."""
    windows = {}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for marker in markers:
            t0 = time.time_ns()
            with torch.profiler.record_function(marker):
                torch.ones(8).sum()
            windows[marker] = (t0, time.time_ns())
    return prof, windows


MARKERS = [marker_name(0, "r", i) for i in range(2)]


def why_unread(backend: NeuronBackend, windows: bool = True) -> str:
    """Why the runtime trace was not read, as the error for no device time says it."""
    prof, timed = cpu_profile(MARKERS)
    with pytest.raises(NeuronDeviceTimeError, match="no device time from either source") as err:
        backend.analyze(prof, [MARKERS], timed if windows else {})
    found = re.search(r"not read \((.*?)\)", str(err.value))
    assert found is not None, str(err.value)
    return found.group(1)


def test_a_runtime_trace_not_read_says_why(
    stack: Stack, tmp_path: Path, explorer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_neuron_config import Documented

    # No backfill, so the runtime trace is the device time and every reason it is not
    # read shows in the error.
    monkeypatch.setattr(sys.modules["torch_neuronx.profiling"], "NeuronConfig", Documented)
    backend = configured(tmp_path)
    assert why_unread(backend) == "no host window", "no profiler session yet"
    backend.profiler_kwargs()
    session = tmp_path / "neuron" / "session-0000"
    assert why_unread(backend, windows=False) == "no host window"
    assert why_unread(backend) == f"no ntrace.pb / trace_info.pb under {session}"
    (session / f"i-0abc_pid_{os.getpid()}").mkdir()
    (session / f"i-0abc_pid_{os.getpid()}" / "ntrace.pb").write_bytes(b"")
    # The explorer fails: its last line of output is the reason.
    tool = Path(shutil.which("neuron-explorer") or "")
    tool.write_text("#!/bin/sh\necho 'cannot open ntrace.pb' >&2\nexit 3\n")
    assert why_unread(backend).endswith("--ingest-only exited 3: cannot open ntrace.pb")
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr("pytest_neuronperf.backends.neuron.backend.find_explorer", lambda: None)
    assert why_unread(backend) == f"no neuron-explorer under {session}"
