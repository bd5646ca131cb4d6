"""--neuron-profile-trace-dir: one trace per test and region, named safely, named in the
failure message, and read back by the offline report with the live figures."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_neuronperf.backends import CpuBackend
from pytest_neuronperf.measure.export import trace_filename
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement
from pytest_neuronperf.trace.offline import report_trace

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
HIDDEN = 64


def naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, 1e-6)


@pytest.fixture
def xw() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4, HIDDEN), torch.randn(HIDDEN)


def test_saved_trace_reads_back_with_the_live_figures(
    tmp_path: Path, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    runner = Runner(CpuBackend(), trace_dir=tmp_path)
    _, live = runner.measure_callable(
        naive, xw, {}, test_id="t.py::t", name="n", warmup=1, rounds=4
    )
    path = runner.trace_paths[("t.py::t", "n")]
    assert path == tmp_path / "t.py_t--n.json" and path.is_file()
    offline = report_trace(path).regions[0].measurement
    assert (offline.region, offline.rounds) == ("n", 4)
    assert (offline.ops, offline.op_counts, offline.kernel_counts) == (
        live.ops,
        live.op_counts,
        live.kernel_counts,
    )
    # The same events, once live and once through JSON (rounded to the ns).
    assert offline.device_us.samples == pytest.approx(live.device_us.samples, abs=0.01)


def test_nested_regions_share_their_outer_region_trace(
    tmp_path: Path, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    runner = Runner(CpuBackend(), trace_dir=tmp_path)
    done: list[Measurement] = []
    with runner.region("outer", test_id="t", on_done=done.append):
        naive(*xw)
        with runner.region("inner", test_id="t", on_done=done.append):
            fused(*xw)
    assert runner.trace_paths[("t", "outer")] == runner.trace_paths[("t", "inner")]
    assert [p.name for p in tmp_path.iterdir()] == ["t--outer.json"]
    report = report_trace(tmp_path / "t--outer.json")
    by_name = {r.measurement.region: r.measurement for r in report.regions}
    live = {m.region: m for m in done}
    assert by_name["outer"].ops == live["outer"].ops == 7
    assert by_name["inner"].op_counts == live["inner"].op_counts == {"aten::rms_norm": 1}


def test_file_names_are_safe_and_distinct(
    tmp_path: Path, xw: tuple[torch.Tensor, torch.Tensor]
) -> None:
    odd = 'tests/test_x.py::test_a[cuda:0-"q"/<x>|*?]'
    name = trace_filename(odd, "my region/1")
    assert name == "tests_test_x.py_test_a_cuda_0-_q_x--my_region_1.json"
    long_name = trace_filename("t" * 500, "r" * 100)
    assert len(long_name) < 200 and long_name != trace_filename("t" * 499, "r" * 100)
    runner = Runner(CpuBackend(), trace_dir=tmp_path)
    for test_id in ("t.py::test[a/b]", "t.py::test[a_b]"):
        runner.measure_callable(naive, xw, {}, test_id=test_id, name="r", warmup=0, rounds=1)
    paths = {runner.trace_paths[(t, "r")] for t in ("t.py::test[a/b]", "t.py::test[a_b]")}
    assert len(paths) == 2 and all(p.is_file() for p in paths)
    assert runner.trace_note("t.py::test[a/b]", ["r"]).startswith("\ntrace: ")


def test_failure_message_gives_the_trace_path(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it=f"""
import pytest, torch

def naive(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

@pytest.mark.neuron_budget(max_ops=1)
def test_naive(neuron_profile):
    neuron_profile(naive, torch.randn(4, {HIDDEN}), torch.ones({HIDDEN}), name="rmsnorm")

def test_fine(neuron_profile):
    with neuron_profile.region("block"):
        torch.relu(torch.ones(3))
"""
    )
    traces = pytester.path / "traces"
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        "--neuron-profile-rounds=2",
        "--neuron-profile-warmup=1",
        f"--neuron-profile-trace-dir={traces}",
    )
    result.assert_outcomes(failed=1, passed=1)
    failing = traces / "test_it.py_test_naive--rmsnorm.json"
    result.stdout.fnmatch_lines(
        ["*dispatched 6 ops, budget max_ops=1*", f"trace: {failing} (open it in *perfetto*"]
    )
    assert sorted(p.name for p in traces.iterdir()) == [
        "test_it.py_test_fine--block.json",
        "test_it.py_test_naive--rmsnorm.json",
    ]
    assert report_trace(failing).regions[0].measurement.ops == 6
    assert "trace:" not in "\n".join(line for line in result.stdout.lines if "test_fine" in line)
