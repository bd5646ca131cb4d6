"""The controller's role (a serial run's too): every record, whichever process measured it,
the baseline file and the report files at the end, the terminal summary."""

from __future__ import annotations

from typing import Any

import pytest

from ..escape import terminal
from ..measure.progress import Writer
from ..model import Record, Status
from ..reports.detail import measurement_detail
from ..reports.fit import elide_apart, terminal_width, wrap
from ..reports.footer import baseline_footer
from ..reports.status import FAILED, status_of
from ..reports.terminal import header_line, summary_table
from ..reports.write import write_reports
from ..words import counted
from .measuring import JUNIT_PREFIX, MeasuringSession, records_of
from .progress import resume_progress, write_progress
from .worker import COLLECTED


class Attempts:
    """Test id -> the records of its last attempt: with pytest-rerunfailures an attempt run
    again measured nothing that counts."""

    def __init__(self) -> None:
        self._by_test: dict[str, tuple[Record, ...]] = {}
        self._rerun: set[str] = set()

    @property
    def records(self) -> list[Record]:
        return [r for attempt in self._by_test.values() for r in attempt]

    def log(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            rerun = str(report.outcome) == "rerun"  # pytest-rerunfailures' own outcome
            self._by_test[report.nodeid] = () if rerun else records_of(report)
            if rerun:
                self._rerun.add(report.nodeid)
        elif report.when == "teardown" and report.nodeid in self._rerun:
            self._rerun.discard(report.nodeid)
            # JUnit XML files an attempt's properties from its teardown report: only the
            # last attempt's figures are the measurement.
            report.user_properties = [
                p for p in report.user_properties if not str(p[0]).startswith(JUNIT_PREFIX)
            ]


class Controller:
    name = "controller"

    def __init__(self, session: MeasuringSession) -> None:
        self.session = session
        self.settings = session.settings
        self.attempts = Attempts()
        self.problems: list[str] = []

    @staticmethod
    def progress(config: pytest.Config) -> Writer:
        return lambda line: write_progress(config, line)

    @property
    def records(self) -> list[Record]:
        return self.attempts.records

    @pytest.hookimpl(tryfirst=True)  # before JUnit XML reads the teardown report
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Fires here for xdist workers' reports as well: one table whichever process measured.
        self.attempts.log(report)
        # Before the terminal reporter writes this result (tryfirst).
        resume_progress(self.session.config, report)

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown without xdist installed
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        output = getattr(node, "workeroutput", {})
        self.session.baselines.worker_done(output.get(COLLECTED), crashed=error is not None)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.finish(session, exitstatus)

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """The baseline file, then the reports: a failure to write either is one line in the
        summary and an exit status that marks it, never a traceback that eats the summary."""
        config, records = session.config, self.records
        written = self.session.baselines.finish(
            records,
            exitstatus,
            collect_only=bool(config.option.collectonly),
        )
        if not written and session.exitstatus == pytest.ExitCode.OK:
            # Asked for and not done: the run must not read as a success, nor as a crash.
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        if records and self.settings.enabled:
            self.problems = write_reports(
                records,
                self.settings,
                config.rootpath,
                backend_note=self.session.instruments.backend_note,
                exit_status=int(session.exitstatus),
                stored=self.session.baselines.stored_ops(records),
            )
        if self.problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        records = self.records
        if not records:
            return
        width = terminal_width(terminalreporter.config)
        if not self.settings.enabled:
            over = [r for r in records if r.status == Status.OVER_BUDGET]
            for line in wrap(
                f"neuronperf: {counted(len(records), 'budgeted measurement')}, "
                f"{len(over)} over budget "
                "(run with --neuron-profile for the report)",
                width,
            ):
                terminalreporter.write_line(terminal(line))
            return
        terminalreporter.section("neuronperf")
        verbosity = terminalreporter.config.get_verbosity()
        for line in self.summary_lines(records, verbosity, width):
            terminalreporter.write_line(terminal(line))

    def summary_lines(self, records: list[Record], verbosity: int, width: int) -> list[str]:
        """The neuronperf section, fitted to ``width``: header, table, details, what became
        of the files."""
        lines = [
            *wrap(header_line(records, self.session.instruments.backend_note), width),
            summary_table(records, width),
        ]
        if self.settings.details or verbosity > 0:
            ids = elide_apart([r.measurement.test_id for r in records], width)
            for r in records:
                if status_of(r) in FAILED:
                    # Its failure's section above holds the same block.
                    continue
                m = r.measurement
                lines += ["", ids[m.test_id], measurement_detail(m, width)]
        b = self.session.baselines
        if b.store is not None:
            lines.append("")
            lines += baseline_footer(
                records,
                b.shown(b.store.path),
                plan=b.plan,
                stale=b.stale,
                not_written=b.not_written,
                damaged=b.store.damaged,
                width=width,
                apart=b.apart,
            )
        return lines + self.problems
