"""Reading JSON reports back, schema versions 1 and 2, and writing version 2 with where it
came from. Bad files give one line naming the file and what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from pytest_neuronperf.reports.json import (
    SCHEMA_VERSION,
    ReportError,
    document,
    dumps,
    load,
    schema,
)
from pytest_neuronperf.reports.provenance import Ci, Git, Provenance

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"
PROVENANCE = Provenance(
    Git("0123456789abcdef0123456789abcdef01234567", "main", True, "2026-01-02T03:04:05+00:00"),
    Ci("github", "42", "https://github.com/o/r/actions/runs/42"),
)


def test_reads_a_version_1_report() -> None:
    report = load(DATA)
    assert report.version == 1 and len(report.records) == 5
    assert report.device_kinds == ["cpu:x86_64"]
    assert report.provenance == Provenance() and report.name() == str(DATA)
    assert report.records[0].measurement.region == "rmsnorm_naive"


def test_version_2_round_trips_with_git_and_ci(tmp_path: Path) -> None:
    records = load(DATA).records
    doc = document(records, backend_note="n", exit_status=0, provenance=PROVENANCE)
    assert doc["schema_version"] == SCHEMA_VERSION == 2
    jsonschema.validate(doc, schema())
    path = tmp_path / "r.json"
    path.write_text(dumps(doc))
    back = load(path)
    assert back.version == 2 and back.provenance == PROVENANCE
    assert back.records == records
    assert back.name() == f"{path} (0123456 on main)"
    # Without provenance both fields are null, which the schema allows.
    bare = document(records)
    assert bare["git"] is None and bare["ci"] is None
    jsonschema.validate(bare, schema())
    # Version 1's schema stays in the package for readers of old reports.
    assert schema(1)["properties"]["schema_version"] == {"const": 1}


def _one_line(exc: pytest.ExceptionInfo[ReportError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("content", "says", "not_a_report"),
    [
        (None, "no such file", True),
        ("{not json", "not JSON", True),
        ('{"hello": 1}', "not a pytest-neuronperf report", True),
        ('{"schema": "pytest-neuronperf/report", "schema_version": 99}', "version 99", False),
        ('{"schema": "pytest-neuronperf/report", "schema_version": 2}', "'measurements'", False),
        (
            '{"schema": "pytest-neuronperf/report", "schema_version": 2, '
            '"measurements": [{"measurement": {"test_id": "t"}}]}',
            "measurement 0 is malformed",
            False,
        ),
    ],
)
def test_bad_files_are_one_line_naming_the_file(
    tmp_path: Path, content: str | None, says: str, not_a_report: bool
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReportError) as exc:
        load(path)
    text = _one_line(exc)
    assert text.startswith(str(path)) and says in text
    if says in ("no such file", "not a pytest-neuronperf report"):
        assert text.endswith("; write one with --neuron-profile-json=PATH"), "what to do"
    # "no such file" is not a report either, but only a directory scan asks.
    if content is not None:
        assert exc.value.not_a_report is not_a_report


def test_a_directory_is_no_report_and_says_so_without_errno(tmp_path: Path) -> None:
    with pytest.raises(ReportError) as exc:
        load(tmp_path)
    assert _one_line(exc) == (
        f"{tmp_path}: is a directory; give a report file (write one with "
        "--neuron-profile-json=PATH)"
    )


def test_a_report_of_a_newer_schema_says_to_upgrade(tmp_path: Path) -> None:
    doc = json.loads(DATA.read_text())
    doc["schema_version"] = 3
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReportError, match="reads 1 and 2; upgrade pytest-neuronperf"):
        load(path)


def test_reports_are_written_readable_by_others_as_open_would(tmp_path: Path) -> None:
    from pytest_neuronperf.reports.json import write_atomic

    path = tmp_path / "out" / "report.html"
    write_atomic(path, "x")
    # Under the usual umask 022: rw-r--r--, not mkstemp's private rw-------.
    mask = os.umask(0o022)
    try:
        write_atomic(path, "y")
    finally:
        os.umask(mask)
    assert path.read_text() == "y" and path.stat().st_mode & 0o777 == 0o644
    assert not [p for p in path.parent.iterdir() if p.name != "report.html"]


def _edited(**fields: object) -> str:
    doc = json.loads(DATA.read_text())
    doc.update(fields)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (_edited(exit_status=424242).replace("424242", "9" * 5000), "not JSON"),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
        (_edited(git="abc"), "'git'"),
        (_edited(ci=["x"]), "'ci'"),
        (_edited(git={"commit": 7}), "'git.commit' is int"),
        (_edited(schema_version=True), "schema version True"),
        (_edited(schema_version=2.0), "schema version 2.0"),
        (_edited(generated_at={"a": 1}), "'generated_at'"),
        (_edited(backend_note=["x"]), "'backend_note'"),
    ],
    ids=[
        "int-5000-digits",
        "nested-100k",
        "git-str",
        "ci-list",
        "git-commit-int",
        "version-true",
        "version-float",
        "generated-at-object",
        "note-list",
    ],
)
def test_a_hostile_report_is_one_line(tmp_path: Path, content: str, says: str) -> None:
    """Issue 24 item 14: a ValueError, a RecursionError and an AttributeError traceback,
    and schema_version true or 2.0 read as a version."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ReportError) as exc:
        load(path)
    text = _one_line(exc)
    assert text.startswith(str(path)) and says in text
