"""The part of a session that every process running tests has: the fixture's object, the
verdict in the report hook, the baselines it is judged against. Registered next to the role
object (controller.py or worker.py), which adds what only that process does."""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from dataclasses import replace

import pytest

from ..errors import NeuronPerfError
from ..escape import terminal, xml
from ..fixture import NeuronProfile
from ..gate.compare import Comparison, judged_by_reference
from ..gate.marker import Budget, tolerance_for
from ..gate.pooled import pooled
from ..gate.record import recording_plan
from ..gate.settled import window_settled
from ..measure.progress import Writer
from ..measure.window import WindowPlan
from ..model import Measurement, Record
from ..reports.change import baseline_text
from ..reports.detail import measurement_detail
from ..reports.fit import fit_error, terminal_width, wrap
from ..reports.status import outcome
from ..settings import Settings
from ..stats import TimeChange
from ..trace.summary import op_diff_text
from ..words import TIME_WORDS
from ..work.peaks import Peaks
from .baselines import BaselineSession
from .collect import budgets_key
from .instruments import Instruments
from .recheck import remeasure
from .verdict import Verdict, compare_one, judge

# The user property that carries a Record from the process that measured to the report.
PROPERTY = "neuronperf"
# The report section with a failure's per-op tables; its presence makes the PERF status.
SECTION = "neuronperf"
JUNIT_PREFIX = "neuronperf."

measurements_key = pytest.StashKey[list[Measurement]]()
# Region -> the measurement the second-look check compared and what it found: the verdict
# reuses it when the runner kept that measurement (one comparison per measurement).
comparisons_key = pytest.StashKey[dict[str, tuple[Measurement, Comparison | None]]]()


class MeasuringSession:
    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        peaks: tuple[tuple[str, Peaks], ...] = (),
        progress: Writer | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.peaks = peaks
        self.progress = progress
        self.baselines = BaselineSession(config.rootpath, settings)
        self.instruments = Instruments(settings, peaks, progress)
        if settings.backend != "auto":
            # An explicitly named backend that cannot run is one usage error now, not a
            # traceback in every test later.
            _ = self.instruments.runner

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # On the xdist controller this runs before workers start: a bad baseline file is one
        # usage error, not one per worker.
        if self.settings.enabled:
            self.baselines.load(self.instruments.runner.environment["device_kind"])

    def pytest_report_header(self, config: pytest.Config) -> list[str] | None:
        s = self.settings
        if not s.enabled:
            return None
        line = (
            f"neuronperf: backend={s.backend} rounds={s.rounds} warmup={s.warmup} "
            f"window={s.window:g}s threads={s.threads} heap={s.heap}"
        )
        return wrap(line, terminal_width(config))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        # Innermost: sees what the collector produced before other plugins' wrappers
        # (--lf's) narrow it.
        report = yield
        if self.settings.enabled:
            offered = (n.nodeid for n in report.result if isinstance(n, pytest.Item))
            self.baselines.collection.offered.update(offered)
        return report

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.baselines.collection.deselected.update(item.nodeid for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # The stale check is for baseline runs; plain runs pay nothing for it.
        if self.settings.enabled:
            self.baselines.finish_collection(self.config, (i.nodeid for i in session.items))

    def profile_for(self, request: pytest.FixtureRequest) -> NeuronProfile:
        item = request.node
        uses_benchmark = "benchmark" in request.fixturenames
        profile = self.instruments.profile(
            item.nodeid,
            enabled=self.settings.enabled or budgets_key in item.stash,
            recheck=lambda m: self._host_regression(item, m),
            window=lambda region: self.window_for(item, region),
            memory=lambda region: self.memory_for(item, region),
            benchmark=request.getfixturevalue("benchmark") if uses_benchmark else None,
        )
        item.stash[measurements_key] = profile.measurements
        item.stash[comparisons_key] = {}
        return profile

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        if call.excinfo is not None and isinstance(call.excinfo.value, NeuronPerfError):
            # Said in a sentence of ours: fitted to the terminal like the rest of our lines.
            fit_error(call.excinfo.value, terminal_width(self.config))
        report = yield
        if report.when == "call" and measurements_key in item.stash:
            self._judge(item, report)
            # The report carries the records now; items live as long as the session.
            del item.stash[measurements_key]
            del item.stash[comparisons_key]
        return report

    def pytest_report_teststatus(
        self, report: pytest.CollectReport | pytest.TestReport
    ) -> tuple[str, str, str] | None:
        # Counted as failed; shown as what failed it.
        if report.when == "call" and report.failed and _has_section(report):
            return "failed", "P", "PERF"
        return None

    def _judge(self, item: pytest.Item, report: pytest.TestReport) -> None:
        measurements = item.stash[measurements_key]
        budgets = item.stash.get(budgets_key, ())
        comparisons = {m.region: self._comparison(item, m, budgets) for m in measurements}
        rechecking = report.passed and self.settings.recheck and not self.settings.update
        if rechecking and any(moved(c) for c in comparisons.values()):
            judged = self._rechecked(item.nodeid, measurements, comparisons, budgets)
            comparisons = {m.region: c for m, c in judged}
            measurements = [m for m, _ in judged]
        verdict = judge(
            measurements,
            budgets,
            comparisons,
            passed=report.passed,
            update=self.settings.update,
            strict_budgets=self.settings.budget_strict,
            tolerance=self.settings.tolerance,
            gated="host_us" if self.instruments.host_timed else "device_us",
        )
        width = terminal_width(self.config)
        if verdict.failed:
            report.outcome = "failed"
            report.longrepr = terminal(
                "\n".join(w for s in verdict.sentences for w in wrap(s, width))
            )
            section = self._section(item.nodeid, verdict, measurements, width)
            # First: above the captured output, which torch's debug logs can run to
            # hundreds of lines.
            report.sections.insert(0, (SECTION, terminal(section)))
        sections = [(name, quiet(name, text)) for name, text in report.sections]
        report.sections[:] = [(name, text) for name, text in sections if text.strip()]
        for record in verdict.records:
            report.user_properties.append((PROPERTY, json.dumps(record.to_dict(), sort_keys=True)))
        # JUnit XML takes its properties from the item (through the teardown report): flat
        # name/value pairs there are what CI dashboards chart. A rerun's replace the last.
        kept = [p for p in item.user_properties if not str(p[0]).startswith(JUNIT_PREFIX)]
        item.user_properties[:] = kept + [p for r in verdict.records for p in junit_properties(r)]

    def _rechecked(
        self,
        nodeid: str,
        measurements: list[Measurement],
        comparisons: dict[str, Comparison | None],
        budgets: tuple[Budget, ...],
    ) -> list[tuple[Measurement, Comparison | None]]:
        """The measurements, a moved region's pooled with the same region measured in
        --neuron-profile-recheck fresh processes; one that did not come back from all of
        them is judged alone, within the recording processes' spread again."""
        store, k = self.baselines.store, self.settings.recheck
        assert store is not None  # a comparison came from it
        if self.progress is not None:
            self.progress(
                f"{nodeid}: a time moved past the tolerance; measuring it again in {k} "
                "fresh processes"
            )
        got = remeasure(self.config, self.settings, nodeid, store.path.parent, k)
        out: list[tuple[Measurement, Comparison | None]] = []
        for m in measurements:
            c = comparisons.get(m.region)
            if c is None or not moved(c):
                out.append((m, c))
                continue
            # The same code measured: a fresh process that counted other ops is not pooled.
            others = [
                o
                for p in got.processes
                if (o := p.get(m.region)) is not None and o.op_counts == m.op_counts
            ]
            first = f"{moved_text(c)} in this process"
            if len(others) == k:
                note = f"{first}; judged on its rounds pooled with {k} fresh processes'"
                both = replace(pooled([m, *others]), recheck_note=_also(m, note))
                out.append((both, self._compare(both, budgets)))
                continue
            why = got.problem or f"a fresh process measured region {m.region!r} otherwise"
            note = f"{first}; not rechecked ({why}): judged on this process alone"
            alone = replace(m, recheck_note=_also(m, note))
            # Held back within the recording processes' spread, as without rechecking.
            out.append((alone, self._compare(alone, budgets, hold_back=True)))
        return out

    def _section(
        self, test_id: str, verdict: Verdict, measurements: list[Measurement], width: int
    ) -> str:
        """The failing regions' per-op tables, op diffs against the baseline, and notes."""
        parts = []
        for m in measurements:
            if m.region not in verdict.regions:
                continue
            parts.append(measurement_detail(m, width))
            entry = self.baselines.entry(m)
            if entry is not None and entry.op_counts != m.op_counts:
                diff = op_diff_text(entry.op_counts, m.op_counts)
                parts.append("\n".join(wrap(f"op diff against the baseline: {diff}", width)))
        parts += ["\n".join(wrap(n, width)) for n in verdict.notes]
        traces = self.instruments.trace_note(test_id, set(verdict.regions))
        traces = "\n".join(w for line in traces.split("\n") for w in wrap(line, width))
        return "\n\n".join(parts) + traces

    def _comparison(
        self, item: pytest.Item, m: Measurement, budgets: tuple[Budget, ...]
    ) -> Comparison | None:
        seen = item.stash.get(comparisons_key, {}).get(m.region)
        if seen is not None and seen[0] is m:
            return seen[1]
        return self._compare(m, budgets)

    def _compare(
        self, m: Measurement, budgets: tuple[Budget, ...], hold_back: bool = False
    ) -> Comparison | None:
        """``hold_back``: within the recording processes' spread even where rechecking
        pools fresh processes instead."""
        store = self.baselines.store
        if store is None:
            return None
        host_timed = self.instruments.host_timed
        return compare_one(
            store.get(m.test_id, m.region),
            m,
            budgets,
            self.settings,
            host_timed=host_timed,
            where=str(store.path),
            hold_back=hold_back or not self.settings.recheck,
        )

    def window_for(self, item: pytest.Item, region: str) -> WindowPlan:
        """A window only where a host time is judged: recording one (adaptive: it stops once
        its rounds pin the recorded figures down), or comparing with an entry that exists
        (adaptive: it stops once its rounds settle the verdict). Budgets are judged on the
        rounds: a plain run, or a region with no entry, times one call per round
        (docs/cost.md)."""
        s = self.settings
        budgets: tuple[Budget, ...] = item.stash.get(budgets_key, ())
        tolerance = tolerance_for(budgets, region, s.tolerance)
        if s.update:
            # Recorded: passes until every figure that will judge the region is known well
            # enough for the tolerance, up to one window (gate/record.py).
            return recording_plan(s.window, tolerance)
        if s.enabled and (s.json_path is not None or s.export is not None):
            # Written to a JSON report that `neuronperf compare` and `history` judge later:
            # the whole window.
            return WindowPlan(s.window)
        store = self.baselines.store
        entry = store.get(item.nodeid, region) if store is not None else None
        if entry is None or not (s.compare_host or self.instruments.host_timed):
            # No entry, or device time judged (from the profiled rounds): no window.
            return WindowPlan(0.0)
        torch = self.instruments.runner.environment.get("torch")
        by_reference = judged_by_reference(entry, torch, s.reference)
        return WindowPlan(
            s.window,
            settled=lambda samples: window_settled(
                entry, samples, tolerance=tolerance, by_reference=by_reference
            ),
        )

    def memory_for(self, item: pytest.Item, region: str) -> bool:
        """Memory is profiled where the setting, a memory budget of the region or its
        baseline entry holding memory asks for it (docs/memory.md: what it costs)."""
        if self.settings.memory:
            return True
        budgets: tuple[Budget, ...] = item.stash.get(budgets_key, ())
        if any(b.limits_memory and b.region in (None, region) for b in budgets):
            return True
        store = self.baselines.store
        entry = store.get(item.nodeid, region) if store is not None else None
        return entry is not None and entry.memory is not None

    def _host_regression(self, item: pytest.Item, m: Measurement) -> str | None:
        """How the gated host time regressed against the baseline, for the runner to confirm
        on a second look; None when it did not, or when nothing will be judged."""
        if self.settings.update:
            return None
        c = self._compare(m, item.stash.get(budgets_key, ()))
        item.stash.setdefault(comparisons_key, {})[m.region] = (m, c)
        if c is None or c.gated != "host_us" or c.host is None or c.host.verdict != "regressed":
            return None
        return c.host.percent()


def _moved_times(c: Comparison | None) -> list[tuple[str, TimeChange]]:
    """The times the comparison judged moved past the tolerance, either way, by metric."""
    if c is None:
        return []
    both = (("host_us", c.host), ("device_us", c.device))
    return [(k, t) for k, t in both if t is not None and t.verdict in ("regressed", "improved")]


def moved(c: Comparison | None) -> bool:
    return bool(_moved_times(c))


def moved_text(c: Comparison) -> str:
    """How the times moved: ``host time regressed +16%``."""
    return " and ".join(
        f"{TIME_WORDS[metric]} time {t.verdict} {t.percent()}" for metric, t in _moved_times(c)
    )


def _also(m: Measurement, note: str) -> str:
    """``note`` after what a second look inside the process already said."""
    return f"{m.recheck_note}; {note}" if m.recheck_note else note


def records_of(report: pytest.TestReport) -> tuple[Record, ...]:
    """The records a report carries (the process that measured put them there)."""
    return tuple(
        Record.from_dict(json.loads(str(value)))
        for name, value in report.user_properties
        if name == PROPERTY
    )


def junit_properties(record: Record) -> list[tuple[str, object]]:
    m = record.measurement
    # pytest escapes a property's value for XML, not its name.
    prefix = f"{JUNIT_PREFIX}{xml(m.region)}"
    return [
        (f"{prefix}.ops", m.ops),
        (f"{prefix}.kernels", m.kernels),
        (f"{prefix}.device_us", round(m.device_us.median, 3)),
        (f"{prefix}.host_us", round(m.host_us.median, 3)),
        (f"{prefix}.device_kind", xml(m.device_kind)),
        # str(): xdist's execnet sends exact builtin types only, not a StrEnum member.
        (f"{prefix}.status", str(record.status)),
        # The word and text every report shows (reports/status.py, reports/change.py).
        (f"{prefix}.outcome", str(outcome(record))),
        (f"{prefix}.baseline", str(baseline_text(record))),
        *memory_properties(prefix, m),
    ]


def memory_properties(prefix: str, m: Measurement) -> list[tuple[str, object]]:
    """Bytes as whole numbers, for dashboards; none when memory was not profiled."""
    if m.memory is None:
        return []
    return [
        (f"{prefix}.peak_bytes", m.memory.peak_bytes),
        (f"{prefix}.allocated_bytes", m.memory.allocated_bytes),
        (f"{prefix}.retained_bytes", m.memory.retained_bytes),
    ]


# Kineto announces every profiler start and stop on stderr: noise in a failure's output.
_KINETO = re.compile(
    r"^USDT:.*SyncActivityProfilerHandler\.cpp:\d+\] profiler_(start|stop)\n?", re.M
)


def quiet(name: str, text: str) -> str:
    """A captured-output section without Kineto's start/stop lines."""
    return _KINETO.sub("", text) if name.startswith("Captured stderr") else text


def _has_section(report: pytest.CollectReport | pytest.TestReport) -> bool:
    return any(name == SECTION for name, _ in report.sections)
