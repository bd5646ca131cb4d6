"""The baseline file over one pytest session: loaded at the start, the tests that exist
learnt from collection (a worker's too), stale entries and the update planned and written
at the end. Only the controller (or a serial run) writes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from ..baselines.entry import Entry
from ..baselines.store import DEFAULT_DIR, BaselineError, Baselines, Key, load
from ..baselines.update import UpdatePlan, partially_selected, stale, write_update
from ..gate.record import spread_apart
from ..model import Measurement, OpRow, Record, Status
from ..names import module_of
from ..settings import Settings

# Exit statuses after which the run's measurements are trusted enough to be written: a
# run that was interrupted, crashed or misconfigured leaves the previous baselines alone.
WRITE_ON_EXIT = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
# Statuses of a test that passed on its own terms: only those say what a test now measures.
PASSED_STATUSES = (Status.OK, Status.MEASURED)


@dataclass
class Collection:
    """What collection showed of the tests that exist, selected or not."""

    # Test ids collectors produced, before any plugin filtered them (--lf drops passed
    # tests of a file at collection, silently: they exist, and were not run).
    offered: set[str] = field(default_factory=set)
    deselected: set[str] = field(default_factory=set)
    # Known to exist (run or deselected), and modules whose every test is known.
    ids: set[str] = field(default_factory=set)
    complete_modules: set[str] = field(default_factory=set)

    def finish(self, items: Iterable[str], partial: set[str]) -> None:
        self.ids = set(items) | self.deselected
        # A module with a test that was offered and neither run nor deselected was
        # narrowed by a plugin: the tests missing from it may well exist.
        narrowed = {module_of(t) for t in self.offered - self.ids}
        self.complete_modules = {
            m for m in map(module_of, self.ids) if m not in partial and m not in narrowed
        }

    def dumps(self) -> str:
        return json.dumps({"ids": sorted(self.ids), "modules": sorted(self.complete_modules)})

    def merge(self, raw: str) -> None:
        """Add what a worker collected (``dumps`` there)."""
        data = json.loads(raw)
        self.ids.update(data["ids"])
        self.complete_modules.update(data["modules"])


def passed_tests(
    records: Sequence[Record],
) -> tuple[dict[str, set[str]], dict[Key, tuple[Entry, bool]]]:
    """The regions of each test whose every region passed, and their entries. A test with
    one region over budget (or failed) says nothing of what it measures now: none of its
    regions is written and none removed as stale."""
    failed = {r.measurement.test_id for r in records if r.status not in PASSED_STATUSES}
    measured: dict[str, set[str]] = {}
    passed: dict[Key, tuple[Entry, bool]] = {}
    for r in records:
        m = r.measurement
        if m.test_id not in failed:
            measured.setdefault(m.test_id, set()).add(m.region)
            passed[(m.test_id, m.region)] = (Entry.of(m), r.rewrite_baseline)
    return measured, passed


class BaselineSession:
    def __init__(self, rootpath: Path, settings: Settings) -> None:
        self.rootpath = rootpath
        self.settings = settings
        self.store: Baselines | None = None
        self.collection = Collection()
        self.plan: UpdatePlan | None = None
        self.stale: list[Key] = []
        # Pooled entries whose recording processes ran further apart than the tolerance:
        # test, region, how far (gate/ticks.py recorded_spread).
        self.apart: list[tuple[str, str, str]] = []
        # Why an update wrote nothing ("" when it did, or was not asked for).
        self.not_written = ""
        self.worker_crashed = False

    @property
    def directory(self) -> Path:
        # rootpath, not the invocation directory: the same files whatever the cwd.
        return self.rootpath / (self.settings.profile_dir or Path(DEFAULT_DIR))

    @property
    def prefix(self) -> str:
        """What the stored test ids of this rootdir start with: its path relative to the
        directory holding the baseline directory, when the rootdir lies below that one
        (a store shared by a monorepo's rootdirs, ``mono/.neuronperf``); else nothing."""
        home = self.directory.parent.resolve()
        root = self.rootpath.resolve()
        if root == home or not root.is_relative_to(home):
            return ""
        return root.relative_to(home).as_posix() + "/"

    def load(self, device_kind: str) -> None:
        try:
            stored = load(self.directory, device_kind, allow_damaged=self.settings.update)
        except BaselineError as exc:
            raise pytest.UsageError(f"neuronperf: baseline file {exc}") from None
        # The session sees its rootdir's entries only, by their ids in this rootdir.
        self.store = stored.scoped(self.prefix)

    def entry(self, m: Measurement) -> Entry | None:
        return self.store.get(m.test_id, m.region) if self.store is not None else None

    def finish_collection(self, config: pytest.Config, items: Iterable[str]) -> None:
        partial = partially_selected(config.args, config.invocation_params.dir, config.rootpath)
        self.collection.finish(items, partial)

    def worker_done(self, collected: str | None, crashed: bool) -> None:
        """An xdist worker finished: what it collected (Collection.dumps), if it said."""
        if collected:
            self.collection.merge(collected)
        # A crashed worker's tests did not all report: the run is not trusted to write.
        self.worker_crashed = self.worker_crashed or crashed

    def finish(self, records: Sequence[Record], exitstatus: int, *, collect_only: bool) -> bool:
        """Stale entries, and with --neuron-profile-update the file rewritten. False when an
        update was asked for, the run was fit to write, and the file could not be written."""
        if self.store is None:
            return True
        measured, passed = passed_tests(records)
        self.stale = stale(
            self.store,
            collected=self.collection.ids,
            complete_modules=self.collection.complete_modules,
            file_exists=lambda module: (self.rootpath / module).exists(),
            measured=measured,
        )
        if not self.settings.update:
            return True
        if exitstatus not in WRITE_ON_EXIT or self.worker_crashed:
            why = "an xdist worker crashed" if self.worker_crashed else f"exit status {exitstatus}"
            self.not_written = f"the run did not finish cleanly ({why})"
            return True
        if collect_only:
            self.not_written = "--collect-only ran no tests"
            return True
        try:
            # Under the directory's lock, against the file as stored now: entries written
            # meanwhile by another run survive (baselines/update.py write_update).
            d, kind = self.store.path.parent, self.store.device_kind
            p = self.prefix
            stored = {(p + t, r): v for (t, r), v in passed.items()}
            gone = [(p + t, r) for t, r in self.stale]
            self.plan = write_update(d, kind, stored, gone, pool=self.settings.pool)
            # Each region at the tolerance its marker set, as a compare run judges it.
            tolerances = {(p + r.measurement.test_id, r.measurement.region): r.tolerance
                          for r in records if r.tolerance is not None}  # fmt: skip
            s = self.settings
            apart = spread_apart(self.plan, tolerances, s.tolerance, host_too=s.compare_host)
            # Named by their ids in this rootdir, as the stale-entry line names them.
            self.apart = [(t.removeprefix(p), r, spread) for t, r, spread in apart]
            if self.plan.kept is not None:
                kept = f"; the damaged file is kept as {self.shown(self.plan.kept)}"
                self.store = replace(self.store, damaged=self.store.damaged + kept)
        except BaselineError as exc:  # unreadable, locked too long, or not writable
            self.not_written = f"{self.shown(exc.path)}: {exc.reason}"
            return False
        return True

    def shown(self, path: Path) -> Path:
        """``path`` as the footer names it: relative to the rootdir where it is inside."""
        return path.relative_to(self.rootpath) if path.is_relative_to(self.rootpath) else path

    def stored_ops(
        self, records: Sequence[Record]
    ) -> dict[Key, tuple[Sequence[OpRow], dict[str, int]]]:
        """The stored per-op rows and op counts of what ``records`` measured (HTML report)."""
        out: dict[Key, tuple[Sequence[OpRow], dict[str, int]]] = {}
        for r in records:
            m = r.measurement
            entry = self.entry(m)
            if entry is not None:
                out[(m.test_id, m.region)] = (entry.per_op, entry.op_counts)
        return out
