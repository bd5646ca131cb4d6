"""What an update does to a baseline file: stale entries, pooling, the plan."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..names import module_of
from .entry import Entry
from .store import Baselines, Key, keep_damaged, update_file


def stale(
    baselines: Baselines,
    *,
    collected: set[str],
    complete_modules: set[str],
    file_exists: Callable[[str], bool],
    measured: Mapping[str, set[str]],
) -> list[Key]:
    """Entries known to be gone. Only what this run can know: a test whose module was
    collected in full (``-k`` and ``--deselect`` still count as full; ``file.py::test``
    does not) and no longer holds it, a test whose file is gone, and regions that a test
    which ran and passed (``measured``: test id -> regions) no longer measures."""
    out: list[Key] = []
    for test_id, regions in sorted(baselines.entries.items()):
        module = module_of(test_id)
        gone = (module in complete_modules and test_id not in collected) or not file_exists(module)
        for region in sorted(regions):
            if gone or (test_id in measured and region not in measured[test_id]):
                out.append((test_id, region))
    return out


# Recording processes a pooled entry keeps (--neuron-profile-pool): the newest this many.
POOL_CAP = 5


@dataclass(frozen=True)
class UpdatePlan:
    """What --neuron-profile-update does to one file."""

    result: Baselines
    added: tuple[Key, ...] = ()
    changed: tuple[Key, ...] = ()
    unchanged: tuple[Key, ...] = ()
    removed: tuple[Key, ...] = ()
    # Entries this run's rounds were added to (--neuron-profile-pool).
    pooled: tuple[Key, ...] = ()
    # Where the damaged file this update replaced was copied (store.keep_damaged).
    kept: Path | None = None

    @property
    def touches_file(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.pooled)


def plan_update(
    current: Baselines,
    measured: Mapping[Key, tuple[Entry, bool]],
    stale_keys: Iterable[Key],
    *,
    pool: bool = False,
) -> UpdatePlan:
    """``measured`` maps each key that ran and passed to (entry, whether it must be
    rewritten); an entry that still holds is kept as stored, so its lines do not churn.
    With ``pool``, a stored entry that measures the same thing gains this run's rounds as
    one more recording process (Entry.pooled_with) whatever its times did."""
    added, changed, unchanged, pooled, updates = [], [], [], [], {}
    for key, (entry, rewrite) in sorted(measured.items()):
        stored = current.get(*key)
        merged = stored.pooled_with(entry, POOL_CAP) if pool and stored is not None else None
        if merged is not None:
            pooled.append(key)
            entry = merged
        elif stored is None:
            added.append(key)
        elif rewrite or pool:
            changed.append(key)
        else:
            unchanged.append(key)
            continue
        updates[key] = entry
    removed = sorted(k for k in set(stale_keys) if current.get(*k) is not None and k not in updates)
    return UpdatePlan(
        current.merged(updates, removed),
        tuple(added),
        tuple(changed),
        tuple(unchanged),
        tuple(removed),
        tuple(pooled),
    )


def write_update(
    directory: Path,
    device_kind: str,
    measured: Mapping[Key, tuple[Entry, bool]],
    stale_keys: Iterable[Key],
    *,
    pool: bool = False,
) -> UpdatePlan:
    """--neuron-profile-update of one file, start to end: under its directory's lock, read it as
    stored now (entries written meanwhile by another run survive; a damaged file reads as
    empty), plan the update against it (plan_update) and replace the file when the plan
    touches it. Returns the plan; BaselineError when it could not be read or written,
    the file then left as it was."""
    stale_keys = tuple(stale_keys)
    plans: list[UpdatePlan] = []

    def merge(current: Baselines) -> Baselines | None:
        plan = plan_update(current, measured, stale_keys, pool=pool)
        if current.damaged:
            # Replaced (both sides of a conflict may leave nothing to change), after a copy.
            plan = replace(plan, kept=keep_damaged(current.path))
        plans.append(plan)
        return plan.result if plan.touches_file or current.damaged else None

    update_file(directory, device_kind, merge)
    return plans[-1]


def partially_selected(args: Iterable[str], invocation_dir: Path, rootpath: Path) -> set[str]:
    """Modules (as node-id paths) that command-line arguments such as ``file.py::test``
    collect only in part: the tests of such a module that did not run may still exist."""
    out = set()
    for arg in args:
        if "::" not in arg:
            continue
        path = (invocation_dir / arg.split("::", 1)[0]).resolve()
        try:
            out.add(path.relative_to(rootpath.resolve()).as_posix())
        except ValueError:
            continue
    return out
