"""The baseline store under hostile conditions (issue 24): no entry lost, no damaged file
replaced by a partial run, no temporary file left behind. Real pytest runs (pytester)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_recording import as_processes

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.store import dumps, file_name, parse

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NAME = file_name(CpuBackend().device_kind())
FILE = Path(".neuronperf") / NAME

TWO_REGIONS = """
import pytest
import torch

{marker}
def test_t(neuron_profile):
    x = torch.ones(64)
    neuron_profile(lambda: torch.relu(x), name="one")
    neuron_profile(lambda: torch.relu(x) + x, name="two")

def test_other(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="other")
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        "--neuron-profile-rounds=3",
        "--neuron-profile-warmup=1",
        "--neuron-profile-work=off",
        *args,
    )


def said(result: pytest.RunResult) -> str:
    """The terminal output with its wrapped lines joined."""
    return " ".join(line.strip() for line in result.stdout.lines)


def entries(path: Path) -> dict[str, dict[str, object]]:
    loaded: dict[str, dict[str, object]] = json.loads(path.read_text())["entries"]
    return loaded


def test_an_over_budget_region_under_update_keeps_every_entry_of_its_test(
    pytester: pytest.Pytester,
) -> None:
    """Item 1: region 'two' over budget was removed as stale and 'one' of the failed test
    rewritten. A test with a region that failed is neither written nor removed."""
    pytester.makepyfile(test_it=TWO_REGIONS.format(marker=""))
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=2)
    before = entries(pytester.path / FILE)
    assert set(before["test_it.py::test_t"]) == {"one", "two"}

    budget = '@pytest.mark.neuron_budget(region="two", max_ops=1)'
    pytester.makepyfile(test_it=TWO_REGIONS.format(marker=budget))
    result = run(pytester, "--neuron-profile-update")
    result.assert_outcomes(passed=1, failed=1)
    after = entries(pytester.path / FILE)
    assert after["test_it.py::test_t"] == before["test_it.py::test_t"]
    assert re.search(r"[1-9]\d* stale removed", result.stdout.str()) is None


ONE_TEST = """
import torch

def test_{name}(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
"""


def test_a_directory_shared_by_two_rootdirs_keeps_both_rootdirs_entries(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2: the second rootdir's update removed the first's entry ('file gone'). Entries
    of a store in a common ancestor are keyed relative to it (docs/baseline-store.md)."""
    shared = pytester.path / "mono" / ".neuronperf"
    monkeypatch.setenv("NEURONPERF_DIR", str(shared))
    for pkg in ("pkgA", "pkgB"):
        root = pytester.path / "mono" / pkg
        root.mkdir(parents=True)
        (root / "pytest.ini").write_text("[pytest]\n")
        (root / f"test_{pkg}.py").write_text(ONE_TEST.format(name=pkg))
    for pkg in ("pkgA", "pkgB"):
        monkeypatch.chdir(pytester.path / "mono" / pkg)
        result = run(pytester, "--neuron-profile-update")
        result.assert_outcomes(passed=1)
        assert re.search(r"[1-9]\d* stale removed", result.stdout.str()) is None
    assert sorted(entries(shared / NAME)) == [
        "pkgA/test_pkgA.py::test_pkgA",
        "pkgB/test_pkgB.py::test_pkgB",
    ]
    # Each rootdir compares against its own entry, and a test removed is removed.
    monkeypatch.chdir(pytester.path / "mono" / "pkgA")
    run(pytester).stdout.fnmatch_lines(["*1 same*"])
    (pytester.path / "mono" / "pkgA" / "test_pkgA.py").write_text(ONE_TEST.format(name="new"))
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=1)
    assert sorted(entries(shared / NAME)) == [
        "pkgA/test_pkgA.py::test_new",
        "pkgB/test_pkgB.py::test_pkgB",
    ]


def test_a_shared_stores_recording_footer_names_tests_as_this_rootdir_does(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The footer line on recording processes that ran apart names each test by its id in
    this rootdir, as the stale-entry line does, not by the shared store's key."""
    shared = pytester.path / "mono" / ".neuronperf"
    monkeypatch.setenv("NEURONPERF_DIR", str(shared))
    root = pytester.path / "mono" / "pkgA"
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_pkgA.py").write_text(ONE_TEST.format(name="pkgA"))
    monkeypatch.chdir(root)
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=1)
    data = json.loads((shared / NAME).read_text())
    # Four recording processes, two at this machine's speed, one at 0.8 and one at 1.25
    # times it: at least -20%..+25% apart however the pooling process runs.
    as_processes(data["entries"]["pkgA/test_pkgA.py::test_pkgA"]["relu"], (1.0, 1.0, 0.8, 1.25))
    (shared / NAME).write_text(json.dumps(data))
    result = run(pytester, "--neuron-profile-pool")
    result.assert_outcomes(passed=1)
    footer = " ".join(result.stdout.str().split())
    assert "ran further apart than the tolerance (test_pkgA.py::test_pkgA [relu] -" in footer
    assert "pkgA/test_pkgA.py" not in footer


def conflicted(path: Path, tmp: Path) -> bytes:
    """The file with a real git conflict: both branches re-recorded test_b's samples."""
    base = path.read_text()
    sides = []
    for n, scale in ((1, 1.5), (2, 2.5)):
        data = json.loads(base)
        host = data["entries"]["test_b.py::test_b"]["relu"]["host_us"]
        host["samples"] = [round(x * scale, 3) for x in host["samples"]]
        side = tmp / f"side{n}"
        side.write_text(dumps(parse(json.dumps(data), path, CpuBackend().device_kind())))
        sides.append(side)
    (tmp / "base").write_text(base)
    merged = subprocess.run(
        ["git", "merge-file", "-p", str(sides[0]), str(tmp / "base"), str(sides[1])],
        capture_output=True,
        check=False,
    ).stdout
    assert b"<<<<<<<" in merged
    path.write_bytes(merged)
    return merged


def two_modules(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_a=ONE_TEST.format(name="a"), test_b=ONE_TEST.format(name="b"))
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=2)
    return pytester.path / FILE


@pytest.mark.slow  # subprocesses (git, the CLI, a killed writer)
def test_a_conflicted_file_under_a_partial_update_keeps_both_sides(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Item 3: git conflict markers then `pytest test_a.py --neuron-profile-update` kept
    only test_a's entry, with no copy of the file."""
    path = two_modules(pytester)
    damaged = conflicted(path, tmp_path)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*has git conflict markers*neuronperf merge-baseline*"])

    result = run(pytester, "test_a.py", "--neuron-profile-update")
    result.assert_outcomes(passed=1)
    assert sorted(entries(path)) == ["test_a.py::test_a", "test_b.py::test_b"]
    assert "git conflict markers: both sides read" in said(result)
    assert f"kept as .neuronperf/{NAME}.damaged" in said(result)
    assert (path.parent / f"{NAME}.damaged").read_bytes() == damaged


def test_a_damaged_file_replaced_by_a_partial_update_is_kept_beside_it(
    pytester: pytest.Pytester,
) -> None:
    """Item 3: a file that does not read is replaced only with a copy kept beside it."""
    path = two_modules(pytester)
    cut = path.read_bytes()[:200]
    path.write_bytes(cut)
    result = run(pytester, "test_a.py", "--neuron-profile-update")
    result.assert_outcomes(passed=1)
    assert "was unreadable (is not valid JSON" in said(result)
    assert f"kept as .neuronperf/{NAME}.damaged" in said(result)
    assert (path.parent / f"{NAME}.damaged").read_bytes() == cut
    # A second damaged file does not overwrite the first copy.
    path.write_bytes(b"{")
    run(pytester, "test_a.py", "--neuron-profile-update").assert_outcomes(passed=1)
    assert (path.parent / f"{NAME}.damaged").read_bytes() == cut
    assert (path.parent / f"{NAME}.damaged.1").read_bytes() == b"{"


@pytest.mark.slow  # subprocesses (git, the CLI, a killed writer)
def test_merge_baseline_resolves_a_conflict_keeping_both_sides(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """Item 3: `neuronperf merge-baseline FILE` writes both sides' entries, HEAD's where
    both hold one, and refuses a file with no conflict to resolve in one line."""
    path = two_modules(pytester)
    before = entries(path)
    conflicted(path, tmp_path)
    cli = [sys.executable, "-m", "pytest_neuronperf", "merge-baseline", str(path)]
    done = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "2 entries kept, 1 that differ taken from HEAD's side" in done.stdout
    after = entries(path)
    assert sorted(after) == sorted(before)
    assert after["test_a.py::test_a"] == before["test_a.py::test_a"]
    run(pytester).assert_outcomes(passed=2)

    again = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert again.returncode == 2
    assert len(again.stderr.splitlines()) == 1
    assert "no git conflict" in again.stderr


KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from pytest_neuronperf.baselines import store

def die(*args):
    os.kill(os.getpid(), signal.SIGKILL)

old = store.load(Path(sys.argv[1]), sys.argv[2])
os.replace = die
store.write(old)
"""


@pytest.mark.slow  # subprocesses (git, the CLI, a killed writer)
def test_a_killed_writers_temporary_file_is_cleaned_and_never_committed(
    pytester: pytest.Pytester,
) -> None:
    """Item 4: `.cpu_x86_64.json.<pid>.<hex>.tmp` of a writer killed before its rename
    stayed in the committed directory. The next update removes it; git ignores it."""
    path = two_modules(pytester)
    kind = CpuBackend().device_kind()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(path.parent), kind], check=False
    )
    assert killed.returncode == -9
    left = list(path.parent.glob(f".{NAME}.*.tmp"))
    assert len(left) == 1
    subprocess.run(["git", "init", "-q", str(pytester.path)], check=True)
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=2)
    assert not left[0].exists()
    (path.parent / f"{NAME}.damaged").write_text("{")
    left[0].write_text("x")  # as if another writer was killed after the update
    subprocess.run(["git", "-C", str(pytester.path), "add", "-A"], check=True)
    listed = subprocess.run(
        ["git", "-C", str(pytester.path), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert f".neuronperf/{NAME}" in listed
    assert f".neuronperf/{NAME}.damaged" not in listed
    assert not any(name.endswith(".tmp") for name in listed)
