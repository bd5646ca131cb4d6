"""A folder of one job's rank traces (what ``tensorboard_trace_handler`` writes on every
rank) -> one row per rank and step with its device and host time, and the slowest rank (by
device time; by host time where no rank recorded device time).

Traces are read in parallel, one per process, each process reading one file and then
exiting (``max_tasks_per_child=1``: the memory a parsed trace leaves behind goes with it).
Memory is bounded by the number of processes: each needs about footprint.MEMORY_FACTOR
times its file's (uncompressed) size at its peak, and only as many run at once as fit in
the memory available. A file that alone would not fit is refused before any is read, with
how to make it smaller.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .events import TraceError
from .footprint import MEMORY_SHARE, available_bytes, workers_for
from .offline import ModeChoice, load_trace, prepare, region_rounds, select_regions

_TRACE_SUFFIXES = (".json", ".json.gz")


@dataclass(frozen=True)
class StepRow:
    step: str
    device_us: float
    host_us: float


@dataclass(frozen=True)
class RankTrace:
    rank: int
    path: str
    mode: str
    steps: tuple[StepRow, ...]

    @property
    def device_us(self) -> float:
        return sum(s.device_us for s in self.steps)

    @property
    def host_us(self) -> float:
        return sum(s.host_us for s in self.steps)


@dataclass(frozen=True)
class JobReport:
    source: str
    ranks: tuple[RankTrace, ...]

    @cached_property
    def judged_by(self) -> str:
        """The time the slowest rank is told by: device time, or host time where no rank
        recorded any (a CPU job over gloo)."""
        return "device" if any(r.device_us > 0 for r in self.ranks) else "host"

    def time_of(self, r: RankTrace) -> float:
        return r.device_us if self.judged_by == "device" else r.host_us

    @cached_property
    def slowest(self) -> RankTrace:
        return max(self.ranks, key=lambda r: (self.time_of(r), -r.rank))

    @property
    def over_median(self) -> float:
        """How much more time the slowest rank took than the median of the other ranks
        (0.1: 10%); 0 for a single rank."""
        slowest = self.slowest
        others = [self.time_of(r) for r in self.ranks if r is not slowest]
        median = statistics.median(others) if others else 0.0
        return self.time_of(slowest) / median - 1 if median > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.source,
            "slowest_rank": self.slowest.rank,
            "slowest_by": f"{self.judged_by}_us",
            "slowest_over_median": self.over_median,
            "ranks": [
                {
                    "rank": r.rank,
                    "trace": r.path,
                    "mode": r.mode,
                    "device_us": r.device_us,
                    "steps": [
                        {"step": s.step, "device_us": s.device_us, "host_us": s.host_us}
                        for s in r.steps
                    ],
                }
                for r in self.ranks
            ],
        }


def trace_files(directory: Path) -> list[Path]:
    """The folder's trace files (regular files named .json or .json.gz), sorted."""
    found = sorted(
        p for p in directory.iterdir() if p.name.endswith(_TRACE_SUFFIXES) and p.is_file()
    )
    if not found:
        raise TraceError(
            f"{directory}: is a directory with no trace files (*.json, *.json.gz); give a "
            "trace file, or the folder tensorboard_trace_handler wrote"
        )
    return found


def read_rank(path: Path, mode: ModeChoice = "auto") -> RankTrace:
    """One rank's rows; runs in a reader process. TraceError for anything not a rank trace."""
    doc = load_trace(path)
    info = doc.distributed_info
    rank = info.get("rank") if isinstance(info, dict) else None
    if isinstance(rank, bool) or not isinstance(rank, int):
        raise TraceError(
            f"{path}: no distributedInfo.rank: not a rank's trace (torch.profiler records it "
            "when torch.distributed is initialised)"
        )
    trace = prepare(doc, path, mode)
    del doc  # the parsed JSON is the largest thing alive: gone before the analysis
    rows: list[StepRow] = []
    for region, nodes in select_regions(trace.events, trace.index, None, str(path)):
        rounds = region_rounds(region, nodes, trace.mode, trace.index)
        # One row a step (ProfilerStep#N), or a region's name with its round.
        for i, (node, r) in enumerate(zip(nodes, rounds, strict=True)):
            step = node.name if node.name != region else f"{region} #{i}"
            rows.append(StepRow(step, r.device_us, r.wall_us))
    return RankTrace(rank, str(path), trace.mode, tuple(rows))


def report_ranks(
    directory: Path, mode: ModeChoice = "auto", workers: int | None = None
) -> JobReport:
    """Every rank trace in ``directory``; TraceError (one line) for a folder that is not
    one job's rank traces."""
    files = trace_files(directory)
    if workers is None:
        budget = int(available_bytes() * MEMORY_SHARE)
        workers = workers_for(files, budget, os.cpu_count() or 1)
    if workers == 1 or len(files) == 1:
        ranks = [read_rank(f, mode) for f in files]
    else:
        # spawn: the CLI may run inside a process holding threads (torch's), which fork
        # would copy half-locked.
        with ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1
        ) as pool:
            ranks = list(pool.map(read_rank, files, [mode] * len(files)))
    seen: dict[int, str] = {}
    for r in ranks:
        if r.rank in seen:
            raise TraceError(
                f"{r.path}: rank {r.rank} again (also {seen[r.rank]}); give one job's traces, "
                "one per rank"
            )
        seen[r.rank] = r.path
    return JobReport(str(directory), tuple(sorted(ranks, key=lambda r: r.rank)))
