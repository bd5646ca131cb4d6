"""The profiled rounds of a callable: one profiler session, one marker per round.

This module's one job is the part of a callable's measurement that runs under the
profiler: a prime round that absorbs a fresh profiler's slow start (settled again if the
region faulted after its first call), then each round inside its ``record_function``
marker, with the reference tick, the round's host window and its page faults taken beside
it. Warm-up, host-time sampling and reading the profile back stay with the runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends import Backend, Window
from ..backends.memory import AllocatorFigures, MemoryProbe
from .group import profiler_kwargs
from .progress import Writer, phase
from .reference import Reference
from .settle import page_faults, settle


@dataclass
class Profiled:
    """What the profiled rounds leave: the finished profiler, the last round's result,
    and per round its reference tick (when timed), host window and page faults."""

    prof: Any = None
    result: Any = None
    device_refs: list[float] = field(default_factory=list)
    # Host windows (the wall clock Neuron's runtime trace also uses) place device
    # executions in their round; each ends after the round's synchronize.
    host_windows: dict[str, Window] = field(default_factory=dict)
    round_faults: list[float] = field(default_factory=list)
    # Per round, the device allocator's counters (memory profiled on a device with them).
    allocator: dict[str, AllocatorFigures] = field(default_factory=dict)


def profile_rounds(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    backend: Backend,
    markers: Sequence[str],
    prime: str,
    *,
    resettle: bool,
    reference: Reference | None,
    progress: Writer | None,
    what: str,
    memory: bool = False,
    primed_hook: Callable[[], None] | None = None,
) -> Profiled:
    """One round per marker under one profiler session, after the ``prime`` round.
    ``resettle``: the region faulted after its first call, so the prime round settles.
    ``primed_hook``: called once the prime round (the last of the warm-up) has run.
    ``memory``: record allocations (``profile_memory``) and read the device allocator's
    counters around each round where the backend has them; each round then drops its
    result inside its marker, so what a round leaves allocated is what the call retains,
    not the result it handed back, and one unmarked call after the rounds gives the result
    returned (docs/memory.md)."""
    from torch.profiler import profile, record_function

    sync = backend.synchronize
    faults = page_faults or (lambda: 0)
    out = Profiled()
    probe = backend.memory_probe() if memory else None
    counters = probe if isinstance(probe, MemoryProbe) else None
    with (
        phase(progress, f"{what} profiling {len(markers)} rounds"),
        profile(
            activities=backend.activities(),
            profile_memory=memory,
            **{**backend.profiler_kwargs(), **profiler_kwargs()},
        ) as prof,
    ):
        # A fresh profiler's first rounds run slower: an unanalysed prime round absorbs
        # that (docs/design.md, "How a callable is measured").
        def primed() -> None:
            with record_function(prime):
                fn(*args, **kwargs)
                sync()

        f0 = faults()
        primed()
        # Only a region that faulted after its first call settles again (docs/design.md).
        if resettle:
            settle(primed, [faults() - f0])
        if primed_hook is not None:
            primed_hook()
        for marker in markers:
            if reference is not None:
                # Bare: a record_function around each tick doubled the time torch takes
                # to read the profile back. Its aten::mul calls sit between the rounds.
                out.device_refs.append(reference.tick())
            _one_round(out, marker, (fn, args, kwargs), sync, faults, counters, memory)
        if memory:
            out.result = fn(*args, **kwargs)
            sync()
    out.prof = prof
    return out


def _one_round(
    out: Profiled,
    marker: str,
    call: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]],
    sync: Callable[[], None],
    faults: Callable[[], int],
    counters: MemoryProbe | None,
    memory: bool,
) -> None:
    """One profiled round inside its marker, its host window, faults and counters beside it."""
    from torch.profiler import record_function

    fn, args, kwargs = call
    if counters is not None:
        counters.start()
    f0 = faults()
    w0 = time.time_ns()
    with record_function(marker):
        out.result = fn(*args, **kwargs)
        sync()
        if memory:
            out.result = None  # its frees belong to the round (profile_rounds' docstring)
    out.host_windows[marker] = (w0, time.time_ns())
    out.round_faults.append(float(faults() - f0))
    if counters is not None:
        out.allocator[marker] = counters.stop()
