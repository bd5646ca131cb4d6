"""trace/summary.py: a region's rounds summed up into one Measurement."""

from __future__ import annotations

from pytest_neuronperf.trace.analysis import RoundResult
from pytest_neuronperf.trace.summary import recompiles_seen, summarize


def summary_of(rounds: list[RoundResult]) -> tuple[int, int, dict[str, int], dict[str, int]]:
    m = summarize(
        rounds,
        test_id="t.py::t",
        region="r",
        backend="cpu",
        device_kind="cpu:x86_64",
        host=[1.0] * len(rounds),
        environment={},
    )
    return m.ops, m.kernels, dict(m.op_counts), dict(m.kernel_counts)


def test_counts_come_from_the_worst_round_wherever_it_falls() -> None:
    # The first round is the worst: a selection that skipped it, or that took the kernels
    # from the last round, would report the quiet rounds' counts.
    worst = RoundResult(ops=["aten::mul", "aten::add", "aten::sum"], kernels=["k_mul", "k_add"])
    quiet = RoundResult(ops=["aten::mul"], kernels=["k_fused"])
    for rounds, at in (([worst, quiet, quiet], 0), ([quiet, worst, quiet], 1)):
        ops, kernels, op_counts, kernel_counts = summary_of(rounds)
        assert (ops, kernels) == (3, 2), at
        assert op_counts == {"aten::mul": 1, "aten::add": 1, "aten::sum": 1}, at
        assert kernel_counts == {"k_mul": 1, "k_add": 1}, at


def test_the_same_rounds_give_their_own_counts() -> None:
    # The boundary: every round alike, so any round is the worst.
    same = RoundResult(ops=["aten::mul"], kernels=["k"])
    assert summary_of([same, same]) == (1, 1, {"aten::mul": 1}, {"k": 1})


def test_recompiles_are_compilations_in_rounds_plus_new_versions_of_a_frame() -> None:
    # Frame 2 ran as version 0, then as version 1: one recompilation though no round
    # compiled; round 3 compiled once itself.
    rounds = [
        RoundResult(compiled_regions=["Torch-Compiled Region: 2/0"]),
        RoundResult(compiled_regions=["Torch-Compiled Region: 2/1"]),
        RoundResult(compiled_regions=["Torch-Compiled Region: 2/1"], compiles=1),
    ]
    assert recompiles_seen(rounds) == 2
    assert recompiles_seen(rounds[1:2]) == 0
