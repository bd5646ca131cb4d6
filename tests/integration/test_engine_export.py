"""Exports for continuous-benchmarking engines, on the report of a real pytester run,
validated against each format's published definition:

- Bencher Metric Format: the JSON schema published at
  https://bencher.dev/docs/reference/bencher-metric-format/ (``$id``
  https://bencher.dev/bmf.json), and its limits there: a measure's slug at most 64
  characters, a benchmark's name at most 1024.
- github-action-benchmark's ``customSmallerIsBetter``: the ``BenchmarkResult`` interface in
  benchmark-action/github-action-benchmark src/extract.ts (``name: string; value: number;
  range?: string; unit: string; extra?: string``), read as a JSON array by its
  ``extractCustomBenchmarkResult``; a range is scaled when it matches
  ``(\\+-|±)\\s*\\d.+`` (src/extractRangeInfo.ts).

The expected figures are computed here from the report's samples with ``statistics``."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_neuronperf.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SUITE = """
import pytest, torch

def test_relu(neuron_profile):
    neuron_profile(torch.relu, torch.randn(64), name="relu")

def test_two_regions(neuron_profile):
    x = torch.randn(64)
    with neuron_profile.region("add"):
        x + 1
    neuron_profile(torch.sigmoid, x, name="sigmoid")

def test_broken(neuron_profile):
    neuron_profile(torch.relu, torch.randn(8), name="lost")
    assert False
"""

RUN = ("-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-rounds=5")

# Published by Bencher (bencher-metric-format reference page), as given there.
BMF_SCHEMA: dict[str, Any] = {
    "$id": "https://bencher.dev/bmf.json",
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}

# github-action-benchmark's BenchmarkResult (src/extract.ts) as a schema of the array its
# custom tools read: the interface's fields and types, nothing else.
GAB_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "value": {"type": "number"},
            "range": {"type": "string"},
            "unit": {"type": "string"},
            "extra": {"type": "string"},
        },
        "required": ["name", "value", "unit"],
        "additionalProperties": False,
    },
}
GAB_RANGE = re.compile(r"(?P<prefix>(\+-|±)\s*)(?P<value>\d.+)")
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@pytest.fixture
def run(pytester: pytest.Pytester) -> Path:
    """A real run: its JSON report, and its Bencher export written by the run itself."""
    pytester.makepyfile(test_model=SUITE)
    pytester.runpytest_inprocess(
        *RUN, "--neuron-profile-json=report.json", "--neuron-profile-export=bencher:bmf.json"
    ).assert_outcomes(passed=2, failed=1)
    return pytester.path


def _export(capsys: pytest.CaptureFixture[str], report: Path, fmt: str) -> Any:
    assert main(["export", str(report), "--format", fmt]) == 0
    return json.loads(capsys.readouterr().out)


def _measured(report: Path) -> dict[str, dict[str, Any]]:
    """Benchmark name -> the report's measurement, for the tests that passed."""
    doc = json.loads(report.read_text())
    return {
        f"{m['measurement']['test_id']} [{m['measurement']['region']}]": m["measurement"]
        for m in doc["measurements"]
        if m["status"] != "test failed"
    }


def _quartiles(samples: list[float]) -> tuple[float, float, float]:
    """25th, 50th and 75th percentile ("inclusive": numpy's linear method); one sample
    (a with-region runs once) is all three."""
    if len(samples) == 1:
        return samples[0], samples[0], samples[0]
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    assert median == statistics.median(samples)
    return q1, median, q3


def test_bencher_export_follows_the_published_schema(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bmf = _export(capsys, run / "report.json", "bencher")
    jsonschema.validate(bmf, BMF_SCHEMA)
    measured = _measured(run / "report.json")
    # One benchmark per test and region; the failed test's region is left out.
    assert sorted(bmf) == sorted(measured)
    assert not any("lost" in name for name in bmf)
    for name, m in measured.items():
        assert len(name) <= 1024
        measures = bmf[name]
        assert all(SLUG.match(k) and len(k) <= 64 for k in measures)
        assert measures["ops"] == {"value": m["ops"]}
        assert measures["kernels"] == {"value": m["kernels"]}
        for measure, field in (("device-time-us", "device_us"), ("host-time-us", "host_us")):
            q1, median, q3 = _quartiles(m[field]["samples"])
            got = measures[measure]
            assert got["value"] == pytest.approx(median, rel=1e-9)
            assert (got["lower_value"], got["upper_value"]) == pytest.approx((q1, q3), rel=1e-9)
            assert got["lower_value"] <= got["value"] <= got["upper_value"]
    # The run's own export: the same benchmarks and measures (its samples are unrounded,
    # the report's are rounded to 1 ns, so values agree to 1 ns).
    direct = json.loads((run / "bmf.json").read_text())
    jsonschema.validate(direct, BMF_SCHEMA)
    assert {k: sorted(v) for k, v in direct.items()} == {k: sorted(v) for k, v in bmf.items()}
    for name, measures in direct.items():
        for measure, metric in measures.items():
            assert metric["value"] == pytest.approx(bmf[name][measure]["value"], abs=1e-3)


def test_github_action_benchmark_export_follows_its_interface(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = _export(capsys, run / "report.json", "github-action-benchmark")
    jsonschema.validate(items, GAB_SCHEMA)
    names = [i["name"] for i in items]
    assert len(names) == len(set(names)), "the action keys its charts by name"
    measured = _measured(run / "report.json")
    by_name = {i["name"]: i for i in items}
    assert len(items) == 4 * len(measured)
    for bench, m in measured.items():
        assert by_name[f"{bench} ops"] == {"name": f"{bench} ops", "unit": "ops", "value": m["ops"]}
        assert by_name[f"{bench} kernels"]["value"] == m["kernels"]
        for measure, field in (("device-time-us", "device_us"), ("host-time-us", "host_us")):
            q1, median, q3 = _quartiles(m[field]["samples"])
            item = by_name[f"{bench} {measure}"]
            assert item["unit"] == "us"
            assert item["value"] == pytest.approx(median, rel=1e-9)
            found = GAB_RANGE.match(item["range"])
            assert found is not None
            assert float(found["value"]) == pytest.approx((q3 - q1) / 2, abs=1e-3)
            assert f"median of {len(m[field]['samples'])} rounds" in item["extra"]


def test_export_of_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "baseline.json"
    bad.write_text('{"schema_version": 1, "device_kind": "cpu", "entries": {}}')
    out = tmp_path / "out.json"
    assert main(["export", str(bad), "--format", "bencher", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a pytest-neuronperf report" in err
    assert not out.exists()


def test_export_setting_rejects_an_unknown_format(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_model=SUITE)
    result = pytester.runpytest_inprocess(*RUN, "--neuron-profile-export=csv:out.csv")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--neuron-profile-export='csv:out.csv': expected FORMAT:PATH*"])
    assert not (pytester.path / "out.csv").exists()
