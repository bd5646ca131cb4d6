"""A place that cannot be written at session end (an unwritable baseline directory, a report
path under a file): one line says what was not written and why, the neuronperf table and
pytest's summary are still printed, the old file is intact, and the exit status says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODULE = """
import os, torch

torch.set_num_threads(1)

def work(x):
    y = x * 2.0
    if os.environ.get("NP_EXTRA_OP"):
        y = y + 1.0
    return y.sum()

def test_a(neuron_profile):
    neuron_profile(work, torch.ones(64), name="work")
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1", *args
    )


@contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` made unwritable: by its mode, or for root (whom modes do not stop) by
    the immutable attribute."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)]).returncode != 0:
        pytest.skip("running as root where chattr +i does not work: nothing stops root writing")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(directory)], check=True)


def test_unwritable_baseline_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_it=MODULE)
    run(pytester, "--neuron-profile-update").assert_outcomes(passed=1)
    directory = pytester.path / ".neuronperf"
    (path,) = directory.glob("cpu_*.json")
    before = path.read_bytes()
    monkeypatch.setenv("NP_EXTRA_OP", "1")  # a change the update would write
    with unwritable(directory):
        result = run(pytester, "--neuron-profile-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes(passed=1)  # pytest's summary line is there
    result.stdout.fnmatch_lines(
        [
            "*= neuronperf =*",
            "test_it.py::test_a *work*",
            f"baselines NOT written: .neuronperf/{path.name}: cannot be written (*); "
            f".neuronperf/{path.name} is left as it was",
            "*= 1 passed in *",
        ]
    )
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert path.read_bytes() == before
    # No temp file left (the .gitignore is the first update's, issue 24 item 4).
    assert sorted(p.name for p in directory.iterdir()) == [".gitignore", path.name]
    # Once writable again the same update goes through.
    result = run(pytester, "--neuron-profile-update")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["baselines written to *: 0 added, 1 changed*"])


def test_unwritable_report_paths(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MODULE)
    (pytester.path / "blocker").write_text("a file where a directory would be\n")
    result = run(
        pytester,
        "--neuron-profile",
        "--neuron-profile-json=blocker/report.json",
        "--neuron-profile-markdown=blocker/report.md",
        "--neuron-profile-html=out/report.html",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*= neuronperf =*",
            "test_it.py::test_a *work*",
            "report NOT written: blocker/report.json (blocker is a file, not a directory)",
            "report NOT written: blocker/report.md (blocker is a file, not a directory)",
            "*= 1 passed in *",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    # One unwritable place costs its own file only.
    assert "<html" in (pytester.path / "out" / "report.html").read_text()


def test_a_run_that_failed_keeps_its_exit_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=MODULE + "\ndef test_fails():\n    assert False\n")
    (pytester.path / "blocker").write_text("")
    result = run(pytester, "--neuron-profile", "--neuron-profile-json=blocker/report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["report NOT written: blocker/report.json (blocker is a file, not a directory)"]
    )
    # The exit status the JSON would have carried is the run's own.
    run(pytester, "--neuron-profile", "--neuron-profile-json=ok.json")
    assert json.loads((pytester.path / "ok.json").read_text())["exit_status"] == 1
