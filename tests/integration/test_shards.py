"""A suite split over CI shards records and compares as if it had run once.

Three pytester shards, each a different test module, each running
``--neuron-profile-update`` on its own copy of the committed baseline directory: module
test_a alone, module test_b alone, and every module with test_c's tests kept by a
pytest-split-like plugin (it deselects the rest through ``pytest_deselected``, as
pytest-split does). A serial run updates its own copy of the same directory.

What is run-dependent: times. Two runs never sample the same microseconds, so an entry
two runs both measured afresh differs in its samples. With three rounds the gate does not
judge times (stats.MIN_ROUNDS), so an update keeps every entry whose counts still hold byte
for byte; entries are then the same input in the serial run and in the shards, and the
merged file must equal the serial run's byte for byte. The one entry added in this update
(test_b's new test) was measured separately by the serial run and by shard 2: for it the
keys, counts, op multiset and round count are compared, not the samples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.baselines import store
from pytest_neuronperf.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODULES = {
    "test_a": """
import torch

def test_relu(neuron_profile):
    neuron_profile(torch.relu, torch.randn(64), name="relu")

def test_mul(neuron_profile):
    x = torch.randn(64)
    neuron_profile(lambda: x * x * 2, name="mul2")
""",
    "test_b": """
import os, torch

def test_sigmoid(neuron_profile):
    neuron_profile(torch.sigmoid, torch.randn(64), name="sigmoid")

if os.environ.get("NEW_TEST"):
    def test_tanh(neuron_profile):
        neuron_profile(torch.tanh, torch.randn(64), name="tanh")
""",
    "test_c": """
import torch

def test_sum(neuron_profile):
    neuron_profile(torch.sum, torch.randn(64), name="sum")

def test_regions(neuron_profile):
    x = torch.randn(64)
    with neuron_profile.region("add"):
        x + 1
""",
}

# pytest-split's way of selecting a group: keep some items, report the rest deselected.
SPLIT_PLUGIN = """
def pytest_collection_modifyitems(config, items):
    keep = [i for i in items if i.nodeid.startswith("test_c.py::")]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep
"""

RUN = ("-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1")
BASELINE = "cpu_x86_64.json"


def _update(pytester: pytest.Pytester, directory: str, report: str, *args: str) -> None:
    result = pytester.runpytest_inprocess(
        *RUN,
        "--neuron-profile-update",
        f"--neuron-profile-dir={directory}",
        f"--neuron-profile-json={report}",
        *args,
    )
    assert result.ret == 0, result.stdout.str()


def _merge(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    status = main(["merge", *map(str, args)])
    return status, capsys.readouterr().err


@pytest.fixture
def shards(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, Path]]:
    """The committed directory, then the serial update and three shard updates of copies
    of it, with test_b gaining a test in between."""
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    pytester.makepyfile(**MODULES)
    pytester.makepyfile(split_plugin=SPLIT_PLUGIN)
    pytester.syspathinsert()
    _update(pytester, "committed", "committed.json")
    monkeypatch.setenv("NEW_TEST", "1")
    for name in ("serial", "shard1", "shard2", "shard3"):
        shutil.copytree(pytester.path / "committed", pytester.path / name)
    _update(pytester, "serial", "serial.json")
    _update(pytester, "shard1", "shard1.json", "test_a.py")
    _update(pytester, "shard2", "shard2.json", "test_b.py")
    _update(pytester, "shard3", "shard3.json", "-p", "split_plugin")
    return pytester.path, {n: pytester.path / n for n in ("serial", "shard1", "shard2", "shard3")}


def _entries(path: Path) -> dict[tuple[str, str], Any]:
    doc = json.loads(path.read_text())
    return {(t, r): e for t, regions in doc["entries"].items() for r, e in regions.items()}


def test_merged_shard_baselines_are_the_serial_update(
    shards: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, dirs = shards
    committed = _entries(root / "committed" / BASELINE)
    assert len(committed) == 5
    # Each shard kept the entries of the tests it did not run, byte for byte: whole
    # modules absent (shards 1 and 2) and pytest-split's deselected tests (shard 3).
    for n in ("shard1", "shard2", "shard3"):
        held = _entries(dirs[n] / BASELINE)
        assert {k: v for k, v in held.items() if k in committed} == committed
    new_key = ("test_b.py::test_tanh", "tanh")
    assert new_key in _entries(dirs["shard2"] / BASELINE)
    assert new_key not in _entries(dirs["shard1"] / BASELINE)

    merged = root / "merged" / BASELINE
    status, err = _merge(
        capsys,
        *(dirs[n] / BASELINE for n in ("shard1", "shard2", "shard3")),
        "--base",
        root / "committed" / BASELINE,
        "-o",
        merged,
    )
    assert status == 0, err
    serial_text = (dirs["serial"] / BASELINE).read_text()
    serial, ours = _entries(dirs["serial"] / BASELINE), _entries(merged)
    assert sorted(ours) == sorted(serial) == sorted([*committed, new_key])
    # Unchanged entries (the same input in both): the bytes of the serial run's file.
    for key in committed:
        assert json.dumps(ours[key]) == json.dumps(serial[key]) == json.dumps(committed[key])
    # The new entry, measured separately by each: everything but the time samples.
    for field in ("ops", "kernels", "op_counts", "kernel_counts", "rounds", "environment"):
        assert ours[new_key][field] == serial[new_key][field]
    assert ours[new_key]["device_us"]["n"] == serial[new_key]["device_us"]["n"] == 3
    # The whole file: the serial run's, with the new entry as shard 2 measured it.
    serial_file = store.parse(serial_text, dirs["serial"] / BASELINE, "cpu:x86_64")
    assert store.dumps(serial_file) == serial_text
    shard2 = store.parse((dirs["shard2"] / BASELINE).read_text(), merged, "cpu:x86_64")
    tanh = shard2.get(*new_key)
    assert tanh is not None
    assert merged.read_text() == store.dumps(serial_file.merged({new_key: tanh}))


def test_merged_shard_reports_compare_cleanly_with_the_serial_report(
    shards: tuple[Path, dict[str, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = shards
    status, err = _merge(
        capsys, *(root / f"shard{i}.json" for i in (1, 2, 3)), "-o", root / "merged.json"
    )
    assert status == 0, err
    merged = json.loads((root / "merged.json").read_text())
    serial = json.loads((root / "serial.json").read_text())

    def keyed(doc: dict[str, Any]) -> dict[tuple[str, str], Any]:
        return {
            (m["measurement"]["test_id"], m["measurement"]["region"]): m
            for m in doc["measurements"]
        }

    assert sorted(keyed(merged)) == sorted(keyed(serial))
    for key, m in keyed(merged).items():
        s = keyed(serial)[key]
        assert (m["measurement"]["ops"], m["measurement"]["op_counts"]) == (
            s["measurement"]["ops"],
            s["measurement"]["op_counts"],
        )
        assert m["baseline"] == s["baseline"]
    assert merged["summary"]["measurements"] == serial["summary"]["measurements"] == 6
    status = main(
        [
            "compare",
            str(root / "serial.json"),
            str(root / "merged.json"),
            "--fail-on",
            "regressed,over-budget,test-failed,changed,improved,new,removed",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.count("same") >= 6


def _edited(src: Path, dst: Path, edit: Any) -> Path:
    doc = json.loads(src.read_text())
    edit(doc)
    dst.write_text(json.dumps(doc, indent=2))
    return dst


def _scale_relu(by: float) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        entry = doc["entries"]["test_a.py::test_relu"]["relu"]
        entry["device_us"]["samples"] = [v * by for v in entry["device_us"]["samples"]]

    return edit


def _v1(doc: dict[str, Any]) -> None:
    doc["schema_version"] = 1


def _on_gpu(doc: dict[str, Any]) -> None:
    for m in doc["measurements"]:
        m["measurement"]["device_kind"] = "cuda:NVIDIA H100"


def _gpu_baselines(doc: dict[str, Any]) -> None:
    doc["device_kind"] = "cuda:NVIDIA H100"


def test_merge_bad_input_is_one_line_exit_2_and_writes_nothing(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each bad shard set from one real shard's report and baseline file, edited here as
    said: a report of schema version 1 beside one of 2, a shard measured on another device
    kind, the same report twice (every region in two shards), a baseline file whose relu
    entry has its device samples scaled by 1.1 (the test measured in two shards; with --base
    a file whose samples were scaled by 0.9, so both shards changed it), a baseline
    file of another device kind, a trace given as a shard, a directory, a missing file."""
    pytester.makepyfile(test_a=MODULES["test_a"])
    _update(pytester, "dir", "shard.json")
    root = pytester.path
    report, baseline = root / "shard.json", root / "dir" / BASELINE
    twice = root / "twice.json"
    twice.write_text(report.read_text())
    trace = root / "trace.json"
    trace.write_text('{"traceEvents": []}')
    cases: list[tuple[list[Any], str]] = [
        ([report, _edited(report, root / "v1.json", _v1)], "schema version 1"),
        ([report, _edited(report, root / "gpu.json", _on_gpu)], "cuda:NVIDIA H100"),
        ([report, twice], "is in both"),
        ([baseline, _edited(baseline, root / "b2.json", _scale_relu(1.1))], "more than one shard"),
        (
            [
                baseline,
                _edited(baseline, root / "b3.json", _scale_relu(1.1)),
                "--base",
                _edited(baseline, root / "b3base.json", _scale_relu(0.9)),
            ],
            "more than one shard",
        ),
        ([baseline, _edited(baseline, root / "b4.json", _gpu_baselines)], "device kinds"),
        ([report, trace], "neither a pytest-neuronperf report nor a baseline file"),
        ([report, baseline], "mix JSON reports and baseline files"),
        ([report, root / "dir"], "not a regular file"),
        ([report, root / "missing.json"], "no such file"),
    ]
    for n, (args, words) in enumerate(cases):
        out = root / f"out{n}.json"
        status, err = _merge(capsys, *args, "-o", out)
        assert (status, err.count("\n")) == (2, 1), (args, err)
        assert err.startswith("neuronperf merge: error: ") and words in err, err
        assert not out.exists()
