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

def scale(x, s):
    return x * len(s)

compiled_breaking = torch.compile(breaking)
compiled_scale = torch.compile(scale, backend="eager")
def halve(x, n):
    return x * n

# Its own code object: Dynamo caches per code, so compiled_scale with a float recompiles.
# Only the measured rounds' recompiles count: a new string every call recompiles in them
# (an int is made dynamic on the warm-up's second call, and recompiles no more), past
# Dynamo's limit of 8 (after which it would run the frame eagerly).
compiled_clean = torch.compile(halve)
X = torch.randn(8)

@pytest.mark.neuron_budget(max_graph_breaks=0)
def test_graph_break(neuron_profile):
    neuron_profile(compiled_breaking, X, name="breaking")

@pytest.mark.neuron_budget(max_recompiles=0)
def test_recompiles(neuron_profile):
    n = itertools.count(1)
    with torch._dynamo.config.patch(recompile_limit=10_000):
        neuron_profile(lambda: compiled_scale(X, str(next(n))), name="scale")

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
            "*neuron_budget: region 'breaking' had 1 graph break, budget max_graph_breaks=0 "
            "(graph break: Call to `torch._dynamo.graph_break()`*",
            "*neuron_budget: region 'scale' had * recompilations, budget max_recompiles=0 "
            "(recompiled: *s == '*",
        ]
    )


# Closures under one decorator share its code object (torch/utils/_contextlib.py): the
# second to be compiled recompiles it on its first call, whichever test that is.
SHARED_CODE = """
import pytest, torch

def compiled_closure(scale):
    @torch.no_grad()
    def forward(x):
        return torch.relu(x) * scale
    return torch.compile(forward, backend="eager")

@pytest.mark.neuron_budget(max_recompiles=0)
def test_a(neuron_profile):
    neuron_profile(compiled_closure(2.0), torch.ones(8), name="a")

@pytest.mark.neuron_budget(max_recompiles=0)
def test_b(neuron_profile):
    neuron_profile(compiled_closure(3.0), torch.ones(8), name="b")
"""


@pytest.mark.slow  # torch.compile, twice
@pytest.mark.parametrize("order", [("test_a", "test_b"), ("test_b", "test_a")])
def test_a_recompile_of_the_first_calls_is_warm_up_in_either_order(
    pytester: pytest.Pytester, order: tuple[str, str]
) -> None:
    import torch._dynamo

    torch._dynamo.reset()  # no code object compiled by an earlier test of this process
    path = pytester.makepyfile(test_shared=SHARED_CODE)
    ids = [f"{path.name}::{name}" for name in order]
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--neuron-profile", "-v", *ids)
    result.assert_outcomes(passed=2)
    # The later test recompiled, and says so, in warm-up.
    result.stdout.fnmatch_lines(["recompiled in warm-up (not budgeted): *scale*"])


# A function that hit Dynamo's recompile limit in one test runs eagerly, silently, in the
# next: the region's ops are the eager ones, and the report says why.
LIMIT_HIT = """
import pytest, torch

def scale(x, k):
    return x * k + 1

cs = torch.compile(scale, backend="eager", dynamic=False)

def test_many_ks():
    for k in range(12):
        cs(torch.randn(8, 8), k)

@pytest.mark.neuron_budget(max_ops=1)
def test_new_k(neuron_profile):
    neuron_profile(cs, torch.randn(8, 8), 100, name="k100")
"""


@pytest.mark.slow  # torch.compile
@pytest.mark.parametrize("first", ["test_many_ks", "test_new_k"])
def test_a_compiled_function_run_eagerly_says_why(pytester: pytest.Pytester, first: str) -> None:
    import torch._dynamo

    torch._dynamo.reset()  # no code object compiled by an earlier test of this process
    path = pytester.makepyfile(test_limit=LIMIT_HIT)
    ids = [f"{path.name}::{n}" for n in (first, *{"test_many_ks", "test_new_k"} - {first})]
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--neuron-profile", *ids)
    said = "*'k100' is compiled, but no compiled graph ran in its measured rounds*"
    if first == "test_new_k":
        result.assert_outcomes(passed=2)
        result.stdout.no_fnmatch_line(said)
        return
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*'k100' dispatched 2 ops, budget max_ops=1*"])
    text = " ".join(result.stdout.str().split())  # as wrapped to the terminal's width
    assert "torch.compile: 'k100' is compiled, but no compiled graph ran" in text
    assert "torch._dynamo.config.recompile_limit earlier in this process" in text


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
            "*region 'branching' had 1 graph break*(graph break: Data-dependent branching*",
            f"graph break: Data-dependent branching*) at test_branching.py:{line}",
        ]
    )
    assert "gave no reason" not in result.stdout.str()
