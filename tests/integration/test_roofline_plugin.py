"""Roofline budgets, report columns and the peaks ini key, end to end through pytester."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODELS = """
import pytest, torch

H = 64

def naive(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

@pytest.fixture
def xw():
    return torch.randn(4, H), torch.ones(H)
"""
# naive RMSNorm on 4 x 64: 4 FLOPs per element + 2 per row.
FLOPS = 4 * 4 * 64 + 2 * 4


def run(pytester: pytest.Pytester, body: str, peaks: str = "", *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_it=MODELS + body)
    if peaks:
        pytester.makeini(f"[pytest]\nneuron_profile_peaks =\n    {peaks}\n")
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=1", *args
    )


def test_max_flops_fails_with_the_sentence(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.neuron_budget(max_flops=1000)
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
        peaks="cpu:* = 1e12, 1e10",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*neuron_budget: region 'naive' did 1.03 kFLOP, budget max_flops=1000*"]
    )
    # The per-op table shows the work per op.
    result.stdout.fnmatch_lines(["*op*calls*GFLOP*MB moved*FLOP/B*% of bound*bound*"])


def test_max_flops_passes_and_report_has_the_columns(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        f"""
@pytest.mark.neuron_budget(max_flops={FLOPS})
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
    assert neuron_profile.last.work.flops == {FLOPS}
""",
        "cpu:* = 1e12, 1e10",
        "--neuron-profile",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*GFLOP*MB moved*FLOP/B*% of bound*bound*", "*naive*memory*"])


def test_min_roofline_fraction_fails_far_under_the_roof(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.neuron_budget(min_roofline_fraction=0.5)
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
        peaks="cpu:* = 1e18, 1e18",  # a roof no CPU reaches
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*neuron_budget: region 'naive' reached 0.0% of its memory bound (* GB/s of "
            "1e+09 GB/s), budget min_roofline_fraction=0.5*"
        ]
    )


def test_min_roofline_fraction_passes_under_a_low_roof(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.neuron_budget(min_roofline_fraction=0.5)
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
    assert neuron_profile.last.roofline.fraction > 1
""",
        peaks="cpu:* = 1, 1",
    )
    result.assert_outcomes(passed=1)


def test_roofline_budgets_need_the_callable_form(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
@pytest.mark.neuron_budget(max_flops=1e9, min_roofline_fraction=0.1)
def test_it(neuron_profile, xw):
    with neuron_profile.region("block"):
        naive(*xw)
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*region 'block' has budget max_flops=1e+09 but its FLOPs and bytes were not "
            "counted*neuron_profile(fn, *args)*",
            "*region 'block' has budget min_roofline_fraction=0.1 but*",
        ]
    )


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("max_flops=-1", "max_flops=-1: expected a number of FLOPs > 0"),
        ("max_flops='1e9'", "max_flops='1e9': expected a number of FLOPs > 0"),
        ("min_roofline_fraction=1.5", "min_roofline_fraction=1.5: expected a fraction > 0"),
        ("min_roofline_fraction=0", "min_roofline_fraction=0: expected a fraction > 0"),
    ],
)
def test_bad_roofline_budgets_are_usage_errors(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    result = run(
        pytester,
        f"""
@pytest.mark.neuron_budget({marker})
def test_it(neuron_profile, xw):
    neuron_profile(naive, *xw)
""",
    )
    assert result.ret != 0
    assert message in result.stdout.str() + result.stderr.str()


def test_bad_peaks_line_is_a_usage_error_naming_the_line(pytester: pytest.Pytester) -> None:
    result = run(pytester, "\ndef test_it():\n    pass\n", peaks="cpu:x86_64 = fast, 1e10")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*neuron_profile_peaks line 1*FLOP/s 'fast' is not a number; write e.g.*"]
    )
