"""``NeuronConfig`` built the tutorial's way, passing only what its signature accepts, and
the plan for the second device-time source. Pure: the config class and its ``ProfileMode``
enum come in as arguments, so all of it runs and is tested without torch-neuronx.

The tutorial (Profiling TorchNeuron, Part 1, Neuron 2.33) sets ``correlate_device_time=True``
so that device time is backfilled into ``key_averages()``; AWS's parameter table (2.32/2.33)
does not list it, so older torch-neuronx builds lack it. Each parameter is passed only when
``inspect.signature(NeuronConfig)`` names it, and the environment records what was passed.
"""

from __future__ import annotations

import inspect
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import BackendMisconfigured
from .runtime import INSTALL_EXTRA

CORRELATE = "correlate_device_time"
OUTPUT_DIR = "profile_output_dir"
EXPLORER = "neuron-explorer"
# aws-neuronx-tools installs here; the troubleshooting page asks users to add it to PATH.
EXPLORER_DIRS = (Path("/opt/aws/neuron/bin"),)
PAIRING = "torch 2.14 with torch-neuronx 2.14.3, Neuron SDK 2.33"


def accepted_parameters(cls: Any) -> tuple[frozenset[str], bool] | None:
    """(named keyword parameters, whether ``**kwargs`` takes any others) of ``cls(...)``;
    None when the signature cannot be read (a compiled class)."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    named = frozenset(n for n, p in signature.parameters.items() if p.kind in kinds)
    open_kwargs = any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    return named, open_kwargs


def typed_options(options: Mapping[str, str], mode_enum: Any) -> dict[str, Any]:
    """The setting's checked text values (settings.parse_neuron_config) -> NeuronConfig
    arguments; a mode this torch-neuronx's ProfileMode lacks is a usage error."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key == "modes":
            modes = []
            for name in value.split(","):
                member = getattr(mode_enum, name, None)
                if member is None:
                    raise BackendMisconfigured(
                        f"neuron_profile_neuron_config: modes={value}: this torch-neuronx's "
                        f"ProfileMode has no {name}"
                    )
                modes.append(member)
            out[key] = modes
        elif key == "max_events_per_nc":
            out[key] = int(value)
        elif key == "precache_node_info":
            out[key] = value == "True"
        else:
            out[key] = value
    return out


@dataclass(frozen=True)
class BuiltConfig:
    config: Any
    # Parameter names passed, and those we wanted that this NeuronConfig does not accept.
    passed: tuple[str, ...]
    refused: tuple[str, ...]
    # How acceptance was known: "signature", "**kwargs" (passed, unchecked) or "call".
    checked_by: str

    @property
    def backfill(self) -> bool:
        """Whether ``correlate_device_time=True`` went in."""
        return CORRELATE in self.passed


def build_config(
    config_cls: Callable[..., Any],
    mode_enum: Any,
    options: Mapping[str, str],
    output_dir: Path,
) -> BuiltConfig:
    """``NeuronConfig(modes=..., profile_output_dir=..., correlate_device_time=True, ...)``
    with only the accepted parameters. The user's options and the output directory must be
    accepted (else BackendMisconfigured); ``correlate_device_time`` may be refused."""
    wanted = typed_options(options, mode_enum)
    wanted[OUTPUT_DIR] = str(output_dir)
    wanted[CORRELATE] = True
    accepted = accepted_parameters(config_cls)
    if accepted is None:
        return _build_by_calling(config_cls, wanted)
    named, open_kwargs = accepted
    refused = tuple(k for k in wanted if k not in named and not open_kwargs)
    required = [k for k in refused if k != CORRELATE]
    if required:
        raise BackendMisconfigured(
            f"this torch-neuronx's NeuronConfig does not accept {', '.join(required)} "
            f"(its parameters: {', '.join(sorted(named)) or 'none'}); "
            "remove it from neuron_profile_neuron_config"
        )
    kwargs = {k: v for k, v in wanted.items() if k not in refused}
    unchecked = open_kwargs and any(k not in named for k in kwargs)
    return BuiltConfig(
        config_cls(**kwargs),
        tuple(kwargs),
        refused,
        "**kwargs" if unchecked else "signature",
    )


def _build_by_calling(config_cls: Callable[..., Any], wanted: dict[str, Any]) -> BuiltConfig:
    # No readable signature: the call itself says whether the backfill parameter exists.
    try:
        return BuiltConfig(config_cls(**wanted), tuple(wanted), (), "call")
    except TypeError as exc:
        if CORRELATE not in str(exc):
            raise BackendMisconfigured(f"NeuronConfig({', '.join(wanted)}) failed: {exc}") from None
    kwargs = {k: v for k, v in wanted.items() if k != CORRELATE}
    return BuiltConfig(config_cls(**kwargs), tuple(kwargs), (CORRELATE,), "call")


def config_summary(options: Mapping[str, str], built: BuiltConfig) -> str:
    """The environment's record of what went into NeuronConfig (no per-session paths)."""
    parts = []
    for key in built.passed:
        if key == OUTPUT_DIR:
            parts.append(f"{key}=<per session>")
        elif key == CORRELATE:
            parts.append(f"{key}=True")
        else:
            parts.append(f"{key}={options[key]}")
    text = "; ".join(parts)
    if built.checked_by != "signature":
        text += f" (accepted by {built.checked_by})"
    return text


def environment_conflict(env: Mapping[str, str]) -> str | None:
    """Neuron's docs: environment-variable capture and torch.profiler conflict."""
    value = env.get("NEURON_RT_INSPECT_ENABLE", "").strip()
    if value in ("", "0"):
        return None
    return (
        f"NEURON_RT_INSPECT_ENABLE={value} is set, and the Neuron docs say environment-variable "
        "capture conflicts with torch.profiler, which the neuron backend measures with (use "
        "one or the other); unset NEURON_RT_INSPECT_ENABLE to measure with pytest-neuronperf"
    )


def find_explorer(path_dirs: Sequence[Path] = EXPLORER_DIRS) -> str | None:
    """The ``neuron-explorer`` binary: on PATH, else where aws-neuronx-tools installs it."""
    found = shutil.which(EXPLORER)
    if found:
        return found
    for directory in path_dirs:
        candidate = directory / EXPLORER
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


@dataclass(frozen=True)
class RuntimePlan:
    """Whether each measurement's Neuron Runtime trace is read, and why (not)."""

    enabled: bool
    reason: str


def runtime_plan(
    backfill: bool, modes: Sequence[str], has_pyarrow: bool, explorer: str | None
) -> RuntimePlan:
    """The runtime trace is a cross-check beside the backfill, and the device time where
    the backfill is absent: then a missing tool is a usage error naming what to install."""
    missing = []
    if not has_pyarrow:
        missing.append(f"pyarrow ({INSTALL_EXTRA})")
    if explorer is None:
        missing.append(
            f"the {EXPLORER} binary (aws-neuronx-tools; add /opt/aws/neuron/bin to PATH)"
        )
    no_backfill = (
        f"this torch-neuronx's NeuronConfig does not accept {CORRELATE}, so key_averages() "
        f"carries no backfilled device time (the tutorial's path needs {PAIRING} or newer)"
    )
    if "RUNTIME" not in modes:
        if backfill:
            return RuntimePlan(False, "off: RUNTIME is not among the NeuronConfig modes")
        raise BackendMisconfigured(
            f"no device-time source: {no_backfill}, and the NeuronConfig modes lack RUNTIME, "
            "so there is no runtime trace either; add RUNTIME to neuron_profile_neuron_config "
            "modes"
        )
    if missing:
        if backfill:
            return RuntimePlan(False, f"off: needs {' and '.join(missing)}")
        raise BackendMisconfigured(
            f"{no_backfill}; the Neuron Runtime trace is then the device time and reading it "
            f"needs {' and '.join(missing)}"
        )
    return RuntimePlan(True, f"on ({explorer})")
