"""names.py: long names cut one way for the terminal, the HTML report and its charts."""

from __future__ import annotations

from pytest_neuronperf.names import elide, elide_test_id

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
    assert len(narrow) == 30 and narrow.endswith("::test_mlp[xxx…x]")
    assert narrow.startswith("…")


def test_test_ids_keep_the_test_name_whole_when_it_fits() -> None:
    text = "tests/models/attention/test_flash.py::test_causal[bf16]"
    short = elide_test_id(text, 36)
    assert len(short) == 36 and short.endswith("::test_causal[bf16]")
    # A name too long for the room: the middle of the whole id goes instead.
    long_name = "t.py::" + "x" * 60
    assert len(elide_test_id(long_name, 20)) == 20
    assert elide_test_id("short", 30) == "short"
