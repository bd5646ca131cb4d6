"""torch.profiler's events on the native TorchNeuron backend -> per-op device time, read the
way ``key_averages()`` reads it; and the device kind. Pure functions, no torch import.

What this stands on (docs/neuron.md; none of it has been seen from hardware):

- **The backfill.** With ``NeuronConfig(correlate_device_time=True)`` the tutorial shows
  device time in ``key_averages()``, beside CPU time. ``key_averages()`` sums each
  ``FunctionEvent``'s own device-time fields, ``device_time_total`` (the op's kernels and
  its children's) and ``self_device_time_total``. torch fills those either from device
  events linked to the op (``_parse_kineto_results`` appends every PrivateUse1 event whose
  ``linked_correlation_id`` is the op's id to its ``kernels``) or from the backend's
  elapsed-time hook (``privateuse1_elapsed_us``: one kernel named after the op, and the
  event marked legacy). Reading the fields works whichever way the backfill arrives, so a
  region's device time here is, per top-level op, its ``device_time_total``.
- **Linked device events** (PrivateUse1 events tied to an op through
  ``linked_correlation_id`` or a launch's correlation, as trace.analysis.TraceIndex ties
  CUDA kernels) name the kernels and count them. Their time counts only for an op whose
  fields are empty (events torch did not append to it, e.g. linked to a runtime call), so
  an execution present both as a linked event and in the op's fields counts once.
- **Device kind.** ``neuron:<family>:<n>nc:lnc<k>`` from the EC2 instance type (read from
  ``/sys/devices/virtual/dmi/id/product_name``, which Nitro instances fill with it),
  ``torch.neuron.device_count()`` and the logical-core setting ``NEURON_LOGICAL_NC_CONFIG``
  (documented default 2 on Trn2 and Trn3; the setting applies to no other family).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...trace.analysis import (
    RoundResult,
    TraceIndex,
    compile_activity,
    find_markers,
    region_ops,
)
from ...trace.events import Event, Kind, events_from_function_events

PRODUCT_NAME = Path("/sys/devices/virtual/dmi/id/product_name")
_FAMILY = re.compile(r"^(trn|inf)(\d+)([a-z]*)\.", re.IGNORECASE)
LNC_VARIABLE = "NEURON_LOGICAL_NC_CONFIG"
# Families with logical NeuronCores, and their documented default (logical-neuroncore-config).
_LNC_DEFAULT = {"trn2": 2, "trn3": 2}


def instance_family(instance_type: str) -> str | None:
    """``trn2.48xlarge`` -> ``trn2``, ``trn1n.32xlarge`` -> ``trn1n``; None if not Neuron."""
    m = _FAMILY.match(instance_type.strip())
    if m is None:
        return None
    return f"{m.group(1)}{m.group(2)}{m.group(3)}".lower()


def logical_core_setting(env: Mapping[str, str], family: str | None) -> str:
    """``lnc2``: the setting in the environment, else the family's documented default
    (``lnc1`` where there are no logical cores); ``lnc?`` when neither is known."""
    value = env.get(LNC_VARIABLE, "").strip()
    if value:
        return f"lnc{value}" if value.isdigit() else "lnc?"
    if family is None:
        return "lnc?"
    base = re.sub(r"[a-z]+$", "", family)  # trn2u -> trn2
    return f"lnc{_LNC_DEFAULT.get(base, 1)}"


def neuron_device_kind(instance_type: str | None, core_count: int, lnc: str) -> str:
    """Baselines under LNC=1 and LNC=2 are different machines: the setting is in the key."""
    family = instance_family(instance_type or "") or "unknown"
    return f"neuron:{family}:{core_count}nc:{lnc}"


def read_instance_type(path: Path = PRODUCT_NAME) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


@dataclass(frozen=True)
class OpDevice:
    """One top-level op's device time: its own fields and its linked device events."""

    name: str
    total_us: float  # device_time_total: the op's row in key_averages(), children included
    self_us: float  # self_device_time_total
    linked_us: float  # device events linked to the op or to anything under it
    kernels: tuple[str, ...]

    @property
    def device_us(self) -> float:
        return self.total_us if self.total_us > 0 else self.linked_us

    @property
    def source(self) -> str:
        if self.total_us > 0:
            return "fields"
        return "linked events" if self.linked_us > 0 else "none"


@dataclass(frozen=True)
class BackfillRound:
    """One round as the backfill shows it."""

    result: RoundResult
    ops: tuple[OpDevice, ...]

    @property
    def dispatched(self) -> bool:
        """The round dispatched ops: on the neuron backend they are meant for the device."""
        return bool(self.result.ops)


def _field(fe: Any, name: str) -> float:
    return float(getattr(fe, name, 0.0) or 0.0)


def _paired(function_events: Iterable[Any]) -> tuple[list[Event], dict[int, Any]]:
    """Our events and, for each, the FunctionEvent it came from (by the event's id())."""
    events: list[Event] = []
    source: dict[int, Any] = {}
    for fe in function_events:
        for ev in events_from_function_events([fe]):
            events.append(ev)
            source[id(ev)] = fe
    return events, source


def _kernel_entries(op: Event, source: Mapping[int, Any]) -> list[str]:
    """Names in the ``kernels`` lists under ``op``, outermost first: an op's list already
    covers its children (the elapsed-time hook times an op inclusively)."""
    fe = source.get(id(op))
    own = [str(getattr(k, "name", op.name)) for k in (getattr(fe, "kernels", None) or ())]
    if own:
        return own
    return [name for child in op.children for name in _kernel_entries(child, source)]


def op_device(op: Event, fe: Any, index: TraceIndex, source: Mapping[int, Any]) -> OpDevice:
    linked = index.device_events(op)
    kernels = [k.name for k in linked if k.kind is Kind.KERNEL]
    total = _field(fe, "device_time_total")
    if not kernels and total > 0:
        kernels = _kernel_entries(op, source)
    return OpDevice(
        name=op.name,
        total_us=total,
        self_us=_field(fe, "self_device_time_total"),
        linked_us=sum(k.dur_us for k in linked),
        kernels=tuple(kernels),
    )


def backfill_rounds(function_events: Iterable[Any], markers: Sequence[str]) -> list[BackfillRound]:
    """One BackfillRound per marker (each must occur), from ``prof.events()``."""
    events, source = _paired(function_events)
    index = TraceIndex.build(events)
    found = find_markers(events, markers)
    return [_round(found[m], index, source) for m in markers]


def _round(node: Event, index: TraceIndex, source: Mapping[int, Any]) -> BackfillRound:
    result = RoundResult(wall_us=node.dur_us)
    result.compiled_regions, result.graph_breaks, result.compiles = compile_activity(node)
    ops: list[OpDevice] = []
    for op in region_ops(node, index):
        od = op_device(op, source.get(id(op)), index, source)
        ops.append(od)
        result.ops.append(op.name)
        result.kernels.extend(od.kernels)
        result.device_us += od.device_us
        result.op_device_us[op.name] = result.op_device_us.get(op.name, 0.0) + od.device_us
        result.op_kernels[op.name] = result.op_kernels.get(op.name, 0) + len(od.kernels)
        for k in index.device_events(op):
            launch = index.launches.get(k.correlation)
            if k.kind is Kind.KERNEL and launch is not None:
                result.launch_gaps_us.append(max(0.0, k.start_us - launch.start_us))
    return BackfillRound(result, tuple(ops))


def key_averages_device_us(averages: Iterable[Any]) -> float:
    """The device-time total that ``key_averages().table()`` prints under its table
    (torch's ``_build_table``): self device time of device-typed rows that are no user
    annotation, plus that of legacy CPU rows (the elapsed-time hook's)."""
    total = 0.0
    for row in averages:
        device = getattr(getattr(row, "device_type", None), "name", "")
        if device == "CPU":
            if getattr(row, "is_legacy", False):
                total += _field(row, "self_device_time_total")
        elif not getattr(row, "is_user_annotation", False):
            total += _field(row, "self_device_time_total")
    return total
