"""pytest wiring only: options, marker, fixture, verdicts in the report hook, the summary.

Everything that measures, analyses or formats lives in its own module; this one decides
when to call it. State sits on one plugin object registered with the plugin manager.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .gate.budget import MARKER_HELP, Budget, BudgetError, budget_from_marker, check
from .settings import SPECS, SettingError, Settings, resolve

if TYPE_CHECKING:
    # Imported where used: a suite that never measures should not pay for loading them.
    from .baselines.store import Baselines, Key
    from .baselines.update import UpdatePlan
    from .fixture import NeuronProfile
    from .gate.compare import Comparison
    from .measure.runner import Runner
    from .model import Measurement, Record
    from .work.peaks import Peaks

PLUGIN_NAME = "neuronperf-session"
PROPERTY = "neuronperf"
# workeroutput key: the test ids a worker collected, for the controller's stale check.
COLLECTED = "neuronperf_collected"
# Exit statuses after which the run's measurements are trusted enough to be written: a
# run that was interrupted, crashed or misconfigured leaves the previous baselines alone.
WRITE_ON_EXIT = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)

budgets_key = pytest.StashKey[tuple[Budget, ...]]()
measurements_key = pytest.StashKey[list["Measurement"]]()
plugin_key = pytest.StashKey["NeuronPerfPlugin"]()
peaks_key = pytest.StashKey[tuple[tuple[str, "Peaks"], ...]]()


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
    ini_source = str(config.inipath) if config.inipath else "ini file"
    try:
        settings = resolve(
            {s.field: config.getoption(f"neuronperf_{s.field}") for s in SPECS},
            {s.ini: config.getini(s.ini) for s in SPECS},
            ini_source=ini_source,
        )
    except SettingError as exc:
        raise pytest.UsageError(f"neuronperf: {exc}") from None
    from .work.peaks import PeaksError, parse_peaks

    try:
        config.stash[peaks_key] = parse_peaks(
            config.getini("neuron_profile_peaks"), f"{ini_source}: neuron_profile_peaks"
        )
    except PeaksError as exc:
        raise pytest.UsageError(f"neuronperf: {exc}") from None
    plugin = NeuronPerfPlugin(config, settings)
    config.stash[plugin_key] = plugin
    config.pluginmanager.register(plugin, PLUGIN_NAME)
    if config.pluginmanager.hasplugin("xdist"):
        # xdist's hooks exist only with xdist installed; registering them without it
        # would be an unknown-hook error.
        config.pluginmanager.register(XdistHooks(plugin), PLUGIN_NAME + "-xdist")


class NeuronPerfPlugin:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self._runner: Runner | None = None
        self.backend_note = ""
        self.records: list[Record] = []
        self.is_worker = hasattr(config, "workerinput")
        self.baselines: Baselines | None = None
        # Test ids known to exist (collected, selected or not) and modules collected in
        # full: what the stale check may rely on.
        self.collected: set[str] = set()
        self.complete_modules: set[str] = set()
        self.deselected: set[str] = set()
        self.worker_crashed = False
        self.plan: UpdatePlan | None = None
        self.stale: list[Key] = []
        self.not_written = ""
        if settings.backend != "auto":
            # An explicitly named backend that cannot run is one usage error now, not a
            # traceback in every test later.
            self._make_runner()

    def _make_runner(self) -> Runner:
        if self._runner is None:
            from . import backends
            from .measure.runner import Runner
            from .measure.window import RECORD_WINDOWS

            try:
                backend, self.backend_note = backends.select(self.settings.backend)
            except backends.BackendUnavailable as exc:
                raise pytest.UsageError(
                    f"neuronperf: {exc}. Use --neuron-profile-backend=auto or cpu to run here."
                ) from None
            # xdist workers' terminal output goes nowhere: no progress lines there.
            progress = None if self.is_worker else self._write_progress
            from .work.calibrate import cpu_peaks
            from .work.peaks import PeakTable

            overrides: tuple[tuple[str, Peaks], ...] = self.config.stash.get(peaks_key, ())
            peaks = PeakTable(overrides, calibrate=cpu_peaks)
            self._runner = Runner(
                backend,
                trace_dir=self.settings.trace_dir,
                progress=progress,
                peaks=peaks,
                count_work=self.settings.count_work,
                reference=self.settings.reference,
                window=self.settings.window,
                threads=self.settings.threads,
                # A baseline is one recording that every later run is judged against.
                record_windows=RECORD_WINDOWS if self.settings.update else 1,
            )
        return self._runner

    def _write_progress(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:
            return
        if capture is None:
            reporter.write_line(line)
            return
        # Output capture holds file descriptor 1 during a test: step outside it briefly.
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)

    @property
    def baseline_dir(self) -> Path:
        from .baselines.store import DEFAULT_DIR

        # rootpath, not the invocation directory: the same files whatever the cwd.
        return self.config.rootpath / (self.settings.profile_dir or Path(DEFAULT_DIR))

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.settings.enabled:
            return
        from .baselines.store import BaselineError, load

        kind = self._make_runner().environment["device_kind"]
        try:
            # On the controller this runs before xdist starts workers: a bad file is one
            # usage error, not one per worker.
            self.baselines = load(self.baseline_dir, kind, allow_damaged=self.settings.update)
        except BaselineError as exc:
            raise pytest.UsageError(f"neuronperf: baseline file {exc}") from None

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        if not self.settings.enabled:
            return None
        s = self.settings
        return (
            f"neuronperf: backend={s.backend} rounds={s.rounds} warmup={s.warmup} "
            f"window={s.window:g}s threads={s.threads}"
        )

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

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.update(item.nodeid for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.settings.enabled:
            return  # the stale check is for baseline runs; plain runs pay nothing for it
        from .baselines.update import partially_selected

        self.collected = {item.nodeid for item in session.items} | self.deselected
        partial = partially_selected(
            self.config.args, self.config.invocation_params.dir, self.config.rootpath
        )
        self.complete_modules = {m for m in map(_module, self.collected) if m not in partial}
        if self.is_worker:
            output: dict[str, Any] = self.config.workeroutput  # type: ignore[attr-defined]
            output[COLLECTED] = json.dumps(
                {"ids": sorted(self.collected), "modules": sorted(self.complete_modules)}
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
            recheck=lambda m: self._host_regression(item, m),
        )
        item.stash[measurements_key] = profile.measurements
        return profile

    def _host_regression(self, item: pytest.Item, m: Measurement) -> str | None:
        """How the gated host time regressed against the baseline, for the runner to confirm
        on a second look; None when it did not, or when nothing will be judged."""
        if self.settings.update:
            return None
        c = self._compare(m, item.stash.get(budgets_key, ()))
        if c is None or c.gated != "host_us" or c.host is None or c.host.verdict != "regressed":
            return None
        return c.host.percent()

    def _trace_note(self, item: pytest.Item, regions: set[str]) -> str:
        """Where the failing regions' traces are, with --neuron-profile-trace-dir."""
        return self._runner.trace_note(item.nodeid, regions) if self._runner else ""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when != "call" or measurements_key not in item.stash:
            return report
        from .model import Record
        from .reports.terminal import measurement_detail

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
            report.longrepr += self._trace_note(item, shown)
        comparisons = {m.region: self._compare(m, budgets) for m in measurements}
        baseline_failures = [
            (m, c) for m in measurements if (c := comparisons[m.region]) and c.failures
        ]
        # The status column tells the budget's story; the baseline column tells its own.
        passed_own_terms = report.passed
        if baseline_failures and report.passed and not self.settings.update:
            text = "\n".join(f for _, c in baseline_failures for f in c.failures)
            notes = [n for _, c in baseline_failures for n in c.notes]
            details = [measurement_detail(m) for m, _ in baseline_failures]
            report.outcome = "failed"
            report.longrepr = "\n\n".join([text, *(["\n".join(notes)] if notes else []), *details])
            report.longrepr += self._trace_note(item, {m.region for m, _ in baseline_failures})
        for m in measurements:
            mine = [b for b in budgets if b.region in (None, m.region)]
            failed = [v.sentence for v in violations if v.region == m.region]
            status = (
                "over budget"
                if failed
                else "test failed"
                if not passed_own_terms
                else "ok"
                if mine
                else "measured"
            )
            comparison = comparisons[m.region]
            record = Record(
                m,
                "; ".join(b.describe() for b in mine),
                status,
                tuple(failed),
                baseline=comparison.status if comparison else "",
                baseline_cell=comparison.cell() if comparison else "",
                baseline_notes=(comparison.failures + comparison.notes) if comparison else (),
                rewrite_baseline=comparison.needs_write if comparison else True,
            )
            report.user_properties.append((PROPERTY, json.dumps(record.to_dict(), sort_keys=True)))
            # JUnit XML takes its properties from the item (through the teardown report):
            # flat name/value pairs there are what CI dashboards can chart.
            item.user_properties.extend(junit_properties(record))
        return report

    def _compare(self, m: Measurement, budgets: tuple[Budget, ...]) -> Comparison | None:
        if self.baselines is None:
            return None
        from .gate.budget import tolerance_for
        from .gate.compare import compare

        return compare(
            self.baselines.get(m.test_id, m.region),
            m,
            tolerance=tolerance_for(budgets, m.region, self.settings.tolerance),
            compare_host=self.settings.compare_host,
            host_timed=self._make_runner().backend.mode == "host",
            strict=self.settings.strict,
            use_reference=self.settings.reference,
            where=str(self.baselines.path),
        )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Fires on the controller for reports coming from xdist workers as well, so the one
        # table is built from plain data whichever process measured.
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == PROPERTY:
                from .model import Record

                self.records.append(Record.from_dict(json.loads(str(value))))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # The controller (or a serial run) alone touches the files; workers only read.
        if self.is_worker:
            return
        self._finish_baselines(exitstatus)
        if self.records and self.settings.enabled:
            self.write_reports(int(exitstatus))

    def _finish_baselines(self, exitstatus: int) -> None:
        if self.baselines is None:
            return
        from .baselines.entry import Entry
        from .baselines.store import BaselineError, load, write
        from .baselines.update import plan_update, stale

        measured: dict[str, set[str]] = {}
        passed: dict[Key, tuple[Entry, bool]] = {}
        for r in self.records:
            m = r.measurement
            # Only tests that passed on their own terms say what a test now measures.
            if r.status in ("ok", "measured"):
                measured.setdefault(m.test_id, set()).add(m.region)
                passed[(m.test_id, m.region)] = (Entry.of(m), r.rewrite_baseline)
        root = self.config.rootpath
        self.stale = stale(
            self.baselines,
            collected=self.collected,
            complete_modules=self.complete_modules,
            file_exists=lambda module: (root / module).exists(),
            measured=measured,
        )
        if not self.settings.update:
            return
        if exitstatus not in WRITE_ON_EXIT or self.worker_crashed:
            why = "an xdist worker crashed" if self.worker_crashed else f"exit status {exitstatus}"
            self.not_written = f"the run did not finish cleanly ({why})"
            return
        if self.config.option.collectonly:
            self.not_written = "--collect-only ran no tests"
            return
        try:
            # Read again: the stored file, not the one this run started with, is what the
            # update applies to, so entries written meanwhile by another run survive.
            current = load(
                self.baselines.path.parent, self.baselines.device_kind, allow_damaged=True
            )
        except BaselineError as exc:
            self.not_written = str(exc)
            return
        self.plan = plan_update(current, passed, self.stale, pool=self.settings.pool)
        if self.plan.touches_file:
            write(self.plan.result)

    def write_reports(self, exitstatus: int) -> None:
        import os

        from .reports import html as report_html
        from .reports import json as report_json
        from .reports import markdown as report_markdown
        from .reports.json import write_atomic

        s, note = self.settings, self.backend_note
        root = self.config.rootpath
        if s.json_path is not None:
            doc = report_json.document(self.records, backend_note=note, exit_status=exitstatus)
            write_atomic(root / s.json_path, report_json.dumps(doc))
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if s.markdown_path is not None or summary:
            text = report_markdown.render(self.records, note)
            if s.markdown_path is not None:
                write_atomic(root / s.markdown_path, text)
            if summary:
                with open(summary, "a", encoding="utf-8") as fh:  # appended: other steps' too
                    fh.write(text)
        if s.html_path is not None:
            stored: dict[Key, tuple[Any, dict[str, int]]] = {}
            if self.baselines is not None:
                for r in self.records:
                    m = r.measurement
                    entry = self.baselines.get(m.test_id, m.region)
                    if entry is not None:
                        stored[(m.test_id, m.region)] = (entry.per_op, entry.op_counts)
            write_atomic(root / s.html_path, report_html.render(self.records, note, stored))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.records:
            return
        from .reports.fit import terminal_width, wrap
        from .reports.terminal import header_line, measurement_detail, summary_table

        width = terminal_width(terminalreporter)
        if not self.settings.enabled:
            over = [r for r in self.records if r.status == "over budget"]
            for line in wrap(
                f"neuronperf: {len(self.records)} budgeted measurements, {len(over)} over budget "
                "(run with --neuron-profile for the report)",
                width,
            ):
                terminalreporter.write_line(line)
            return
        terminalreporter.section("neuronperf")
        for line in wrap(header_line(self.records, self.backend_note), width):
            terminalreporter.write_line(line)
        terminalreporter.write_line(summary_table(self.records, width))
        if self.settings.details or self.config.get_verbosity() > 0:
            for r in self.records:
                terminalreporter.write_line("")
                terminalreporter.write_line(f"{r.measurement.test_id}")
                terminalreporter.write_line(measurement_detail(r.measurement))
        if self.baselines is not None:
            from .reports.terminal import baseline_footer

            shown = self.baselines.path
            if shown.is_relative_to(self.config.rootpath):
                shown = shown.relative_to(self.config.rootpath)
            terminalreporter.write_line("")
            for line in baseline_footer(
                self.records,
                shown,
                plan=self.plan,
                stale=self.stale,
                not_written=self.not_written,
                damaged=self.baselines.damaged,
                width=width,
            ):
                terminalreporter.write_line(line)


def junit_properties(record: Record) -> list[tuple[str, object]]:
    m = record.measurement
    prefix = f"neuronperf.{m.region}"
    return [
        (f"{prefix}.ops", m.ops),
        (f"{prefix}.kernels", m.kernels),
        (f"{prefix}.device_us", round(m.device_us.median, 3)),
        (f"{prefix}.host_us", round(m.host_us.median, 3)),
        (f"{prefix}.device_kind", m.device_kind),
        (f"{prefix}.status", record.status),
        (f"{prefix}.baseline", record.baseline_cell or record.baseline or "-"),
    ]


class XdistHooks:
    """The controller's side of xdist: what workers collected, and whether one crashed."""

    def __init__(self, plugin: NeuronPerfPlugin) -> None:
        self.plugin = plugin

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        if error is not None:
            self.plugin.worker_crashed = True
        raw = getattr(node, "workeroutput", {}).get(COLLECTED)
        if raw:
            data = json.loads(raw)
            self.plugin.collected.update(data["ids"])
            self.plugin.complete_modules.update(data["modules"])


def _module(test_id: str) -> str:
    return test_id.split("::", 1)[0]


@pytest.fixture
def neuron_profile(request: pytest.FixtureRequest) -> Iterator[NeuronProfile]:
    """Measure a callable, ``neuron_profile(fn, *args)``, or a block,
    ``with neuron_profile.region(name):``. See pytest-neuronperf's README."""
    plugin = request.config.stash[plugin_key]
    profile = plugin.fixture_for(request.node)
    if "benchmark" in request.fixturenames:
        # pytest-benchmark in the same test: our figures ride in its extra_info, so its
        # JSON, compare and history carry them.
        from .fixture import benchmark_extra_info

        profile.listeners.append(benchmark_extra_info(request.getfixturevalue("benchmark")))
    yield profile
