"""session/logs.py: a failing compiled test's captured log is the user's, not torch's trace
records; torch's own trace file (TORCH_TRACE) still gets them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# backend="eager": Dynamo traces and logs its structured trace as any backend does, without
# inductor's compile time.
MODULE = """
import logging, torch

@torch.compile(backend="eager")
def double(x):
    return torch.relu(x) * 2

def test_compiled_fails(neuron_profile):
    logging.getLogger("mine").warning("the user's own line")
    neuron_profile(double, torch.ones(8), name="double")
    assert False

def test_caplog_holds_the_users_records_only(caplog):
    caplog.set_level("DEBUG")
    torch._dynamo.reset()
    double(torch.ones(4))
    logging.getLogger("mine").info("mine")
    names = {r.name for r in caplog.records}
    assert "torch.__trace" not in names and "mine" in names, names
"""


def test_a_failing_compiled_test_shows_the_users_log_not_torchs_trace(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_logged=MODULE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--neuron-profile")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "Captured log call" in out and "the user's own line" in out
    assert "torch.__trace" not in out


@pytest.mark.slow  # a subprocess: torch reads TORCH_TRACE when it is imported
def test_torch_trace_files_still_get_the_records(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TORCH_TRACE", str(tmp_path / "trace"))
    pytester.makepyfile(test_logged=MODULE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "caplog")
    result.assert_outcomes(passed=1)
    [log] = (tmp_path / "trace").iterdir()
    assert '"dynamo_start"' in log.read_text()


PERF_WITH_LOGS = """
import logging, sys, pytest, torch

@pytest.mark.neuron_budget(max_ops=0)
def test_over(neuron_profile):
    for i in range(200):
        logging.getLogger("chatty").warning("debug line %d", i)
        print("stderr line", i, file=sys.stderr)
    neuron_profile(torch.relu, torch.ones(8), name="relu")
"""


def test_a_perf_failures_section_comes_before_the_captured_output(
    pytester: pytest.Pytester,
) -> None:
    """A reviewer reads what failed first, not after hundreds of captured log lines."""
    pytester.makepyfile(test_chatty=PERF_WITH_LOGS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    found = re.search(r"^-+ neuronperf -+$", out, re.M)
    assert found is not None, out[:2000]
    ours = found.start()
    assert ours < out.index("Captured stderr call") and ours < out.index("Captured log call")
    assert out.index("region 'relu' on cpu") < out.index("debug line 0")
