# torch and the parts of it the tests load are imported here, before any pytester run:
# pytester's in-process runs drop modules first imported inside them, and importing torch's
# C extension, Dynamo or inductor a second time in one process crashes or fails to register.
import gc
from collections.abc import Iterator

import pytest
import torch
import torch._dynamo
import torch._dynamo.repro.after_aot
import torch._dynamo.repro.after_dynamo
import torch._inductor.codecache
import torch._inductor.compile_fx
import torch._inductor.config
import torch.profiler
import torch.utils.flop_counter  # noqa: F401

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 50 ms sampling window in the runs these tests start: the windowed path is exercised
    everywhere at a twentieth of the default second. Tests of the window set their own."""
    monkeypatch.setenv("NEURONPERF_WINDOW", "0.05")


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 250-column terminal in the runs these tests start: the table keeps its columns and
    each footer sentence its line (both fit the terminal). Tests of the width set their own."""
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def pytester(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Iterator[pytest.Pytester]:
    """pytest's own, its runs kept apart from the run that started them: in their files'
    order (pytest-randomly, when this suite runs under it, shuffles this suite, not the small
    suites tests write; set here, after pytester clears PYTEST_ADDOPTS), and not xdist
    workers when this suite runs under xdist (pytest-benchmark would switch itself off).
    What a run left open is collected at the end of its test, so a leak fails that test,
    not whichever test the garbage collector happens to run in."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:randomly")
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    yield pytester
    gc.collect()
