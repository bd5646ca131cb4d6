"""CI shards' baseline files -> the file one serial update would have written.

Each shard of a split suite runs ``--neuron-profile-update`` on a copy of the same stored
file: it rewrites the entries of the tests it ran that moved, adds new ones, removes those
known gone, and keeps every other entry byte for byte (update.plan_update). So an entry
that differs between shards was measured by more than one of them, unless the shards'
starting file (``base``) shows which one changed it. The same (test, region) changed in
two shards is a conflict: which measurement is the baseline is not for a merge to guess.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import NeuronPerfError
from .entry import Entry
from .store import Baselines, Key


class MergeError(NeuronPerfError, ValueError):
    """Shards that cannot be merged; the message names the files and what to do."""


@dataclass(frozen=True)
class Shard:
    path: Path
    baselines: Baselines


def _text(entry: Entry) -> str:
    return json.dumps(entry.to_dict(), sort_keys=True)


def merge_baselines(shards: Sequence[Shard], out: Path, base: Baselines | None = None) -> Baselines:
    """The merged file's entries, to be written at ``out``. MergeError when the shards are
    of different device kinds or disagree about an entry none of them owns alone."""
    kinds = sorted(
        {s.baselines.device_kind for s in shards} | ({base.device_kind} if base else set())
    )
    if len(kinds) > 1:
        raise MergeError(
            f"the files hold baselines of different device kinds ({', '.join(map(repr, kinds))}); "
            "merge the shards of one kind of machine"
        )
    keys = sorted(set().union(*(s.baselines.keys() for s in shards), base.keys() if base else ()))
    entries: dict[str, dict[str, Entry]] = {}
    for key in keys:
        entry = _merged_entry(key, shards, base)
        if entry is not None:
            entries.setdefault(key[0], {})[key[1]] = entry
    return Baselines(out, kinds[0], entries)


def _merged_entry(key: Key, shards: Sequence[Shard], base: Baselines | None) -> Entry | None:
    before = base.get(*key) if base is not None else None
    held = [(s.path, e) for s in shards if (e := s.baselines.get(*key)) is not None]
    if base is None:
        changed = held
    else:
        was = _text(before) if before is not None else None
        changed = [(p, e) for p, e in held if _text(e) != was]
    if len({_text(e) for _, e in changed}) > 1:
        where = " and ".join(str(p) for p, _ in changed[:2])
        hint = "" if base is not None else " (if they started from one file, give it as --base)"
        raise MergeError(
            f"{key[0]} region {key[1]!r} was measured in more than one shard ({where}) with "
            f"different results; run each test in one shard only{hint}"
        )
    removed = base is not None and before is not None and len(held) < len(shards)
    if changed and removed:
        missing = next(s.path for s in shards if s.baselines.get(*key) is None)
        raise MergeError(
            f"{key[0]} region {key[1]!r} was updated in {changed[0][0]} and removed in "
            f"{missing}; rerun the update of one of them"
        )
    if changed:
        return changed[0][1]
    return None if removed else before
