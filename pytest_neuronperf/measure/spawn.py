"""``neuron_profile.distributed``: spawn the ranks, measure ``fn`` on each, bring back
their figures as plain dicts, and leave nothing running.

Each rank is a fresh process (multiprocessing's spawn: torch and a process group do not
survive fork), initialises the process group over TCP on a free local port, measures in
lockstep (distributed.measure_rank), destroys the group and sends its Measurement's dict
or its traceback on a queue. The parent waits until every rank has answered, a rank has
failed or the timeout has passed; on failure or timeout it stops every rank still running
and raises one sentence naming the rank. docs/distributed.md.
"""

from __future__ import annotations

import os
import pickle
import queue
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..model import Measurement
from .errors import MeasureError
from .group import group

BACKENDS = ("gloo", "nccl")
# How long a stopped rank gets to exit before it is killed.
_GRACE_S = 5.0
_POLL_S = 0.05


@dataclass(frozen=True)
class RankJob:
    """What every rank is told: plain values besides the user's callable and arguments."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    test_id: str
    name: str
    seq: int
    rounds: int
    warmup: int
    backend: str
    world_size: int
    port: int
    timeout_s: float
    measure: bool
    threads: int | None


def check_request(world_size: Any, backend: Any, timeout_s: Any) -> None:
    """One sentence for a request the machine or this process cannot honour."""
    what = "neuron_profile.distributed"
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise MeasureError(f"{what}: world_size={world_size!r}: expected a whole number >= 1")
    if backend == "neuron":
        raise MeasureError(f"{what}: backend='neuron': {_neuron_why()}")
    if backend not in BACKENDS:
        raise MeasureError(f"{what}: backend={backend!r}: expected one of {', '.join(BACKENDS)}")
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, int | float)
        or not 0 < timeout_s < float("inf")
    ):
        raise MeasureError(f"{what}: timeout={timeout_s!r}: expected seconds > 0")
    limit, unit = _capacity(backend)
    if world_size > limit:
        raise MeasureError(
            f"{what}: world_size={world_size} is more than this machine allows for "
            f"{backend} ({limit} {unit}); use world_size <= {limit}"
        )
    where = group()
    if where is not None:
        raise MeasureError(
            f"{what}: torch.distributed is already initialised in this process (rank "
            f"{where[0]} of {where[1]}); under torchrun call neuron_profile(fn) directly "
            "(every rank measures), or destroy the process group before this call"
        )


def _neuron_why() -> str:
    """Why no Neuron ranks are spawned here: torch-neuronx is absent, or (present) its
    process group has not been verified with this plugin on a Trainium host."""
    import importlib.util

    if importlib.util.find_spec("torch_neuronx") is None:
        return (
            "torch-neuronx is not installed, and the Neuron process group comes with it; "
            "use gloo to test the region's collectives on CPU"
        )
    return (
        "spawning Neuron ranks is not supported yet (unverified on Trainium); run the "
        "session under torchrun with the process group initialised, and measure with "
        "neuron_profile(fn)"
    )


def _capacity(backend: str) -> tuple[int, str]:
    if backend == "nccl":
        import torch

        return (torch.cuda.device_count() if torch.cuda.is_available() else 0), "CUDA devices"
    # One core a rank: more ranks than cores time the scheduler, not the region.
    return os.cpu_count() or 1, "CPU cores"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def run_ranks(job: RankJob) -> list[Measurement]:
    """Every rank's Measurement, by rank (empty when ``job.measure`` is off)."""
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    answers: Any = ctx.Queue()
    procs = [
        ctx.Process(target=rank_main, args=(rank, job, answers), daemon=True)
        for rank in range(job.world_size)
    ]
    try:
        try:
            for p in procs:
                p.start()
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise MeasureError(
                f"neuron_profile.distributed({job.name!r}): the callable and its arguments "
                f"must pickle to reach the ranks (a module-level function): {exc}"
            ) from None
        got = _wait(procs, answers, job)
    finally:
        _stop(procs)
        answers.close()
    return [Measurement.from_dict(got[r]) for r in range(job.world_size)] if job.measure else []


def _wait(procs: list[Any], answers: Any, job: RankJob) -> dict[int, dict[str, Any]]:
    what = f"neuron_profile.distributed({job.name!r})"
    deadline = time.monotonic() + job.timeout_s
    got: dict[int, dict[str, Any]] = {}
    while len(got) < len(procs):
        try:
            kind, rank, payload = answers.get(timeout=_POLL_S)
        except queue.Empty:
            kind = ""
        if kind == "ok":
            got[rank] = payload
        elif kind == "error":
            raise MeasureError(
                f"{what}: rank {rank} of {job.world_size} failed: {_last_line(payload)}; "
                f"every rank was stopped\n{payload}"
            )
        for rank, p in enumerate(procs):
            if rank not in got and p.exitcode is not None and answers.empty():
                raise MeasureError(
                    f"{what}: rank {rank} of {job.world_size} exited with status "
                    f"{p.exitcode} without a result (killed, or os._exit); every rank "
                    "was stopped"
                )
        if time.monotonic() > deadline:
            waiting = ", ".join(str(r) for r in range(len(procs)) if r not in got)
            raise MeasureError(
                f"{what}: rank {waiting} of {job.world_size} did not finish within "
                f"{job.timeout_s:g} s (waiting in a collective its peers never made?); every "
                "rank was stopped. Raise timeout= if the region is that slow"
            )
    return got


def _stop(procs: list[Any]) -> None:
    """Terminate what still runs, then kill what ignored it; reap every process started."""
    procs = [p for p in procs if p.pid is not None]
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + _GRACE_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no traceback"


def rank_main(rank: int, job: RankJob, answers: Any) -> None:
    """One rank: the process group up, the region measured, the group down, one answer."""
    try:
        answers.put(("ok", rank, _measure(rank, job)))
    except BaseException:
        answers.put(("error", rank, traceback.format_exc()))
    finally:
        answers.close()
        answers.join_thread()


def _measure(rank: int, job: RankJob) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    if job.threads is not None:
        torch.set_num_threads(job.threads)
    dist.init_process_group(
        job.backend,
        init_method=f"tcp://127.0.0.1:{job.port}",
        rank=rank,
        world_size=job.world_size,
        timeout=timedelta(seconds=job.timeout_s),
    )
    try:
        if not job.measure:
            job.fn(*job.args, **job.kwargs)
            return {}
        return _measure_here(job).to_dict()
    finally:
        dist.destroy_process_group()


def _measure_here(job: RankJob) -> Measurement:
    from ..backends import Backend, CpuBackend, CudaBackend
    from .distributed import measure_rank

    backend: Backend
    if job.backend == "nccl":
        import torch

        torch.cuda.set_device(torch.distributed.get_rank() % torch.cuda.device_count())
        backend = CudaBackend()
    else:
        backend = CpuBackend()
    backend.prepare()
    environment = {**backend.versions(), "device_kind": backend.device_kind()}
    _, m = measure_rank(
        job.fn,
        job.args,
        job.kwargs,
        backend=backend,
        environment=environment,
        test_id=job.test_id,
        name=job.name,
        seq=job.seq,
        rounds=job.rounds,
        warmup=job.warmup,
    )
    return m
