"""``neuronperf report`` on Neuron profiles: a SystemProfileEvents Parquet file, an ingested
profile directory, a raw profile output directory; bad input is one line and exit 2.

What these tests stand on: the same documented schema as test_neuron_runtime.py (Parquet
written by the tests; none seen from hardware) and the documented layouts: a profile
ingested with ``--data-path`` under ``profiles/global/<name>@latest/``
(how-to-analyze-profile-output.rst), a raw session holding ``ntrace.pb`` /
``trace_info.pb`` (how-to-profile-workload.rst). ``neuron-explorer`` itself is not
installable here: one test puts a stand-in script of that name on PATH that checks the
documented flags and writes where the docs say the real one writes, so that the ingest
plumbing runs; what the real binary writes is checked on hardware by verify_neuron.py.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from test_neuron_runtime import OTHER_PID, lnc2, row, write

from pytest_neuronperf.backends.neuron.offline import is_neuron_input
from pytest_neuronperf.cli.main import main


def _profile(tmp_path: Path) -> Path:
    rows = lnc2(1_000_000, 1_300_000, "1", model=3) + lnc2(1_400_000, 1_500_000, "2", model=3)
    rows += lnc2(1_600_000, 2_000_000, "3", model=4)
    rows.append(row(2_100_000, 2_150_000, flow=["4"], model=4, pid=OTHER_PID))
    rows.append(row(900_000, 950_000, name="nrt_model_submit", flow=["1"]))
    return write(tmp_path / "SystemProfileEvents.parquet", rows)


def test_parquet_file_prints_executions_per_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _profile(tmp_path)
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    # model 3: 300 + 100 µs in 2 executions; model 4: 400 + 50 µs in 2 (two processes).
    assert "4 executions from 7 nc_exec_running rows, device 850.0 µs" in out
    lines = {line.split()[1]: line.split()[2:] for line in out.splitlines() if "model " in line}
    assert lines["3"] == ["2", "400.0", "200.0"] and lines["4"] == ["2", "450.0", "225.0"]


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _profile(tmp_path)
    assert main(["report", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"]["kind"] == "neuron-runtime-trace" and doc["source"]["rows"] == 7
    models = {r["measurement"]["region"]: r["measurement"] for r in doc["measurements"]}
    assert sum(m["executions"] for m in models.values()) == 4
    assert sum(m["device_us"]["median"] for m in models.values()) == 850.0
    assert {n: m["executions"] for n, m in models.items()} == {"model 3": 2, "model 4": 2}
    assert models["model 3"]["kernels"] == 2 and models["model 3"]["median_us"] == 200.0


def test_ingested_profile_directory_and_data_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "data" / "profiles" / "global" / "run@latest"
    profile.mkdir(parents=True)
    _profile(profile)
    for path in (profile, tmp_path / "data"):
        assert is_neuron_input(path)
        assert main(["report", str(path)]) == 0
        assert "4 executions" in capsys.readouterr().out


def _session(tmp_path: Path) -> Path:
    session = tmp_path / "out" / "i-0abc_pid_123" / "1700000000"
    session.mkdir(parents=True)
    (session / "ntrace.pb").write_bytes(b"\x08\x01")
    (session / "trace_info.pb").write_bytes(b"\x08\x01")
    return tmp_path / "out"


def test_raw_profile_without_neuron_explorer_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = _session(tmp_path)
    assert is_neuron_input(out)
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs the neuron-explorer binary" in err


STAND_IN = """#!{python}
# Stand-in for neuron-explorer: checks the documented flags, writes the documented output.
import shutil, sys
args = sys.argv[1:]
assert args[0] == "view" and "--ingest-only" in args, args
for flag in ("--ignore-instruction-trace", "--ignore-dma-trace", "--ignore-event-trace"):
    assert flag in args, flag
session, data, name = (args[args.index(f) + 1] for f in ("-d", "--data-path", "--display-name"))
assert session.endswith("1700000000"), session
out = f"{{data}}/profiles/global/{{name}}@latest"
shutil.copytree("{profile}", out)
"""


@pytest.mark.slow
def test_raw_profile_is_ingested_with_neuron_explorer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "made"
    profile.mkdir()
    _profile(profile)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "neuron-explorer"
    tool.write_text(STAND_IN.format(python=sys.executable, profile=profile))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main(["report", str(_session(tmp_path))]) == 0
    assert "4 executions" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "not a readable Parquet file"),
        (b"PAR1garbagePAR1", "not a readable Parquet file"),
    ],
)
def test_bad_parquet_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    path = tmp_path / "SystemProfileEvents.parquet"
    path.write_bytes(content)
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("neuronperf: error: ") and says in err


def test_profile_without_executions_and_region_flag_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "SystemProfileEvents.parquet", [row(1, 2, name="nrt_execute")])
    assert main(["report", str(path)]) == 2
    assert "no nc_exec_running events" in capsys.readouterr().err
    assert main(["report", str(_profile(tmp_path)), "--region", "x"]) == 2
    assert "--region applies to Kineto traces" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.parquet")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_directory_without_neuron_files_is_left_to_the_kineto_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not is_neuron_input(tmp_path)
    assert main(["report", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def _report_json(profile: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    capsys.readouterr()
    assert main(["report", str(profile), "--json"]) == 0
    out.write_text(capsys.readouterr().out)
    return out


def test_json_is_the_run_reports_layout_and_compare_and_history_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import jsonschema

    from pytest_neuronperf.reports.json import schema

    (tmp_path / "main").mkdir()
    (tmp_path / "pr").mkdir()
    base = _report_json(_profile(tmp_path / "main"), tmp_path / "main.json", capsys)
    # The pull request's profile: model 4 runs once more (a third execution of 100 µs).
    extra = [*lnc2(2_200_000, 2_300_000, "5", model=4)]
    rows = lnc2(1_000_000, 1_300_000, "1", model=3) + lnc2(1_400_000, 1_500_000, "2", model=3)
    rows += lnc2(1_600_000, 2_000_000, "3", model=4) + extra
    rows.append(row(2_100_000, 2_150_000, flow=["4"], model=4, pid=OTHER_PID))
    new = _report_json(
        write(tmp_path / "pr" / "SystemProfileEvents.parquet", rows), tmp_path / "pr.json", capsys
    )
    for path in (base, new):
        jsonschema.validate(json.loads(path.read_text()), schema())
    # The same profile twice: nothing moved.
    assert main(["compare", str(base), str(base), "--fail-on", "regressed,changed,new"]) == 0
    assert "2 same of 2 regions" in capsys.readouterr().out
    # One more execution of model 4: its kernels (executions) went 2 -> 3.
    assert main(["compare", str(base), str(new), "--fail-on", "regressed"]) == 1
    out = capsys.readouterr().out
    [line] = [ln for ln in out.splitlines() if ln.startswith("regressed ")]
    assert "model 4" in line and "2 → 3" in line
    assert "ran 3 kernels, baseline 2 (+ model 4 ×1)" in out
    html = tmp_path / "history.html"
    assert main(["history", str(base), str(new), "-o", str(html)]) == 0
    assert "model 4" in html.read_text()
