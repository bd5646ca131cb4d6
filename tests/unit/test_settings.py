"""Settings: one declaration per setting (SPECS), four levels of resolution, bad values."""

from __future__ import annotations

import dataclasses
import re
import types
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from pytest_neuronperf.settings import (
    SPECS,
    SettingError,
    Settings,
    Spec,
    defaults,
    markdown_table,
    resolve,
)

README = Path(__file__).parent.parent.parent / "README.md"
BY_FIELD = {s.field: s for s in SPECS}

# A value other than the default for each setting, as the user writes it, and as parsed.
OTHER: dict[str, tuple[str, Any]] = {
    "enabled": ("1", True),
    "backend": ("cpu", "cpu"),
    "rounds": ("7", 7),
    "warmup": ("0", 0),
    "window": ("0.5s", 0.5),
    "threads": ("4", 4),
    "heap": ("System", "system"),
    "details": ("yes", True),
    "trace_dir": ("traces", Path("traces")),
    "profile_dir": ("base", Path("base")),
    "update": ("on", True),
    "pool": ("true", True),
    "tolerance": ("25%", 0.25),
    "recheck": ("2", 2),
    "strict": ("1", True),
    "budget_strict": ("yes", True),
    "compare_host": ("1", True),
    "count_work": ("off", False),
    "reference": ("no", False),
    "memory": ("on", True),
    "json_path": ("r.json", Path("r.json")),
    "markdown_path": ("r.md", Path("r.md")),
    "html_path": ("r.html", Path("r.html")),
    "export": ("bencher:b.json", ("bencher", Path("b.json"))),
    "neuron_config": ("modes=RUNTIME", (("modes", "RUNTIME"),)),
}
# Distinct from OTHER, to tell the levels apart (flags have one "on" value: see below).
THIRD: dict[str, tuple[str, Any]] = {
    "backend": ("neuron", "neuron"),
    "rounds": ("3", 3),
    "warmup": ("5", 5),
    "window": ("2", 2.0),
    "threads": ("2", 2),
    "heap": ("fixed", "fixed"),
    "trace_dir": ("t2", Path("t2")),
    "profile_dir": ("b2", Path("b2")),
    "tolerance": ("50", 0.5),
    "recheck": ("3", 3),
    "count_work": ("on", True),
    "reference": ("yes", True),
    "memory": ("off", False),
    "json_path": ("2.json", Path("2.json")),
    "markdown_path": ("2.md", Path("2.md")),
    "html_path": ("2.html", Path("2.html")),
    "export": ("github-action-benchmark:g.json", ("github-action-benchmark", Path("g.json"))),
    "neuron_config": ("modes=DEVICE", (("modes", "DEVICE"),)),
}


def test_every_setting_is_declared_once_with_a_default_of_its_type() -> None:
    hints = get_type_hints(Settings)
    assert list(BY_FIELD) == [f.name for f in dataclasses.fields(Settings)]
    assert set(OTHER) == set(BY_FIELD), "each setting has a test value below"
    for f in dataclasses.fields(Settings):
        # Settings holds types only: a default written there would be a second copy.
        assert f.default is dataclasses.MISSING, f"{f.name} has a default in Settings"
        spec = BY_FIELD[f.name]
        tp = hints[f.name]
        # A union allows each member; a generic such as tuple[...] its origin.
        members = get_args(tp) if isinstance(tp, types.UnionType) else (tp,)
        allowed = tuple(get_origin(a) or a for a in members)
        assert isinstance(spec.default, allowed), (f.name, spec.default, tp)
        assert isinstance(spec.parse(OTHER[f.name][0]), allowed), f.name
    assert defaults() == Settings(**{s.field: s.default for s in SPECS})
    for names in (
        [s.cli for s in SPECS],
        [s.ini for s in SPECS],
        [s.env for s in SPECS],
    ):
        assert len(set(names)) == len(names)


def test_the_names_follow_one_pattern() -> None:
    for s in SPECS:
        suffix = s.cli.removeprefix("--neuron-profile")
        assert s.ini == "neuron_profile" + suffix.replace("-", "_"), s.field
        assert s.env == "NEURONPERF_" + (suffix[1:].replace("-", "_").upper() or "PROFILE")


@pytest.mark.parametrize("field", list(BY_FIELD))
def test_each_level_wins_over_the_ones_below(field: str) -> None:
    """cli > env > ini > default, per setting."""
    spec = BY_FIELD[field]
    other_raw, other = OTHER[field]
    assert getattr(resolve({}, {}, env={}), field) == spec.default
    assert getattr(resolve({}, {spec.ini: other_raw}, env={}), field) == other
    if spec.is_flag:
        # A flag's only command-line value is "on": the env and ini say "off" below it.
        off = {spec.env: "0"}
        assert getattr(resolve({}, {spec.ini: "1"}, env=off), field) is False
        assert getattr(resolve({field: True}, {spec.ini: "0"}, env=off), field) is True
        assert getattr(resolve({field: False}, {}, env={}), field) == spec.default
        return
    third_raw, third = THIRD[field]
    env = {spec.env: third_raw}
    assert getattr(resolve({}, {spec.ini: other_raw}, env=env), field) == third
    resolved = resolve({field: other_raw}, {spec.ini: third_raw}, env=env)
    assert getattr(resolved, field) == other


def test_empty_values_fall_through_to_the_next_level() -> None:
    spec = BY_FIELD["rounds"]
    assert resolve({}, {spec.ini: ""}, env={spec.env: ""}).rounds == 10
    assert resolve({}, {spec.ini: "  "}, env={spec.env: "4"}).rounds == 4


def test_update_implies_enabled_and_pool_implies_update() -> None:
    s = resolve({}, {"neuron_profile_pool": "1"}, env={})
    assert (s.pool, s.update, s.enabled) == (True, True, True)
    s = resolve({}, {}, env={"NEURONPERF_UPDATE": "1"})
    assert (s.pool, s.update, s.enabled) == (False, True, True)


@pytest.mark.parametrize(
    ("field", "raw", "message"),
    [
        ("rounds", "0", "expected an integer >= 1"),
        ("rounds", "ten", "expected an integer >= 1"),
        ("warmup", "-1", "expected an integer >= 0"),
        ("recheck", "-1", "expected an integer >= 0"),
        ("window", "601", "expected seconds between 0 and 600"),
        ("backend", "tpu", "expected one of auto, cpu, cuda, neuron"),
        ("heap", "off", "expected one of fixed, system"),
        ("details", "maybe", "expected true/false"),  # env and ini: a flag has no cli value
        ("tolerance", "0.1", "0.1': ambiguous"),
        ("tolerance", "0", "expected a percentage > 0"),
        ("tolerance", "ten", "expected a percentage such as 10"),
        ("count_work", "2", "expected true/false"),
    ],
)
def test_a_bad_value_names_where_it_came_from(field: str, raw: str, message: str) -> None:
    spec = BY_FIELD[field]
    levels: list[tuple[dict[str, Any], dict[str, Any], dict[str, str], str]] = [
        ({}, {}, {spec.env: raw}, f"environment variable {spec.env}"),
        ({}, {spec.ini: raw}, {}, f"setup.cfg key {spec.ini}"),
    ]
    if not spec.is_flag:
        levels.append(({field: raw}, {}, {}, spec.cli))
    for cli, ini, env, where in levels:
        with pytest.raises(SettingError) as info:
            resolve(cli, ini, env=env, ini_source="setup.cfg")
        assert str(info.value).startswith(f"{where}={raw!r}: ")
        assert message in str(info.value)
        assert str(info.value).count(repr(raw)) == 1, "the value is said once, by where"


def test_help_states_the_default_written_once() -> None:
    for s in SPECS:
        # The default comes from Spec.default; the prose does not repeat it.
        assert "(default" not in s.about, s.field
    assert BY_FIELD["rounds"].help == "measured rounds per callable (default 10)"
    assert BY_FIELD["tolerance"].help.endswith("(default 10)")
    assert "(default" not in BY_FIELD["strict"].help, "a flag is off unless given"
    assert BY_FIELD["details"].help.endswith("to the report (also -v)")


def test_the_table_renders_each_spec_once() -> None:
    table = markdown_table()
    lines = table.splitlines()
    assert lines[:2] == ["| option | ini | env | default |", "|---|---|---|---|"]
    assert len(lines) == 2 + len(SPECS) + 1
    assert lines[3] == (
        "| `--neuron-profile-backend=auto\\|cpu\\|cuda\\|neuron` | `neuron_profile_backend` | "
        "`NEURONPERF_BACKEND` | `auto` |"
    )
    changed = dataclasses.replace(BY_FIELD["rounds"], default=12)
    assert _row(changed) != _row(BY_FIELD["rounds"]), "the table follows the default"


def _row(spec: Spec) -> str:
    import pytest_neuronperf.settings as settings

    saved = settings.SPECS
    settings.SPECS = tuple(spec if s.field == spec.field else s for s in saved)
    try:
        return next(line for line in markdown_table().splitlines() if f"`{spec.cli}" in line)
    finally:
        settings.SPECS = saved


def test_the_readme_settings_table_is_rendered_from_specs() -> None:
    """The README's table, between its markers, is settings.markdown_table()."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- settings-table -->\n(.*?)<!-- /settings-table -->", text, re.S)
    assert found, "README.md has no <!-- settings-table --> ... <!-- /settings-table --> block"
    assert found.group(1) == markdown_table()


def test_threads_are_bounded_before_torch_sees_them() -> None:
    """Issue 24 item 15: NEURONPERF_THREADS=100000 crashed the run (exit 139)."""
    with pytest.raises(SettingError, match="NEURONPERF_THREADS='100000': expected an integer"):
        resolve({}, {}, env={"NEURONPERF_THREADS": "100000"})
    assert resolve({}, {}, env={"NEURONPERF_THREADS": "1024"}).threads == 1024


def test_a_bad_ini_value_is_refused_even_where_the_environment_overrides_it() -> None:
    """Issue 24 item 15: a bad ini value passed unseen while an env variable was set."""
    spec = BY_FIELD["rounds"]
    with pytest.raises(SettingError, match=r"setup\.cfg key neuron_profile_rounds='ten'"):
        resolve({}, {spec.ini: "ten"}, env={spec.env: "4"}, ini_source="setup.cfg")
