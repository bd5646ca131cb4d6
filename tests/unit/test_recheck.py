from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import helpers
import pytest

from pytest_neuronperf.model import Record, Status
from pytest_neuronperf.session import recheck
from pytest_neuronperf.settings import defaults, resolve

# Settings that decide what a fresh process measures; the rest name files or verdicts.
MEASURING = {
    "backend", "rounds", "warmup", "window", "threads", "heap", "compare_host", "count_work",
    "reference", "memory", "tolerance", "neuron_config",
}  # fmt: skip


def test_a_fresh_process_resolves_the_sessions_measuring_settings() -> None:
    mine = replace(
        defaults(),
        backend="cpu",
        rounds=7,
        warmup=0,
        window=0.25,
        threads=3,
        heap="system",
        compare_host=True,
        count_work=False,
        reference=False,
        memory=True,
        tolerance=0.025,
        neuron_config=(("max_events_per_nc", "5"), ("modes", "RUNTIME")),
        update=True,
        pool=True,
    )
    env = recheck.child_env(mine, {"NEURONPERF_ROUNDS": "99", "PATH": "/bin"}, Path("/b"))
    theirs = resolve({}, {"neuron_profile_rounds": "50"}, env=env)
    for f in MEASURING:
        assert getattr(theirs, f) == getattr(mine, f), f
    assert theirs.profile_dir == Path("/b") and env["PATH"] == "/bin"
    # It measures; it never records.
    assert not theirs.update and not theirs.pool
    assert {f.name for f in fields(mine)} > MEASURING


def test_a_fresh_process_writes_only_its_own_report(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig()
    argv = recheck.child_argv(config, "t.py::t[a]", Path("/tmp/x.json"))
    assert argv[argv.index("pytest") + 1] == "t.py::t[a]"
    assert "--neuron-profile-json=/tmp/x.json" in argv
    assert "--neuron-profile-recheck=0" in argv
    assert argv[argv.index("-o") + 1] == "addopts="
    for output in ("trace-dir", "markdown", "html", "export"):
        assert f"--neuron-profile-{output}=" in argv
    settings = resolve(
        {"trace_dir": "", "markdown_path": "", "html_path": "", "export": ""},
        {"neuron_profile_html": "mine.html", "neuron_profile_trace_dir": "t"},
        env={"NEURONPERF_MARKDOWN": "mine.md"},
    )
    assert (settings.trace_dir, settings.markdown_path, settings.html_path) == (None, None, None)


def report(path: Path, regions: list[str]) -> None:
    records = [
        Record(helpers.measurement(region), "", Status.MEASURED).to_dict() for region in regions
    ]
    path.write_text(json.dumps({"measurements": records}))


def test_remeasure_reads_each_process_and_stops_at_one_that_broke(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfig()
    statuses = iter([1, 0, 3])
    seen: list[list[str]] = []

    def run(argv: list[str], env: dict[str, str]) -> int:
        seen.append(argv)
        status = next(statuses)
        if status in (0, 1):
            (out,) = (a for a in argv if a.startswith("--neuron-profile-json="))
            report(Path(out.split("=", 1)[1]), ["a", "b"])
        return status

    got = recheck.remeasure(config, defaults(), "t.py::t", Path("."), 5, run=run)
    assert [sorted(p) for p in got.processes] == [["a", "b"], ["a", "b"]]
    assert got.problem == "fresh process 3 exited with status 3"
    assert len(seen) == 3


def test_a_process_that_wrote_no_report_is_a_problem(pytester: pytest.Pytester) -> None:
    got = recheck.remeasure(pytester.parseconfig(), defaults(), "t", Path("."), 2, lambda a, e: 0)
    assert got.processes == () and got.problem == "fresh process 1 wrote no report"
