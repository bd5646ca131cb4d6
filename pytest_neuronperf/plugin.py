"""pytest's entry point: options, settings, markers, the fixture. What happens in a session
lives in session/: one Session per run, made at configure (session/lazy.py), whose measuring
part (session/roles.py) starts when this run turns out to measure."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .gate.marker import MARKER_HELP
from .session.collect import read_budgets, uses_neuronperf
from .session.lazy import SESSION, Session
from .session.logs import keep_torch_trace_out
from .settings import SPECS, SettingError, Settings, resolve
from .work.peaks import Peaks, PeaksError, parse_peaks

if TYPE_CHECKING:
    from .fixture import NeuronProfile


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("neuronperf", "accelerator performance budgets (pytest-neuronperf)")
    for spec in SPECS:
        group.addoption(
            spec.cli,
            action="store_true" if spec.is_flag else "store",
            default=None,
            dest=f"neuronperf_{spec.field}",
            help=f"{spec.help} [env {spec.env}, ini {spec.ini}]",
        )
        parser.addini(spec.ini, help=spec.help, default=None)
    # A table, one line per device kind: an ini key only (no option or variable fits it).
    parser.addini(
        "neuron_profile_peaks",
        type="linelist",
        default=[],
        help="roofline peaks per device kind, one 'DEVICE_KIND = FLOP_PER_S, BYTES_PER_S' "
        "line each (fnmatch patterns); overrides the built-in table and CPU calibration",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    # The run's one session; what measures loads on first need (session/lazy.py).
    session = config.stash[SESSION] = Session(config, *_read_settings(config))
    if session.settings.enabled or session.settings.backend != "auto":
        # From the start: it loads the baselines, watches collection, and an explicitly
        # named backend that cannot run is one usage error now.
        session.measuring()


def pytest_sessionstart(session: pytest.Session) -> None:
    # pytest's log handlers exist by now (its logging plugin registers at configure).
    keep_torch_trace_out(session.config)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    errors = read_budgets(items)
    if errors:
        raise pytest.UsageError(
            "neuronperf: invalid neuron_budget marker\n  " + "\n  ".join(errors)
        )
    if uses_neuronperf(items):
        config.stash[SESSION].measuring()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Any) -> None:
    # An xdist controller: its workers' measurements come to it.
    config.stash[SESSION].measuring()


@pytest.fixture
def neuron_profile(request: pytest.FixtureRequest) -> Iterator[NeuronProfile]:
    """Measure a callable, ``neuron_profile(fn, *args)``, or a block,
    ``with neuron_profile.region(name):``. See pytest-neuronperf's README."""
    yield request.config.stash[SESSION].measuring().profile_for(request)


def _read_settings(config: pytest.Config) -> tuple[Settings, tuple[tuple[str, Peaks], ...]]:
    ini_source = str(config.inipath) if config.inipath else "ini file"
    try:
        settings = resolve(
            {s.field: config.getoption(f"neuronperf_{s.field}") for s in SPECS},
            {s.ini: config.getini(s.ini) for s in SPECS},
            ini_source=ini_source,
        )
        peaks = parse_peaks(
            config.getini("neuron_profile_peaks"), f"{ini_source}: neuron_profile_peaks"
        )
    except (SettingError, PeaksError) as exc:
        raise pytest.UsageError(f"neuronperf: {exc}") from None
    _check_trace_dir(settings.trace_dir)
    return settings, peaks


def _check_trace_dir(trace_dir: Path | None) -> None:
    """A trace folder that is a file, or lies below one, fails every test: say it once."""
    if trace_dir is None:
        return
    blocking = next((p for p in (trace_dir, *trace_dir.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise pytest.UsageError(
            f"neuronperf: --neuron-profile-trace-dir={trace_dir}: {blocking} is a file, not a "
            "directory; name a directory (it is made when missing)"
        )
