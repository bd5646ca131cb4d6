"""Neuron's profiler output -> our neutral events and device kind. Pure functions, no torch.

What this stands on (see ../shared/NEURON.md; none of it could be run on a Neuron device):

- **Device executions as PrivateUse1 device events.** With ``ProfilerActivity.PrivateUse1``
  and ``NeuronConfig(..., correlate_device_time=True)``, the device time is filled back
  into ``key_averages()`` (AWS's tutorial; one public script). ``key_averages()`` can only
  get device time from device ``FunctionEvent``s that torch's Kineto parser linked to a CPU
  op by ``linked_correlation_id`` (torch's ``_parse_kineto_results`` appends them to the
  op's ``kernels``). So this adapter reads those device events first, exactly like CUDA
  kernels. UNVERIFIED: that Neuron emits them per NEFF execution, their names, and whether
  a runtime launch event carries the same correlation (without one there is no launch gap).
- **Fallback: per-op kernel lists.** If the profiler hands back no device events but ops
  carry ``kernels`` entries (torch's ``Kernel(name, device, duration)``; ``device_time_total``
  is their sum), each entry becomes one device event of the op, starting with the op.
  UNVERIFIED: whether that case occurs at all.
- **Device kind.** ``neuron:<family>:<n>nc`` from the EC2 instance type (``trn1``, ``trn2``,
  ``inf2`` ...) and ``torch.neuron.device_count()``. The instance type is read from
  ``/sys/devices/virtual/dmi/id/product_name``, which EC2 Nitro instances fill with it.
  UNVERIFIED: on a Trainium host, and whether device_count counts logical NeuronCores
  (Trn2 pairs its 8 physical cores into 4 logical ones by default).

``benchmarks/verify_neuron.py`` checks each of these on hardware in one command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..trace.events import Event, Kind, events_from_function_events

PRODUCT_NAME = Path("/sys/devices/virtual/dmi/id/product_name")
_FAMILY = re.compile(r"^(trn|inf)(\d+)([a-z]*)\.", re.IGNORECASE)


def instance_family(instance_type: str) -> str | None:
    """``trn2.48xlarge`` -> ``trn2``, ``trn1n.32xlarge`` -> ``trn1n``; None if not Neuron."""
    m = _FAMILY.match(instance_type.strip())
    if m is None:
        return None
    return f"{m.group(1)}{m.group(2)}{m.group(3)}".lower()


def neuron_device_kind(instance_type: str | None, core_count: int) -> str:
    family = instance_family(instance_type or "") or "unknown"
    return f"neuron:{family}:{core_count}nc"


def read_instance_type(path: Path = PRODUCT_NAME) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


def neuron_events(function_events: Iterable[Any]) -> list[Event]:
    """Events of a live profile on the native TorchNeuron backend (see module docstring)."""
    fes = list(function_events)
    events = events_from_function_events(fes)
    if any(e.kind is Kind.KERNEL for e in events):
        return events
    for fe in fes:
        device = getattr(fe.device_type, "name", str(fe.device_type))
        if device != "CPU" or getattr(fe, "is_user_annotation", False):
            continue
        start = float(fe.time_range.start)
        for k in getattr(fe, "kernels", ()) or ():
            duration = float(getattr(k, "duration", 0.0) or 0.0)
            if duration <= 0:
                continue
            events.append(
                Event(
                    name=str(getattr(k, "name", fe.name)),
                    kind=Kind.KERNEL,
                    start_us=start,
                    dur_us=duration,
                    track=("device", getattr(k, "device", 0)),
                    # Tied to its op by the op's own id; correlation 0 says "no launch".
                    ext_id=int(fe.id),
                )
            )
    return events
