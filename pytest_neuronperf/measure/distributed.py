"""Distributed regions: each rank measured in lockstep, the ranks' figures made one.

Ranks must make the same calls in the same order, or a collective waits forever; so a
region measured under a process group runs a fixed number of calls (warm-up, a prime
round, the rounds), none of the adaptive steps a single process takes (allocator settling,
the host-time window, the second look). Its collectives come from the profile exported as
a chrome trace (trace/collectives.py), recorded with shapes so that gloo's calls carry
their sizes. ``ranked``/``combine`` turn every rank's Measurement into the region's one:
the figures of the rank that made the most collectives (then bytes, ops, device time),
naming that rank, with every rank's summary beside them. docs/distributed.md.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..backends import Backend
from ..markers import PRIME, marker_name
from ..model import Measurement, RankFigures
from ..trace.analysis import Mode, TraceIndex, find_markers
from ..trace.collectives import calls_from_chrome, total_bytes, total_calls
from ..trace.events import events_from_chrome
from ..trace.offline import load_trace, with_collectives
from ..trace.summary import summarize
from .errors import MeasureError
from .group import group
from .rounds import profile_rounds

# The c10d ops that issue a collective on the calling thread.
COLLECTIVE_OPS = "c10d::"


def measure_rank(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    backend: Backend,
    environment: dict[str, str],
    test_id: str,
    name: str,
    seq: int,
    rounds: int,
    warmup: int,
) -> tuple[Any, Measurement]:
    """This rank's Measurement of ``fn`` over a fixed number of calls (see the module)."""
    where = group()
    if where is None:
        raise MeasureError("measure_rank needs an initialised process group")
    rank, world = where
    if rounds < 1 or warmup < 0:
        raise MeasureError(
            f"rounds must be >= 1 and warmup >= 0 (got rounds={rounds}, warmup={warmup})"
        )
    t0 = time.perf_counter_ns()
    for _ in range(warmup):
        fn(*args, **kwargs)
        backend.synchronize()
    warmup_us = (time.perf_counter_ns() - t0) / 1e3
    markers = [marker_name(seq, name, r) for r in range(rounds)]
    run = profile_rounds(
        fn,
        args,
        kwargs,
        backend,
        markers,
        marker_name(seq, name, PRIME),
        resettle=False,
        reference=None,
        progress=None,
        what=f"{test_id} {name!r} rank {rank}",
    )
    [analyzed] = backend.analyze(run.prof, [markers], run.host_windows)
    host = [(w1 - w0) / 1e3 for w0, w1 in (run.host_windows[m] for m in markers)]
    m = summarize(
        analyzed.rounds,
        test_id=test_id,
        region=name,
        backend=backend.name,
        device_kind=environment.get("device_kind", backend.device_kind()),
        host=host,
        environment=environment,
        warmup_rounds=warmup,
        warmup_us=warmup_us,
    )
    m = with_live_collectives(m, run.prof, markers, world, backend.mode)
    return run.result, replace(m, rank=rank, device_notes=analyzed.notes)


def with_live_collectives(
    m: Measurement, prof: Any, markers: Sequence[str], world: int, mode: Mode
) -> Measurement:
    """``m`` with the collectives (and, on a device, the communication kernels) of its
    rounds, read from the finished profile's chrome trace as a saved trace is read."""
    with tempfile.TemporaryDirectory(prefix="neuronperf-") as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        doc = load_trace(path)
    events = events_from_chrome(doc, source="the live profile")
    found = find_markers(events, markers)
    nodes = [found[marker] for marker in markers]
    calls = calls_from_chrome(list(doc.whole), world)
    index = TraceIndex.build(events)
    out = with_collectives(m, m.region, nodes, mode, index, calls, world)
    return replace(out, world_size=world)


def _weight(m: Measurement) -> tuple[int, int, int, float]:
    return (total_calls(m.collectives), total_bytes(m.collectives), m.ops, m.device_us.median)


def combine(per_rank: Sequence[Measurement]) -> Measurement:
    """The region's one Measurement: the heaviest rank's figures, every rank's summary."""
    if not per_rank:
        raise MeasureError("no rank reported a measurement")
    worst = max(per_rank, key=_weight)
    ranks = tuple(
        RankFigures(
            rank=m.rank if m.rank is not None else i,
            ops=m.ops,
            collectives=total_calls(m.collectives),
            comm_bytes=total_bytes(m.collectives),
            device_us=m.device_us.median,
            host_us=m.host_us.median,
            compute_us=split(m)[0],
            comm_us=split(m)[1],
        )
        for i, m in enumerate(per_rank)
    )
    return replace(worst, ranks=tuple(sorted(ranks, key=lambda r: r.rank)))


def split(m: Measurement) -> tuple[float, float]:
    """A rank's device time as compute and exposed communication: from the communication
    kernels on a device; on CPU, the collectives' ops (``c10d::``) are the communication,
    their wait for the other ranks included, and the rest is compute. (compute, comm) µs."""
    if m.comm is not None:
        return m.comm.compute_us.median, m.comm.exposed_us.median
    comm = sum(r.device_us for r in m.per_op if r.name.startswith(COLLECTIVE_OPS))
    return max(0.0, m.device_us.median - comm), comm


def gather(m: Measurement) -> list[Measurement]:
    """Every rank's Measurement of the region, through the process group (torchrun: each
    rank measured the same region; all_gather_object sends its plain dict)."""
    import torch.distributed as dist

    world = dist.get_world_size()
    out: list[Any] = [None] * world
    dist.all_gather_object(out, m.to_dict())
    return [Measurement.from_dict(d) for d in out]
