"""The neuronperf section of a real run fits the terminal pytest writes to: COLUMNS=80
and 120, a 300-character parametrize id, everything kept in JSON."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LONG = "v" * 300

MODULE = f"""
import pytest, torch

def rmsnorm_naive(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

@pytest.mark.neuron_budget(max_ops=6, max_flops=65568)
@pytest.mark.parametrize("case", [1], ids=["{LONG}"])
def test_naive(neuron_profile, case):
    neuron_profile(rmsnorm_naive, torch.randn(16, 1024), torch.randn(1024))

def test_exp(neuron_profile):
    neuron_profile(torch.exp, torch.ones(1024))
"""


@pytest.mark.parametrize("columns", [80, 120])
def test_no_line_is_wider_than_the_terminal(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    pytester.makepyfile(test_wide=MODULE)
    args = ("-p", "no:cacheprovider", "--neuron-profile", "--neuron-profile-rounds=3")
    # No baseline yet: the footer's sentence about recording them is 190 characters.
    result = pytester.runpytest_inprocess(*args, "--neuron-profile-json=report.json")
    result.assert_outcomes(passed=2)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if " neuronperf " in line)
    section = lines[start:]
    too_wide = [line for line in section if len(line) > columns]
    assert not too_wide, too_wide
    table = "\n".join(section)
    assert "::test_naive[vvv" in table and "test_wide.py::test_exp" in table
    assert "torch.exp" in table and "new measurements: run pytest" in table
    # The details stay under -v; the JSON report keeps the whole id.
    assert "region 'rmsnorm_naive' on cpu" not in table
    doc = json.loads((pytester.path / "report.json").read_text())
    ids = {r["measurement"]["test_id"] for r in doc["measurements"]}
    assert f"test_wide.py::test_naive[{LONG}]" in ids
    verbose = pytester.runpytest_inprocess(*args, "-v")
    verbose.stdout.fnmatch_lines(["region 'rmsnorm_naive' on cpu:*"])


def test_the_header_wraps_to_the_terminal(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pytester.makepyfile(test_wide=MODULE)
    settings = ("--neuron-profile-rounds=1000", "--neuron-profile-warmup=100")
    more = ("--neuron-profile-window=0.25", "--neuron-profile-threads=16")
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "--neuron-profile",
        *settings,
        *more,
        "--neuron-profile-heap=system",
        "--collect-only",
    )
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("neuronperf: backend="))
    header = [lines[start]] + [s for s in lines[start + 1 : start + 3] if s.startswith("  ")]
    assert all(len(line) <= 80 for line in header), header
    assert "heap=system" in " ".join(header) and "rounds=1000" in header[0]
