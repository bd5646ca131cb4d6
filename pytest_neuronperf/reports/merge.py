"""CI shards' JSON reports -> one report, as if the suite had run once.

The shards must be reports of one schema version, from one kind of device and one commit,
each region measured in one shard only: anything else would compare or chart figures
that were never one run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..baselines.merge import MergeError
from . import json
from .json import Report
from .provenance import Provenance


def merge_reports(reports: Sequence[Report]) -> dict[str, Any]:
    """The merged report document. MergeError with one line naming the files otherwise."""
    first = reports[0]
    for r in reports[1:]:
        if r.version != first.version:
            raise MergeError(
                f"{r.path} is a report of schema version {r.version}, {first.path} of "
                f"{first.version}; merge shards written by one pytest-neuronperf version"
            )
        kinds = set(r.device_kinds) | set(first.device_kinds)
        if r.records and first.records and len(kinds) > 1:
            raise MergeError(
                f"{r.path} was measured on {', '.join(r.device_kinds)}, {first.path} on "
                f"{', '.join(first.device_kinds)}; merge the shards of one kind of machine"
            )
        if _commit(r) != _commit(first):
            raise MergeError(
                f"{r.path} records commit {_commit(r)}, {first.path} {_commit(first)}; "
                "merge the shards of one run"
            )
    seen: dict[tuple[str, str], Report] = {}
    for r in reports:
        for rec in r.records:
            key = (rec.measurement.test_id, rec.measurement.region)
            if key in seen:
                raise MergeError(
                    f"{key[0]} region {key[1]!r} is in both {seen[key].path} and {r.path}; "
                    "run each test in one shard only"
                )
            seen[key] = r
    records = sorted(
        (rec for r in reports for rec in r.records),
        key=lambda rec: (rec.measurement.test_id, rec.measurement.region),
    )
    notes = dict.fromkeys(r.backend_note for r in reports if r.backend_note)
    statuses = [r.exit_status for r in reports if r.exit_status]
    return json.document(
        records,
        backend_note="; ".join(notes),
        exit_status=statuses[0] if statuses else _all_zero(reports),
        provenance=Provenance(first.provenance.git, first.provenance.ci),
    )


def _commit(r: Report) -> str | None:
    return r.provenance.git.commit if r.provenance.git is not None else None


def _all_zero(reports: Sequence[Report]) -> int | None:
    return 0 if all(r.exit_status == 0 for r in reports) else None
