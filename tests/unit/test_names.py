"""names.py: long names cut one way for the terminal, the HTML report and its charts."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from pytest_neuronperf.backends.cpu import CpuBackend
from pytest_neuronperf.fixture import NeuronProfile
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.names import callable_name, elide, elide_test_id

LONG_ID = "tests/models/test_llama.py::test_mlp[" + "x" * 300 + "]"


def test_elide_keeps_both_ends() -> None:
    assert elide("abcdefghij", 10) == "abcdefghij"
    assert elide("abcdefghij", 7) == "abc…hij"
    assert len(elide("x" * 300, 40)) == 40
    text = "tests/models/attention/test_flash.py::test_causal[bf16-seq4096]"
    short = elide(text, 30)
    assert len(short) == 30 and "…" in short
    assert short.startswith("tests/models/a") and short.endswith("[bf16-seq4096]")


def test_test_ids_keep_file_and_name_before_parameters() -> None:
    short = elide_test_id(LONG_ID, 50)
    assert len(short) == 50
    assert short.startswith("tests/models/test_llama.py::test_mlp[xx") and short.endswith("x]")
    # Too narrow for the whole path: the test's name stays, with the end of its file.
    narrow = elide_test_id(LONG_ID, 30)
    assert len(narrow) == 30 and narrow.endswith("::test_mlp[xxx…xx]")
    assert narrow.startswith("…")


def test_test_ids_keep_the_test_name_whole_when_it_fits() -> None:
    text = "tests/models/attention/test_flash.py::test_causal[bf16]"
    short = elide_test_id(text, 36)
    assert len(short) == 36 and short.endswith("::test_causal[bf16]")
    # A name too long for the room: the middle of the whole id goes instead.
    long_name = "t.py::" + "x" * 60
    assert len(elide_test_id(long_name, 20)) == 20
    assert elide_test_id("short", 30) == "short"


def test_torch_builtins_are_named_as_they_are_called() -> None:
    assert callable_name(torch.exp) == "torch.exp"
    assert callable_name(torch.Tensor.add) == "torch.Tensor.add"
    assert callable_name(F.gelu) == "torch.nn.functional.gelu"
    assert callable_name(torch.linalg.norm) == "torch.linalg.norm"
    assert callable_name(torch.ops.aten.mul.Tensor) == "torch.ops.aten.mul.Tensor"
    assert callable_name(F.relu) == "relu", "a Python function keeps its qualified name"
    profile = NeuronProfile(
        test_id="t",
        enabled=True,
        runner=lambda: Runner(CpuBackend(), count_work=False, reference=False),
        rounds=2,
        warmup=1,
    )
    profile(torch.exp, torch.ones(1024))
    assert profile.last.region == "torch.exp"
