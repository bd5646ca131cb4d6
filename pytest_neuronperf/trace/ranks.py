"""A folder of one job's rank traces (what ``tensorboard_trace_handler`` writes on every
rank) -> one row per rank and step with its device time, and the slowest rank.

Traces are read in parallel, one per process, each process reading one file and then
exiting (``max_tasks_per_child=1``: the memory a parsed trace leaves behind goes with it).
Memory is bounded by the number of processes: each needs about ``MEMORY_FACTOR`` times
its file's (uncompressed) size at its peak (measured: benchmarks/RESULTS.md), and only as
many run at once as fit in the memory available. A file that alone would not fit is
refused before any is read, with how to make it smaller.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .events import TraceError
from .offline import ModeChoice, load_trace, prepare, region_rounds, select_regions

# Peak resident memory of reading one trace, as a multiple of its uncompressed size.
MEMORY_FACTOR = 6.0
# The share of the available memory the readers may take together.
MEMORY_SHARE = 0.8
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


@dataclass(frozen=True)
class JobReport:
    source: str
    ranks: tuple[RankTrace, ...]

    @property
    def slowest(self) -> RankTrace:
        return max(self.ranks, key=lambda r: (r.device_us, -r.rank))

    @property
    def over_median(self) -> float:
        """How much more device time the slowest rank took than the median rank (0.1: 10%)."""
        median = statistics.median(r.device_us for r in self.ranks)
        return self.slowest.device_us / median - 1 if median > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "traces": self.source,
            "slowest_rank": self.slowest.rank,
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
            f"{directory}: no trace files (*.json, *.json.gz) in the folder; give the folder "
            "tensorboard_trace_handler wrote"
        )
    return found


def read_rank(path: Path, mode: ModeChoice = "auto") -> RankTrace:
    """One rank's rows; runs in a reader process. TraceError for anything not a rank trace."""
    doc = load_trace(path)
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
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


def needed_bytes(path: Path) -> int:
    """About what reading ``path`` takes at its peak: its uncompressed size (a gzip's
    trailer holds it, modulo 4 GiB) times MEMORY_FACTOR."""
    size = path.stat().st_size
    if path.name.endswith(".gz") and size >= 4:
        with path.open("rb") as f:
            f.seek(-4, os.SEEK_END)
            size = max(size, int.from_bytes(f.read(4), "little"))
    return int(size * MEMORY_FACTOR)


def available_bytes() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def workers_for(files: Sequence[Path], budget: int, cpus: int) -> int:
    """How many readers fit: never more than CPUs or files, at least one; TraceError when
    the largest file alone does not fit in ``budget``."""
    largest = max(files, key=needed_bytes)
    need = needed_bytes(largest)
    if need > budget:
        raise TraceError(
            f"{largest}: too large to read here (needs about {need / 2**30:.1f} GiB, "
            f"{budget / 2**30:.1f} GiB available); record fewer steps "
            "(torch.profiler.schedule(active=...)) or fewer threads of detail "
            "(record_shapes=False, with_stack=False)"
        )
    return max(1, min(cpus, len(files), budget // max(need, 1)))


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
