"""Every reader fed random and mutated input (issue 24): real traces, reports and baselines
from tests/data, changed at random by a seeded generator (bytes flipped, cut, spliced; JSON
values swapped for hostile ones; whole garbage). Each reader either gives a clean result or
one line and exit status 2 (BaselineError for the loader): never a traceback. Bounded by a
fixed number of examples per reader, not by a clock."""

from __future__ import annotations

import copy
import gzip
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.baselines.store import BaselineError, file_name, load
from pytest_neuronperf.cli.main import main

DATA = Path(__file__).parent.parent / "data"
TRACE = gzip.decompress((DATA / "cpu_rmsnorm_naive.json.gz").read_bytes())
REPORT = (DATA / "report_v1_rmsnorm.json").read_bytes()
BASELINE = (DATA / "baseline-52e8f5c.json").read_bytes()
KIND = "cpu:x86_64"
EXAMPLES = 120

# Values no writer of ours produces, in the places where ours go.
HOSTILE: list[Any] = [
    None,
    True,
    -1,
    0,
    2**70,
    1e308,
    -0.0,
    "",
    "x\x1b[2J\x00",
    "@a <b>",
    [],
    {},
    [[[[[]]]]],
    {"a": {"b": None}},
    "9" * 50,
]
# Text no JSON encoder writes, spliced in as is.
RAW = [b"1e999", b"-Infinity", b"NaN", b"9" * 5000, b"[" * 5000, b"\xff\xfe", b'"\\ud800"']


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    how = rng.randrange(5)
    if how == 0:  # flip a few bytes
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif how == 1:  # cut
        del b[rng.randrange(len(b)) :]
    elif how == 2:  # splice raw text at a value boundary
        at = [i for i, c in enumerate(b) if c in b",:["] or [0]
        i = rng.choice(at) + 1
        b[i:i] = rng.choice(RAW) + b","
    elif how == 3:  # duplicate a slice
        i, j = sorted(rng.randrange(len(b)) for _ in range(2))
        b[j:j] = b[i:j]
    else:  # garbage
        return rng.randbytes(rng.randint(0, 512))
    return bytes(b)


def mutate_json(rng: random.Random, data: bytes) -> bytes:
    doc = json.loads(data)
    for _ in range(rng.randint(1, 4)):
        holder, key = _pick(rng, doc)
        if holder is None:
            doc = copy.deepcopy(rng.choice(HOSTILE))
            break
        holder[key] = copy.deepcopy(rng.choice(HOSTILE))
    return json.dumps(doc).encode()


def _pick(rng: random.Random, doc: Any) -> tuple[Any, Any]:
    """A random container inside ``doc`` and one of its keys (None, None: the root)."""
    holder: Any = None
    key: Any = None
    node = doc
    for _ in range(rng.randint(0, 8)):
        if isinstance(node, dict) and node:
            holder, key = node, rng.choice(list(node))
        elif isinstance(node, list) and node:
            holder, key = node, rng.randrange(len(node))
        else:
            break
        node = holder[key]
    return holder, key


def examples(seed: int, original: bytes) -> list[bytes]:
    rng = random.Random(seed)
    return [
        (mutate_json if rng.random() < 0.5 else mutate_bytes)(rng, original)
        for _ in range(EXAMPLES)
    ]


def one_line_or_clean(code: int, err: str, allowed: tuple[int, ...] = (0,)) -> None:
    assert code in (*allowed, 2), err
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err, err


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


Check = Callable[[Path, Path, pytest.CaptureFixture[str]], None]


def check_report(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_or_clean(*run_cli(capsys, "report", str(path)))
    one_line_or_clean(*run_cli(capsys, "report", str(path), "--json"))


def check_compare(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp / "good.json"
    good.write_bytes(REPORT)
    md = str(tmp / "c.md")
    # 1: a region regressed, which a mutated figure may well do.
    code, err = run_cli(capsys, "compare", str(good), str(path), "--markdown", md)
    one_line_or_clean(code, err, (0, 1))
    code, err = run_cli(capsys, "compare", str(path), str(good))
    one_line_or_clean(code, err, (0, 1))


def check_history(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_or_clean(*run_cli(capsys, "history", str(path), "-o", str(tmp / "h.html")))


def check_baseline(path: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for damaged in (False, True):
        try:
            load(path.parent, KIND, allow_damaged=damaged)
        except BaselineError as exc:
            assert "\n" not in str(exc)


CASES: dict[str, tuple[bytes, str, Check]] = {
    "report-trace": (TRACE, "t.json", check_report),
    "compare-report": (REPORT, "r.json", check_compare),
    "history-report": (REPORT, "r.json", check_history),
    "baseline-loader": (BASELINE, file_name(KIND), check_baseline),
}


@pytest.mark.parametrize("reader", list(CASES))
def test_a_reader_fed_mutated_input_is_clean_or_one_line(
    reader: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, name, check = CASES[reader]
    path = tmp_path / name
    for i, data in enumerate(examples(24 + len(reader), original)):
        path.write_bytes(data)
        try:
            check(path, tmp_path, capsys)
        except Exception as exc:
            raise AssertionError(f"example {i} of {reader}: {data[:300]!r}") from exc
