"""max_graph_breaks / max_recompiles, on what torch.compile really did in the region."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

BODY = """
import itertools, pytest, torch

def breaking(x):
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1

def scale(x, n):
    return x * n

compiled_breaking = torch.compile(breaking)
compiled_scale = torch.compile(scale)
def halve(x, n):
    return x * n

# Its own code object: Dynamo caches per code, so compiled_scale with a float recompiles.
compiled_clean = torch.compile(halve)
X = torch.randn(8)

@pytest.mark.neuron_budget(max_graph_breaks=0)
def test_graph_break(neuron_profile):
    neuron_profile(compiled_breaking, X, name="breaking")

@pytest.mark.neuron_budget(max_recompiles=0)
def test_recompiles(neuron_profile):
    n = itertools.count(1)
    neuron_profile(lambda: compiled_scale(X, next(n)), name="scale")

@pytest.mark.neuron_budget(max_graph_breaks=0, max_recompiles=0, max_ops=1)
def test_clean(neuron_profile):
    neuron_profile(compiled_clean, X, 0.5, name="clean")
"""


@pytest.mark.slow  # torch.compile
def test_compile_budgets_fail_with_dynamo_reasons_and_pass_when_clean(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_compiled=BODY)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=2"
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*neuron_budget: region 'breaking' had 1 graph breaks, budget max_graph_breaks=0 "
            "(graph break: Call to `torch._dynamo.graph_break()`*",
            "*neuron_budget: region 'scale' had * recompilations, budget max_recompiles=0 "
            "(recompiled: *n == 1*",
        ]
    )


@pytest.mark.parametrize("marker", ["max_graph_breaks=-1", "max_recompiles=1.5"])
def test_bad_compile_budget_is_a_usage_error(pytester: pytest.Pytester, marker: str) -> None:
    pytester.makepyfile(
        test_bad=f"""
import pytest

@pytest.mark.neuron_budget({marker})
def test_it(neuron_profile):
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected a whole number >= 0*"])


BRANCHING = """
import pytest, torch

def branching(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1

compiled_branching = torch.compile(branching)

@pytest.mark.neuron_budget(max_graph_breaks=0)
def test_branch(neuron_profile):
    neuron_profile(compiled_branching, torch.ones(8), name="branching")
"""


@pytest.mark.slow  # torch.compile
def test_a_data_dependent_branch_names_dynamos_reason_and_the_users_line(
    pytester: pytest.Pytester,
) -> None:
    # torch 2.13 counts no reason for this break in counters["graph_break"].
    pytester.makepyfile(test_branching=BRANCHING)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--neuron-profile-rounds=3", "--neuron-profile-warmup=2"
    )
    result.assert_outcomes(failed=1)
    line = BRANCHING.strip().splitlines().index("    if y.sum() > 0:") + 1  # as written
    result.stdout.fnmatch_lines_random(
        [
            "*region 'branching' had 1 graph breaks*(graph break: Data-dependent branching*",
            f"graph break: Data-dependent branching*) at test_branching.py:{line}",
        ]
    )
    assert "gave no reason" not in result.stdout.str()
