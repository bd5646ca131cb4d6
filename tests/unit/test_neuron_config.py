"""NeuronConfig built the tutorial's way, the setting behind it, and the start-up checks.

What these tests stand on: the ``NeuronConfig`` parameters AWS documents
(``how-to-profile-workload.rst``, Neuron 2.32: modes, max_events_per_nc,
capture_enabled_for_nc, profile_output_dir, neff_cache_dir, precache_node_info), plus the
tutorial's ``correlate_device_time`` (Neuron 2.33). The classes below only carry those
signatures, so that the signature check is exercised against each documented shape; the
real class lives in torch-neuronx, which is not installable here.
"""

from __future__ import annotations

import enum
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_neuronperf.backends import BackendMisconfigured, NeuronBackend
from pytest_neuronperf.backends.neuron.config import (
    build_config,
    config_summary,
    environment_conflict,
    runtime_plan,
)
from pytest_neuronperf.settings import DEFAULT_NEURON_CONFIG, SettingError, defaults, resolve


class ProfileMode(enum.Enum):
    DEVICE = "device"
    RUNTIME = "runtime"
    CPU_UTIL = "cpu_util"
    HOST_MEMORY = "host_memory"


class Documented:
    """NeuronConfig's parameters as documented up to Neuron 2.32: no correlate_device_time."""

    def __init__(
        self,
        modes: list[ProfileMode] | None = None,
        max_events_per_nc: int | None = None,
        capture_enabled_for_nc: str | None = None,
        profile_output_dir: str | None = None,
        neff_cache_dir: str | None = None,
        precache_node_info: bool = True,
    ) -> None:
        self.kwargs = {
            "modes": modes,
            "max_events_per_nc": max_events_per_nc,
            "profile_output_dir": profile_output_dir,
        }


class Tutorial(Documented):
    """The same with the tutorial's parameter."""

    def __init__(
        self,
        modes: list[ProfileMode] | None = None,
        max_events_per_nc: int | None = None,
        capture_enabled_for_nc: str | None = None,
        profile_output_dir: str | None = None,
        neff_cache_dir: str | None = None,
        precache_node_info: bool = True,
        correlate_device_time: bool = False,
    ) -> None:
        super().__init__(modes, max_events_per_nc, capture_enabled_for_nc, profile_output_dir)
        self.correlate = correlate_device_time


class Open(Documented):
    """One that takes anything: acceptance is then unchecked, and the record says so."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(kwargs.get("modes"), profile_output_dir=kwargs.get("profile_output_dir"))
        self.correlate = kwargs.get("correlate_device_time")


class Opaque:
    """A class whose signature cannot be read (as a compiled class's may not be)."""

    __signature__ = "unreadable"

    def __init__(self, *, modes: Any, profile_output_dir: str) -> None:
        self.modes = modes


def test_tutorial_config_gets_correlate_device_time(tmp_path: Path) -> None:
    built = build_config(Tutorial, ProfileMode, dict(DEFAULT_NEURON_CONFIG), tmp_path)
    assert built.backfill and built.refused == () and built.checked_by == "signature"
    assert built.passed == ("modes", "profile_output_dir", "correlate_device_time")
    assert built.config.correlate is True
    assert built.config.kwargs["modes"] == [ProfileMode.DEVICE, ProfileMode.RUNTIME]
    assert built.config.kwargs["profile_output_dir"] == str(tmp_path)


def test_open_kwargs_config_is_passed_everything_and_recorded_as_unchecked(
    tmp_path: Path,
) -> None:
    built = build_config(Open, ProfileMode, {"modes": "RUNTIME"}, tmp_path)
    assert built.backfill and built.config.correlate is True and built.checked_by == "**kwargs"
    assert config_summary({"modes": "RUNTIME"}, built).endswith("(accepted by **kwargs)")


def test_documented_config_refuses_it_and_says_so(tmp_path: Path) -> None:
    options = {"modes": "RUNTIME", "max_events_per_nc": "2000000"}
    built = build_config(Documented, ProfileMode, options, tmp_path)
    assert not built.backfill and built.refused == ("correlate_device_time",)
    assert built.passed == ("modes", "max_events_per_nc", "profile_output_dir")
    assert built.config.kwargs["max_events_per_nc"] == 2_000_000
    assert config_summary(options, built) == (
        "modes=RUNTIME; max_events_per_nc=2000000; profile_output_dir=<per session>"
    )


def test_unreadable_signature_is_settled_by_calling(tmp_path: Path) -> None:
    built = build_config(Opaque, ProfileMode, {"modes": "RUNTIME"}, tmp_path)
    assert built.refused == ("correlate_device_time",) and built.checked_by == "call"
    assert built.config.modes == [ProfileMode.RUNTIME]


def test_options_the_config_does_not_take_are_usage_errors(tmp_path: Path) -> None:
    class Small:
        def __init__(self, modes: Any = None, profile_output_dir: str = "") -> None:
            pass

    with pytest.raises(BackendMisconfigured, match="does not accept max_events_per_nc"):
        build_config(Small, ProfileMode, {"modes": "RUNTIME", "max_events_per_nc": "5"}, tmp_path)

    class OldModes(enum.Enum):
        DEVICE = 1
        RUNTIME = 2

    with pytest.raises(BackendMisconfigured, match="ProfileMode has no CPU_UTIL"):
        build_config(Tutorial, OldModes, {"modes": "RUNTIME,CPU_UTIL"}, tmp_path)


def test_runtime_plan() -> None:
    on = runtime_plan(True, ["DEVICE", "RUNTIME"], True, "/opt/aws/neuron/bin/neuron-explorer")
    assert on.enabled
    off = runtime_plan(True, ["DEVICE", "RUNTIME"], False, None)
    assert not off.enabled and "pytest-neuronperf[neuron]" in off.reason
    assert "neuron-explorer" in off.reason
    assert not runtime_plan(True, ["DEVICE"], True, "x").enabled


@pytest.mark.parametrize(
    ("modes", "pyarrow", "explorer", "says"),
    [
        (["RUNTIME"], False, "x", "pip install 'pytest-neuronperf\\[neuron\\]'"),
        (["RUNTIME"], True, None, "the neuron-explorer binary"),
        (["DEVICE"], True, "x", "modes lack RUNTIME"),
    ],
)
def test_runtime_source_needed_but_missing_is_a_usage_error(
    modes: list[str], pyarrow: bool, explorer: str | None, says: str
) -> None:
    with pytest.raises(BackendMisconfigured, match=says) as err:
        runtime_plan(False, modes, pyarrow, explorer)
    assert "correlate_device_time" in str(err.value) and "2.14.3" in str(err.value)


def test_inspect_enable_conflicts_with_torch_profiler(monkeypatch: pytest.MonkeyPatch) -> None:
    assert environment_conflict({}) is None
    assert environment_conflict({"NEURON_RT_INSPECT_ENABLE": "0"}) is None
    text = environment_conflict({"NEURON_RT_INSPECT_ENABLE": "1"})
    assert text is not None and "conflicts with torch.profiler" in text
    # The guard runs first in the backend's start-up checks, before torch-neuronx is needed.
    monkeypatch.setenv("NEURON_RT_INSPECT_ENABLE", "1")
    with pytest.raises(BackendMisconfigured, match="NEURON_RT_INSPECT_ENABLE=1"):
        NeuronBackend().configure(replace(defaults(), backend="neuron"))


def test_setting_from_each_source() -> None:
    default = resolve({}, {}, env={})
    assert default.neuron_config == (("modes", "DEVICE,RUNTIME"),)
    env = {"NEURONPERF_NEURON_CONFIG": "modes=runtime; max_events_per_nc=2000000"}
    assert resolve({}, {}, env=env).neuron_config == (
        ("max_events_per_nc", "2000000"),
        ("modes", "RUNTIME"),
    )
    ini = {"neuron_profile_neuron_config": "capture_enabled_for_nc=0,1,2-5"}
    assert dict(resolve({}, ini, env={}).neuron_config)["capture_enabled_for_nc"] == "0,1,2-5"
    cli = {"neuron_config": "precache_node_info=off"}
    assert dict(resolve(cli, ini, env={}).neuron_config) == {
        "modes": "DEVICE,RUNTIME",
        "precache_node_info": "False",
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("modes=FAST", "modes: expected a comma list of DEVICE, RUNTIME"),
        ("max_events_per_nc=0", "expected an integer >= 1"),
        ("capture_enabled_for_nc=a-b", "expected cores or ranges"),
        ("correlate_device_time=False", "unknown key 'correlate_device_time'"),
        ("modes", "expected key=value"),
    ],
)
def test_bad_setting_names_where_it_came_from(text: str, says: str) -> None:
    with pytest.raises(SettingError, match=f"NEURONPERF_NEURON_CONFIG='{text}': .*{says}"):
        resolve({}, {}, env={"NEURONPERF_NEURON_CONFIG": text})
