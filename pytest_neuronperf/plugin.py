"""pytest wiring only: options, marker, fixture, verdicts in the report hook, the summary.

Everything that measures, analyses or formats lives in its own module; this one decides
when to call it. State sits on one plugin object registered with the plugin manager.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .budget import MARKER_HELP, Budget, BudgetError, budget_from_marker, check
from .settings import SPECS, SettingError, Settings, resolve

if TYPE_CHECKING:
    # Imported where used: a suite that never measures should not pay for loading them.
    from .fixture import NeuronProfile
    from .measure import Runner
    from .model import Measurement, Record

PLUGIN_NAME = "neuronperf-session"
PROPERTY = "neuronperf"

budgets_key = pytest.StashKey[tuple[Budget, ...]]()
measurements_key = pytest.StashKey[list["Measurement"]]()
plugin_key = pytest.StashKey["NeuronPerfPlugin"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("neuronperf", "accelerator performance budgets (pytest-neuronperf)")
    for spec in SPECS:
        env_help = f" [env {spec.env}, ini {spec.ini}]"
        if spec.is_flag:
            group.addoption(
                spec.cli,
                action="store_true",
                default=None,
                dest=f"neuronperf_{spec.field}",
                help=spec.help + env_help,
            )
        else:
            group.addoption(
                spec.cli,
                action="store",
                default=None,
                dest=f"neuronperf_{spec.field}",
                help=spec.help + env_help,
            )
        parser.addini(spec.ini, help=spec.help, default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    ini_source = str(config.inipath) if config.inipath else "ini file"
    try:
        settings = resolve(
            {s.field: config.getoption(f"neuronperf_{s.field}") for s in SPECS},
            {s.ini: config.getini(s.ini) for s in SPECS},
            ini_source=ini_source,
        )
    except SettingError as exc:
        raise pytest.UsageError(f"neuronperf: {exc}") from None
    plugin = NeuronPerfPlugin(config, settings)
    config.stash[plugin_key] = plugin
    config.pluginmanager.register(plugin, PLUGIN_NAME)


class NeuronPerfPlugin:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self._runner: Runner | None = None
        self.backend_note = ""
        self.records: list[Record] = []
        self.is_worker = hasattr(config, "workerinput")
        if settings.backend != "auto":
            # An explicitly named backend that cannot run is one usage error now, not a
            # traceback in every test later.
            self._make_runner()

    def _make_runner(self) -> Runner:
        if self._runner is None:
            from . import backends
            from .measure import Runner

            try:
                backend, self.backend_note = backends.select(self.settings.backend)
            except backends.BackendUnavailable as exc:
                raise pytest.UsageError(
                    f"neuronperf: {exc}. Use --neuron-profile-backend=auto or cpu to run here."
                ) from None
            self._runner = Runner(backend, trace_dir=self.settings.trace_dir)
        return self._runner

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        if not self.settings.enabled:
            return None
        s = self.settings
        return f"neuronperf: backend={s.backend} rounds={s.rounds} warmup={s.warmup}"

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        errors = []
        for item in items:
            marks = list(item.iter_markers("neuron_budget"))
            if not marks:
                continue
            try:
                item.stash[budgets_key] = tuple(
                    budget_from_marker(m.args, dict(m.kwargs), item.nodeid) for m in marks
                )
            except BudgetError as exc:
                errors.append(str(exc))
                continue
            if "neuron_profile" not in getattr(item, "fixturenames", ()):
                errors.append(
                    f"{item.nodeid}: has a neuron_budget marker but does not use the "
                    "neuron_profile fixture, so the budget could never be checked; add the "
                    "fixture argument or remove the marker"
                )
        if errors:
            raise pytest.UsageError(
                "neuronperf: invalid neuron_budget marker\n  " + "\n  ".join(errors)
            )

    def fixture_for(self, item: pytest.Item) -> NeuronProfile:
        enabled = self.settings.enabled or budgets_key in item.stash
        from .fixture import NeuronProfile

        profile = NeuronProfile(
            test_id=item.nodeid,
            enabled=enabled,
            runner=self._make_runner,
            rounds=self.settings.rounds,
            warmup=self.settings.warmup,
        )
        item.stash[measurements_key] = profile.measurements
        return profile

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when != "call" or measurements_key not in item.stash:
            return report
        from .model import Record
        from .report import measurement_detail

        measurements = item.stash[measurements_key]
        budgets = item.stash.get(budgets_key, ())
        # Only a test that ran to the end can be judged: a test that raised may not have
        # reached its measurements, and its own failure is the news.
        violations = [v for b in budgets for v in check(b, measurements)] if report.passed else []
        if violations:
            text = "\n".join(v.sentence for v in violations)
            shown = {v.region for v in violations}
            details = [measurement_detail(m) for m in measurements if m.region in shown]
            report.outcome = "failed"
            report.longrepr = text + ("\n\n" + "\n\n".join(details) if details else "")
        for m in measurements:
            mine = [b for b in budgets if b.region in (None, m.region)]
            failed = [v.sentence for v in violations if v.region == m.region]
            status = (
                "over budget"
                if failed
                else "test failed"
                if not report.passed
                else "ok"
                if mine
                else "measured"
            )
            record = Record(m, "; ".join(b.describe() for b in mine), status, tuple(failed))
            report.user_properties.append((PROPERTY, json.dumps(record.to_dict(), sort_keys=True)))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Fires on the controller for reports coming from xdist workers as well, so the one
        # table is built from plain data whichever process measured.
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == PROPERTY:
                from .model import Record

                self.records.append(Record.from_dict(json.loads(str(value))))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.records:
            return
        from .report import header_line, measurement_detail, summary_table

        if not self.settings.enabled:
            over = [r for r in self.records if r.status == "over budget"]
            terminalreporter.write_line(
                f"neuronperf: {len(self.records)} budgeted measurements, {len(over)} over budget "
                "(run with --neuron-profile for the report)"
            )
            return
        terminalreporter.section("neuronperf")
        terminalreporter.write_line(header_line(self.records, self.backend_note))
        terminalreporter.write_line(summary_table(self.records))
        if self.settings.details or self.config.get_verbosity() > 0:
            for r in self.records:
                terminalreporter.write_line("")
                terminalreporter.write_line(f"{r.measurement.test_id}")
                terminalreporter.write_line(measurement_detail(r.measurement))


@pytest.fixture
def neuron_profile(request: pytest.FixtureRequest) -> Iterator[NeuronProfile]:
    """Measure a callable, ``neuron_profile(fn, *args)``, or a block,
    ``with neuron_profile.region(name):``. See pytest-neuronperf's README."""
    plugin = request.config.stash[plugin_key]
    yield plugin.fixture_for(request.node)
