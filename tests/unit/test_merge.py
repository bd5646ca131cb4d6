"""baselines/merge.py: which entry the merged file holds when shards started from one file
(``base``) or not. Entries differ here by their device samples, as two runs' do."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.merge import MergeError, Shard, merge_baselines
from pytest_neuronperf.baselines.store import Baselines

KIND = "cpu:x86_64"


def entry(us: float) -> Entry:
    return Entry.from_dict(
        {
            "ops": 1,
            "kernels": 1,
            "rounds": 3,
            "device_us": {"samples": [us, us, us]},
            "host_us": {"samples": [us, us, us]},
        }
    )


def shard(name: str, **tests: Entry) -> Shard:
    return Shard(Path(name), Baselines(Path(name), KIND, {t: {"r": e} for t, e in tests.items()}))


def merged(*shards: Shard, base: Shard | None = None) -> dict[str, Entry]:
    out = merge_baselines(shards, Path("out.json"), base.baselines if base else None)
    return {t: regions["r"] for t, regions in out.entries.items()}


def test_without_base_the_shards_entries_are_joined() -> None:
    assert merged(shard("1", a=entry(1)), shard("2", b=entry(2))) == {"a": entry(1), "b": entry(2)}
    # The same entry in two shards (both kept it from the file they started from): once.
    assert merged(shard("1", a=entry(1)), shard("2", a=entry(1))) == {"a": entry(1)}


def test_without_base_two_different_entries_are_a_conflict_that_names_both() -> None:
    with pytest.raises(
        MergeError, match=r"^a region 'r' was measured in more than one shard \(1 and 2\).*--base"
    ):
        merged(shard("1", a=entry(1)), shard("2", a=entry(2)))


def test_with_base_the_shard_that_changed_an_entry_wins() -> None:
    base = shard("base", a=entry(1), b=entry(1))
    got = merged(shard("1", a=entry(5), b=entry(1)), shard("2", a=entry(1), b=entry(1)), base=base)
    assert got == {"a": entry(5), "b": entry(1)}


def test_with_base_an_entry_one_shard_removed_is_gone_and_the_others_stay() -> None:
    base = shard("base", a=entry(1), b=entry(1))
    got = merged(shard("1", b=entry(1)), shard("2", a=entry(1), b=entry(1)), base=base)
    assert got == {"b": entry(1)}


def test_with_base_changed_in_one_shard_and_removed_in_another_is_a_conflict() -> None:
    base = shard("base", a=entry(1))
    with pytest.raises(MergeError, match="updated in 1 and removed in 2"):
        merged(shard("1", a=entry(5)), shard("2"), base=base)


def test_with_base_two_shards_changing_one_entry_alike_is_no_conflict() -> None:
    base = shard("base", a=entry(1))
    assert merged(shard("1", a=entry(5)), shard("2", a=entry(5)), base=base) == {"a": entry(5)}
