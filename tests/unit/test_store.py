"""The baseline store under real conditions: damaged bytes, file modes, concurrent updates."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_neuronperf.baselines import store as store_module
from pytest_neuronperf.baselines.entry import Entry
from pytest_neuronperf.baselines.lock import exclusive
from pytest_neuronperf.baselines.store import (
    BaselineError,
    Baselines,
    file_name,
    load,
    update_file,
    write,
)
from pytest_neuronperf.baselines.update import write_update
from pytest_neuronperf.model import BaselineStatus
from pytest_neuronperf.stats import Stats

KIND = "cpu:x86_64"
TIMES = [100.0 + i for i in range(10)]


def entry(ops: int = 1) -> Entry:
    return Entry(
        ops=ops,
        kernels=ops,
        op_counts={"aten::mul": ops},
        kernel_counts={"aten::mul": ops},
        device_us=Stats.of(TIMES),
        host_us=Stats.of(TIMES),
        rounds=len(TIMES),
        reference_us=Stats.of([20.0] * len(TIMES)),
    )


def stored(directory: Path, *keys: tuple[str, str]) -> Baselines:
    b = Baselines(directory / file_name(KIND), KIND).merged({k: entry() for k in keys})
    write(b)
    return b


def path_of(directory: Path) -> Path:
    return directory / file_name(KIND)


# --- non-finite samples are damage -------------------------------------------------------


@pytest.mark.parametrize("field", ["host_us", "device_us", "reference_us"])
@pytest.mark.parametrize("literal", ["1e400", "-1e400", "NaN", "Infinity"])
def test_a_non_finite_sample_is_a_damaged_file(tmp_path: Path, field: str, literal: str) -> None:
    stored(tmp_path, ("t.py::t", "r"))
    text = path_of(tmp_path).read_text()
    # The JSON as a person or another tool may write it: Python reads 1e400 as inf.
    data = json.loads(text)
    data["entries"]["t.py::t"]["r"][field]["samples"][2] = "SAMPLE"
    path_of(tmp_path).write_text(json.dumps(data).replace('"SAMPLE"', literal))
    with pytest.raises(BaselineError, match=rf"'r' is malformed \({field} samples must all"):
        load(tmp_path, KIND)
    damaged = load(tmp_path, KIND, allow_damaged=True)
    assert damaged.entries == {} and "finite" in damaged.damaged


# --- bytes that are not UTF-8 ------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)),  # random bytes
        '{"entries": {"t.py::test_caf\u00e9": {}}}'.encode("latin-1"),  # Latin-1 test id
    ],
    ids=["random-bytes", "latin-1"],
)
def test_a_file_that_is_not_utf8_is_damaged_and_replaced_by_an_update(
    tmp_path: Path, data: bytes
) -> None:
    path_of(tmp_path).write_bytes(data)
    with pytest.raises(BaselineError, match="is not UTF-8 text") as info:
        load(tmp_path, KIND)
    assert str(info.value).startswith(str(path_of(tmp_path)))
    assert "--neuron-profile-update" in str(info.value)
    assert "not UTF-8" in load(tmp_path, KIND, allow_damaged=True).damaged
    plan = write_update(tmp_path, KIND, {("t.py::t", "r"): (entry(), True)}, ())
    assert plan.added == (("t.py::t", "r"),)
    assert load(tmp_path, KIND).keys() == [("t.py::t", "r")]


def test_an_integer_past_pythons_digit_limit_is_a_damaged_file(tmp_path: Path) -> None:
    path_of(tmp_path).write_text('{"schema_version": ' + "9" * 5000 + "}")
    with pytest.raises(BaselineError, match="is not valid JSON"):
        load(tmp_path, KIND)


# --- modes -------------------------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("existing", [0o644, 0o664, 0o600])
def test_an_update_keeps_the_files_mode(tmp_path: Path, umask: None, existing: int) -> None:
    stored(tmp_path, ("t.py::a", "r"))
    path_of(tmp_path).chmod(existing)
    stored(tmp_path, ("t.py::a", "r"), ("t.py::b", "r"))
    assert mode(path_of(tmp_path)) == existing


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_gives_an_updated_file_back_to_its_owner(tmp_path: Path, umask: None) -> None:
    """CI in a container writes as root: the developer's file stays the developer's."""
    stored(tmp_path, ("t.py::a", "r"))
    os.chown(path_of(tmp_path), 4321, 4321)
    path_of(tmp_path).chmod(0o664)
    stored(tmp_path, ("t.py::a", "r"), ("t.py::b", "r"))
    st = path_of(tmp_path).stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4321, 0o664)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_gets_the_umasks_mode(
    tmp_path: Path, umask: None, mask: int, expected: int
) -> None:
    os.umask(mask)
    stored(tmp_path, ("t.py::a", "r"))
    assert mode(path_of(tmp_path)) == expected
    assert [p.name for p in tmp_path.iterdir()] == [file_name(KIND)], "no temporary file left"


# --- concurrent updates ------------------------------------------------------------------


def test_two_concurrent_updates_keep_both_entries(tmp_path: Path) -> None:
    """Each update reads the file, waits 0.3 s (a slow disk) and writes: without the lock
    both read the empty file and the second write drops the first one's entry."""
    stored(tmp_path, ("t.py::old", "r"))
    started = threading.Barrier(2)
    errors: list[BaseException] = []

    def update(test_id: str) -> None:
        def merge(current: Baselines) -> Baselines:
            time.sleep(0.3)
            return current.merged({(test_id, "r"): entry()})

        try:
            started.wait()
            update_file(tmp_path, KIND, merge)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=update, args=(t,)) for t in ("a.py::t", "b.py::t")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert load(tmp_path, KIND).keys() == [("a.py::t", "r"), ("b.py::t", "r"), ("t.py::old", "r")]
    # The .gitignore is the update's (issue 24 item 4), written once; the lock adds nothing.
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".gitignore", file_name(KIND)], "the lock adds no file"


def test_an_update_that_cannot_get_the_lock_says_so_and_leaves_the_file(tmp_path: Path) -> None:
    stored(tmp_path, ("t.py::old", "r"))
    before = path_of(tmp_path).read_bytes()
    with exclusive(tmp_path, timeout=1), pytest.raises(BaselineError, match="another run"):
        update_file(tmp_path, KIND, lambda b: b.merged({("x.py::t", "r"): entry()}), timeout=0.1)
    assert path_of(tmp_path).read_bytes() == before


def test_merge_returning_none_leaves_the_file_untouched(tmp_path: Path) -> None:
    stored(tmp_path, ("t.py::old", "r"))
    before = path_of(tmp_path).stat().st_mtime_ns, path_of(tmp_path).read_bytes()
    seen: list[Baselines] = []

    def merge(b: Baselines) -> None:
        seen.append(b)

    assert update_file(tmp_path, KIND, merge) is None
    assert seen[0].keys() == [("t.py::old", "r")]
    assert (path_of(tmp_path).stat().st_mtime_ns, path_of(tmp_path).read_bytes()) == before


def test_a_directory_that_cannot_be_made_is_one_error_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(BaselineError, match="cannot be written"):
        update_file(blocker / "sub", KIND, lambda b: b.merged({("t.py::t", "r"): entry()}))


def test_write_update_under_the_lock_plans_against_the_file_as_stored_now(tmp_path: Path) -> None:
    """Entries written by another run after this one started are kept, stale ones removed."""
    stored(tmp_path, ("t.py::gone", "r"), ("t.py::other", "r"))
    plan = write_update(
        tmp_path, KIND, {("t.py::new", "r"): (entry(2), True)}, [("t.py::gone", "r")]
    )
    assert plan.added == (("t.py::new", "r"),) and plan.removed == (("t.py::gone", "r"),)
    assert load(tmp_path, KIND).keys() == [("t.py::new", "r"), ("t.py::other", "r")]


@pytest.mark.parametrize(
    "value",
    [0, -7, 2**70, 1.5, 1e-300, 123456.789, -0.0, True, False, None, "", "aten::mul",
     'quote " back \\ tab \t', "µs ×3 é", "\u2028", "\x00\x1f"],
)  # fmt: skip
def test_scalars_are_written_as_json_dumps_writes_them(value: object) -> None:
    # The writer formats scalars itself (json.dumps per value was most of a write's time).
    assert store_module._scalar(value) == json.dumps(value)
    assert json.loads(store_module._scalar(value)) == value


def test_non_finite_numbers_and_enum_strings_are_written_as_json_takes_them() -> None:
    for v in (float("nan"), float("inf"), -float("inf")):
        assert store_module._scalar(v) == "null"
    assert store_module._scalar(BaselineStatus.SAME) == '"same"'


def test_a_summary_that_disagrees_with_its_samples_is_written_fresh(tmp_path: Path) -> None:
    """A file's median, min, max and IQR are written back as stored where they agree with
    the samples to within a nanosecond's rounding, and recomputed where they do not."""
    write(Baselines(path_of(tmp_path), KIND, {"t.py::t": {"r": entry()}}))
    data = json.loads(path_of(tmp_path).read_text())
    host = data["entries"]["t.py::t"]["r"]["host_us"]
    host["median"] += 0.002  # within the rounding of a summary written from finer samples
    dev = data["entries"]["t.py::t"]["r"]["device_us"]
    dev["max"] = 1000.0  # no longer what the samples say
    path_of(tmp_path).write_text(json.dumps(data))
    again = json.loads(store_module.dumps(load(tmp_path, KIND)))["entries"]["t.py::t"]["r"]
    assert again["host_us"]["median"] == host["median"]
    assert again["device_us"]["max"] == max(TIMES)
    assert again["device_us"]["samples"] == TIMES


def test_a_file_of_another_device_kind_is_refused(tmp_path: Path) -> None:
    # Copied over from a GPU machine: the name is the CPU's, the content another kind's.
    other = Baselines(tmp_path / "other.json", "cuda:NVIDIA H100").merged({("t", "r"): entry()})
    write(other)
    path_of(tmp_path).write_text(other.path.read_text())
    with pytest.raises(BaselineError) as info:
        load(tmp_path, KIND)
    assert "holds baselines for device kind 'cuda:NVIDIA H100', not 'cpu:x86_64'" in str(info.value)


def test_a_file_of_its_own_device_kind_loads(tmp_path: Path) -> None:
    stored(tmp_path, ("t", "r"))
    assert load(tmp_path, KIND).keys() == [("t", "r")]


def test_the_stand_in_lock_file_is_the_users_own_and_never_a_planted_link(
    tmp_path: Path,
) -> None:
    """Issue 24 item 8: the stand-in lock had a name in /tmp any user could create first
    (and hold, or point elsewhere with a link)."""
    from pytest_neuronperf.baselines.lock import open_stand_in, stand_in

    path = stand_in(tmp_path)
    assert str(os.getuid()) in path.name
    assert path.parent.stat().st_uid == os.getuid()
    target = tmp_path / "elsewhere"
    path.unlink(missing_ok=True)
    path.symlink_to(target)
    try:
        with pytest.raises(OSError, match="not a lock file of this user"):
            open_stand_in(tmp_path)
        assert not target.exists()
    finally:
        path.unlink()
    os.close(open_stand_in(tmp_path))
    path.unlink()
