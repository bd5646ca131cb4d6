"""Paths that are not plain files, or far too large ones, given to the writers and readers
(issue 24 items 5-7): nothing of the system becomes a regular file, no reader hangs or
fills the memory; each refusal is one line."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.baselines.store import file_name

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DATA = Path(__file__).parent.parent / "data"
REPORT = DATA / "report_v1_rmsnorm.json"
MODULE = """
import torch

def test_a(neuron_profile):
    neuron_profile(torch.relu, torch.ones(64), name="relu")
"""
PYTEST = ["-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-rounds=2"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_neuronperf", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def drain(fifo: Path) -> list[bytes]:
    """Read the FIFO on a thread, as a consumer of a pipe would."""
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    threading.Thread(target=read, daemon=True).start()
    return got


@pytest.mark.slow  # subprocesses
def test_the_runs_reports_write_through_a_link_and_a_fifo(pytester: pytest.Pytester) -> None:
    """Item 5: a symbolic link and a FIFO at a report path became regular files."""
    pytester.makepyfile(test_it=MODULE)
    target = pytester.path / "target.md"
    target.write_text("")
    (pytester.path / "link.md").symlink_to(target)
    fifo = pytester.path / "out.json"
    os.mkfifo(fifo)
    got = drain(fifo)
    result = pytester.runpytest_subprocess(
        *PYTEST, "--neuron-profile-markdown=link.md", "--neuron-profile-json=out.json", timeout=60
    )
    result.assert_outcomes(passed=1)
    assert (pytester.path / "link.md").is_symlink()
    assert "relu" in target.read_text()
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert b'"pytest-neuronperf/report"' in got[0]


@pytest.mark.slow  # subprocesses
def test_compare_and_history_write_through_a_link_to_stdout(tmp_path: Path) -> None:
    """Item 5: `--markdown` and `-o` at a link to /proc/self/fd/1 replaced the link and
    nothing reached stdout."""
    out = tmp_path / "stdout"
    out.symlink_to("/proc/self/fd/1")
    done = cli("compare", str(REPORT), str(REPORT), "--markdown", str(out))
    assert done.returncode == 0, done.stderr
    assert "<!-- neuronperf-compare -->" in done.stdout
    assert out.is_symlink()
    done = cli("history", str(REPORT), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "<html" in done.stdout.lower() and out.is_symlink()


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_baseline_that_is_no_regular_file_is_refused_in_one_line(
    pytester: pytest.Pytester, kind: str
) -> None:
    """Item 6: a link to /dev/zero read 6 GB into a MemoryError; a FIFO hung the run."""
    pytester.makepyfile(test_it=MODULE)
    path = pytester.path / ".neuronperf" / file_name(CpuBackend().device_kind())
    path.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    result = pytester.runpytest_subprocess(*PYTEST, timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*neuronperf: baseline file*is not a regular file*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


@pytest.mark.slow  # subprocesses
def test_history_skips_a_fifo_in_a_directory_and_compare_refuses_one(tmp_path: Path) -> None:
    """Item 6: `neuronperf history DIR` hung on a *.json FIFO."""
    shutil.copy(REPORT, tmp_path / "a.json")
    os.mkfifo(tmp_path / "b.json")
    done = cli("history", str(tmp_path), "-o", str(tmp_path / "h.html"))
    assert done.returncode == 0, done.stderr
    done = cli("compare", str(REPORT), str(tmp_path / "b.json"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not a regular file" in done.stderr


@pytest.mark.slow  # subprocesses
def test_a_file_past_the_read_limit_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    """Item 6: a size cap, stated, with a setting to raise it."""
    done = cli("compare", str(REPORT), str(REPORT), env={"NEURONPERF_MAX_READ_MB": "0.001"})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "NEURONPERF_MAX_READ_MB" in done.stderr
    assert cli("compare", str(REPORT), str(REPORT)).returncode == 0


@pytest.mark.slow  # subprocesses
def test_a_gzip_that_expands_past_the_limit_is_refused_while_reading(tmp_path: Path) -> None:
    """Item 7: decompression was unbounded (4 GiB expanded: a MemoryError traceback)."""
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20) + b"{}", 9))
    assert bomb.stat().st_size < 64 << 10
    done = cli("report", str(bomb), env={"NEURONPERF_MAX_READ_MB": "1"})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "expands past" in done.stderr
    assert "NEURONPERF_MAX_READ_MB" in done.stderr


@pytest.mark.parametrize("where", ["a-file", "a-file/below"])
def test_a_trace_dir_that_is_a_file_is_a_usage_error(pytester: pytest.Pytester, where: str) -> None:
    """Item 8: every test failed with FileExistsError."""
    pytester.makepyfile(test_it=MODULE)
    (pytester.path / "a-file").write_text("")
    result = pytester.runpytest_inprocess(*PYTEST, f"--neuron-profile-trace-dir={where}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--neuron-profile-trace-dir*a-file is a file, not a directory*"])


FULL_DISK = """
import resource, signal, sys
import pytest
# Writes past 2,000 bytes fail (EFBIG), as on a full disk; the signal would kill instead.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
sys.exit(pytest.main(sys.argv[1:]))
"""
OVER_BUDGET = """
import pytest
import torch

@pytest.mark.neuron_budget(max_ops=1)
@pytest.mark.parametrize("i", range(3))
def test_t(neuron_profile, i):
    neuron_profile(lambda x: torch.relu(x) + x, torch.ones(64), name="r")
"""


@pytest.mark.slow  # a subprocess
def test_traces_that_cannot_be_written_are_said_once_and_never_pointed_at(
    pytester: pytest.Pytester,
) -> None:
    """Item 8: traces to a full disk were empty or cut files, exit 0, no word, and each
    failure pointed at one."""
    pytester.makepyfile(test_it=OVER_BUDGET)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            FULL_DISK,
            *PYTEST,
            "--neuron-profile-trace-dir=traces",
            "-p",
            "no:randomly",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert out.count("could not be written") == 1, out
    assert "trace: " not in out
    assert list((pytester.path / "traces").iterdir()) == []
