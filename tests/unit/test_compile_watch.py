"""measure/compile_watch.py: what Dynamo said, split at the end of the warm-up."""

from __future__ import annotations

import pytest
import torch

from pytest_neuronperf.measure.compile_watch import CompileWatch, ran_eagerly

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_recompiles_count_only_once_measuring_and_their_notes_are_capped() -> None:
    torch._dynamo.reset()
    calls = iter(range(100))

    @torch.compile(backend="eager")
    def scale(x: torch.Tensor, s: str) -> torch.Tensor:
        return x * len(s)

    x = torch.ones(4)
    with torch._dynamo.config.patch(recompile_limit=100), CompileWatch() as watch:
        for _ in range(6):  # the first compiles; five recompile
            scale(x, str(next(calls)))
        watch.measuring()
        for _ in range(12):
            scale(x, str(next(calls)))
    assert watch.recompiles == 12
    assert len(watch.warmup_recompile_reasons) == 5
    notes = watch.notes()
    # One reason per recompile, the newest cache entry's guard (here: the call before's).
    assert len(watch.recompile_reasons) == 12 and "0/5: s == '5'" in watch.recompile_reasons[0]
    assert [n for n in notes if n.startswith("recompiled: ")][-1] == "recompiled: +2 more"
    warm = [n for n in notes if n.startswith("recompiled in warm-up (not budgeted): ")]
    assert len(warm) == 4 and warm[-1].endswith(": +2 more")


def test_a_compiled_callable_that_ran_no_graph_is_said_to_have_run_eagerly() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    compiled = torch.compile(f, backend="eager")
    (note,) = ran_eagerly(compiled, "f", [], ops=1)
    assert note.startswith("torch.compile: 'f' is compiled, but no compiled graph ran")
    # A graph ran; nothing dispatched (an empty graph); not compiled; compiled off by hand.
    assert ran_eagerly(compiled, "f", ["Torch-Compiled Region: 0/0"], ops=1) == ()
    assert ran_eagerly(compiled, "f", [], ops=0) == ()
    assert ran_eagerly(f, "f", [], ops=1) == ()
    assert ran_eagerly(torch.compiler.disable(f), "f", [], ops=1) == ()  # type: ignore[no-untyped-call]
