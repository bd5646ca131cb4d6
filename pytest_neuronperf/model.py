"""The plain data that flows between modules: measurements and their parts.

Everything here is frozen and converts to and from JSON-ready dicts, because measurements
cross process boundaries (xdist workers) and land in files (baselines, reports).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal, get_args, get_type_hints

from .codec import Coded, rule
from .stats import Stats, TimeChange


class Status(StrEnum):
    """A record's verdict on its own terms: the report's status column."""

    MEASURED = "measured"  # no budget applied
    OK = "ok"  # within every budget that applied
    OVER_BUDGET = "over budget"
    TEST_FAILED = "test failed"  # the test itself failed: its figures are not judged
    TRACE = "trace"  # read from a saved trace (neuronperf report), nothing judged


class BaselineStatus(StrEnum):
    """A measurement against its stored baseline (gate/compare.py), in report order."""

    NEW = "new"  # no entry yet
    SAME = "same"  # nothing credible moved
    CHANGED = "changed"  # other ops at the same count
    IMPROVED = "improved"  # fewer ops, kernels or work, or credibly faster
    REGRESSED = "regressed"  # fails the test
    # recorded another way (thread count, window): nothing judged, never a failure
    NOT_COMPARABLE = "not comparable"


# Starts every note saying why an entry was not judged; the footer gathers them (terminal).
NOT_COMPARABLE_NOTE = f"neuronperf baseline: {BaselineStatus.NOT_COMPARABLE}: "
# Starts every note saying why a change past the tolerance was judged the same: it did not
# get past how far the baseline's recording processes ran apart (gate/spread.py).
APART_NOTE = "neuronperf baseline: within its recording processes' spread: "


class Outcome(StrEnum):
    """The one word a report shows for a region, worst first: the worse of its budget's and
    its baseline's verdicts. ``removed``: in the older report only (``neuronperf compare``)."""

    REGRESSED = "regressed"
    OVER_BUDGET = "over budget"
    # Fine itself: its test failed for another reason (an assertion, another region).
    TEST_FAILED = "test failed"
    CHANGED = "changed"
    IMPROVED = "improved"
    NEW = "new"
    REMOVED = "removed"
    SAME = "same"
    OK = "ok"


# What fails a test on performance.
FAILING = frozenset({Outcome.REGRESSED, Outcome.OVER_BUDGET})


@dataclass(frozen=True)
class TimeJudged(Coded):
    """The baseline gate's time verdict as a reader reconciles it: the gated time's medians
    as measured, how far the reference workloads moved between the two, and the change
    against them (ratios: 1.0 is no change). raw / references ~ judged."""

    metric: str  # host_us or device_us
    baseline_us: float
    now_us: float
    judged: float
    # now / then of the reference workloads' medians; None: judged on the raw times.
    references: float | None = None
    verdict: str = ""
    tolerance: float = 0.0
    # The verdict against the references alone where the raw rounds overruled it ("": they
    # agree); a change needs both (gate/times.py with_raw).
    overruled: str = ""

    @property
    def raw(self) -> float:
        return self.now_us / self.baseline_us if self.baseline_us > 0 else 1.0


@dataclass(frozen=True)
class OpRow(Coded):
    """One top-level op name in a region: calls and device time per round."""

    name: str
    calls: float
    device_us: float
    share: float
    kernels: float = 0.0


@dataclass(frozen=True)
class Collective(Coded):
    """One collective name in a region's round: calls, the input messages' bytes summed,
    the process group's size (0: unknown), and where the bytes came from ("message":
    the trace's message sizes and dtype; "shapes": the call's input shapes; "": unknown,
    bytes 0)."""

    calls: int
    bytes: int = 0
    group_size: int = 0
    bytes_from: str = ""


@dataclass(frozen=True)
class CommTime(Coded):
    """Communication kernels of a region per round: most kernels in a round, their summed
    and busy time, the compute's busy time beside it, and the exposed communication (the
    time communication ran and no compute did)."""

    kernels: int
    kernel_us: Stats
    busy_us: Stats
    compute_us: Stats
    exposed_us: Stats


@dataclass(frozen=True)
class RankFigures(Coded):
    """One rank's figures of a distributed region, for the per-rank view."""

    rank: int
    ops: int
    collectives: int
    comm_bytes: int
    device_us: float
    host_us: float
    # Device time split: compute, and communication nothing else overlapped (devices: the
    # exposed communication kernels; CPU: the collectives' ops, waiting for peers included).
    compute_us: float = 0.0
    comm_us: float = 0.0
    # Slowest rank beyond the tolerance of the median rank (gate/collectives.py).
    straggler: bool = field(default=False, metadata=rule(omit=False))


# Reference workloads and figures in their units divide or multiply times: a zero or
# negative one is damage, never a measurement.
_POSITIVE = rule(minimum=0.0, exclusive=True, nonempty=True)
# A figure only some regions have: files of the rest stay as they were.
_POSITIVE_OR_OMITTED = rule(minimum=0.0, exclusive=True, nonempty=True, omit=None)


# Retained bytes are negative for a region that frees more than it allocates.
_SIGNED = rule(minimum=-math.inf)


@dataclass(frozen=True, kw_only=True)
class Memory(Coded):
    """A region's memory, in bytes, from the worst round (the highest peak): the highest
    level allocated above the region's start, all it allocated, and what it left allocated
    at its end (a leak or a cache). ``op_bytes``: bytes each top-level op allocated, with
    allocations under no op in a row of their own. ``source`` says what it rests on:
    ``profiler`` (memory records, exact on CPU) or ``allocator`` (the device's counters)."""

    peak_bytes: int
    allocated_bytes: int
    retained_bytes: int = field(metadata=_SIGNED)
    op_bytes: dict[str, int] = field(default_factory=dict)
    source: str = "profiler"
    device: str = "cpu"


@dataclass(frozen=True)
class MemoryStep(Coded):
    """One stretch of a region's memory timeline: an op (or the time between ops), the
    highest level reached in it and the level at its end, above the region's start."""

    op: str
    high: int = field(metadata=_SIGNED)
    end: int = field(metadata=_SIGNED)


@dataclass(frozen=True, kw_only=True)
class Figures(Coded):
    """What a region measured that its baseline entry (baselines/entry.py) keeps as well:
    the counts, one time sample per round and the reference workloads timed beside them.
    Declared once here for Measurement and Entry; codec.py writes and checks them."""

    ops: int
    kernels: int
    op_counts: dict[str, int] = field(default_factory=dict)
    kernel_counts: dict[str, int] = field(default_factory=dict)
    device_us: Stats
    host_us: Stats
    rounds: int
    environment: dict[str, str] = field(default_factory=dict)
    # Per-op device time: the report's breakdown, and for an entry the HTML chart's
    # baseline bars. Never compared: the op multiset and the samples are what is judged.
    per_op: tuple[OpRow, ...] = ()
    # Host-timed backends: the reference workload timed right before each round
    # (reference.py), paired with host_us and device_us samples; None when not timed.
    reference_us: Stats | None = field(default=None, metadata=_POSITIVE)
    device_reference_us: Stats | None = field(default=None, metadata=_POSITIVE)
    # Per round, the 10th percentile of each timed call over the reference tick right before
    # it (window.py): the steadier figure the cpu gate judges. None without a reference.
    host_relative: Stats | None = field(default=None, metadata=_POSITIVE)
    # The same against the dispatch-bound reference tick, which tiny regions follow better;
    # the cpu gate calls a regression only when both agree (compare.py).
    dispatch_reference_us: Stats | None = field(default=None, metadata=_POSITIVE)
    host_relative_dispatch: Stats | None = field(default=None, metadata=_POSITIVE)
    # The same against the compute-bound tick (a small matmul), which arithmetic-heavy
    # regions follow; it joins the agreement for them (gate/ticks.py).
    compute_reference_us: Stats | None = field(default=None, metadata=_POSITIVE)
    host_relative_compute: Stats | None = field(default=None, metadata=_POSITIVE)
    # The same against the millisecond tick (a 384x384 matmul), timed only for regions of
    # about a millisecond or more; it alone judges those (gate/ticks.py).
    long_reference_us: Stats | None = field(default=None, metadata=_POSITIVE_OR_OMITTED)
    host_relative_long: Stats | None = field(default=None, metadata=_POSITIVE_OR_OMITTED)
    # Peak, allocated and retained bytes (trace/memory.py); None when memory was not
    # profiled, so files written before it existed still load.
    memory: Memory | None = field(default=None, metadata=rule(omit=None))
    # Distributed regions (trace/collectives.py): per collective name, the worst round's
    # calls and bytes, compared exactly; and the process group's size (0: none), so that an
    # entry from before collectives were counted is told from one that made none.
    collectives: dict[str, Collective] = field(default_factory=dict, metadata=rule(omit={}))
    world_size: int = field(default=0, metadata=rule(omit=0))

    def figures(self) -> dict[str, Any]:
        """The shared figures as keyword arguments, dicts copied: ``Entry(**m.figures())``."""
        return {
            f.name: dict(v) if isinstance(v := getattr(self, f.name), dict) else v
            for f in fields(Figures)
        }


def _per_round(tp: Any) -> bool:
    return tp is Stats or Stats in get_args(tp)


# The figures that hold one sample per round (pooled by Entry.pooled_with).
ROUND_SAMPLES: tuple[str, ...] = tuple(
    name for name, tp in get_type_hints(Figures).items() if _per_round(tp)
)


@dataclass(frozen=True, kw_only=True)
class Measurement(Figures):
    """What one region cost, over its measured rounds."""

    test_id: str
    region: str
    backend: str
    device_kind: str
    warmup_rounds: int = 0
    warmup_us: float = 0.0
    first_call_us: float = 0.0
    # Empty when every round dispatched the same ops; otherwise one line per odd round.
    round_variants: tuple[str, ...] = ()
    # torch.compile: resume frames entered after a graph break (worst round), recompilations
    # during the measurement, and the reasons Dynamo gave for either.
    graph_breaks: int = 0
    recompiles: int = 0
    compile_notes: tuple[str, ...] = ()
    # FLOPs and bytes of one execution (roofline.py), counted in a separate call; None for
    # with-regions (they run once) and for measurements recorded before counting existed.
    work: Work | None = None
    # The roof this measurement is held to (peaks.py); 0 when no peaks are known.
    peak_flops_per_s: float = 0.0
    peak_bytes_per_s: float = 0.0
    # Warm-up calls added until the allocator settled (settle.py), and the median minor page
    # faults of a measured round (None: the OS does not count them).
    settle_calls: int = 0
    page_faults: float | None = None
    # Calls timed for host_us over the window (window.py); each round's sample is the median
    # of its share. 0 for with-regions and measurements from before the window existed.
    host_calls: int = 0
    window_s: float = 0.0
    # Why an adaptive window stopped where it did (window.sample_window); "" otherwise.
    window_note: str = ""
    # Device backends: each kernel's wait from its launch call to its start on the device.
    launch_gap_us: Stats | None = None
    # Device backends: the time the device was busy (union of the region's device events,
    # overlapping streams once). device_us is their sum, which budgets and baselines use.
    device_busy_us: Stats | None = None
    # Set when the first window's host time regressed against the baseline and a second
    # window was sampled and judged in its place (measure.py); says what the first showed.
    recheck_note: str = ""
    # Device backends: where the device time came from and how a second source agreed
    # (Neuron: the key_averages() backfill beside the runtime trace; docs/neuron.md).
    device_notes: tuple[str, ...] = ()
    # Sentences about how the host time was taken that a reader should see beside it: calls
    # quantised at the scheduler tick (measure/tick.py).
    host_notes: tuple[str, ...] = ()
    # Memory over the region's ops, one step per op (the HTML step line); and why a region
    # whose memory was asked for has no figure ("" when it has one or none was asked).
    memory_steps: tuple[MemoryStep, ...] = field(default=(), metadata=rule(omit=()))
    memory_note: str = field(default="", metadata=rule(omit=""))
    # Distributed regions: communication kernels' time beside compute (device backends),
    # the rank these figures are from and every rank's summary (measure/distributed.py).
    comm: CommTime | None = field(default=None, metadata=rule(omit=None))
    rank: int | None = field(default=None, metadata=rule(omit=None))
    ranks: tuple[RankFigures, ...] = field(default=(), metadata=rule(omit=()))
    # The computation this region is a variant of (neuron_profile(..., variant_of=...)): the
    # fusion view groups by it before names; "" when undeclared.
    variant_of: str = field(default="", metadata=rule(omit=""))

    @property
    def roofline(self) -> Roofline | None:
        if self.work is None:
            return None
        return roofline(
            self.work.flops,
            self.work.bytes_moved,
            self.device_us.median,
            self.peak_flops_per_s,
            self.peak_bytes_per_s,
        )

    @property
    def consistent(self) -> bool:
        return not self.round_variants


@dataclass(frozen=True)
class Record(Coded):
    """A measurement with its verdict: what a worker sends the controller for the report."""

    measurement: Measurement
    budget: str = ""
    status: Status = Status.MEASURED
    violations: tuple[str, ...] = ()
    # Against the stored baseline: "" when not compared; the cell is the report's column.
    baseline: BaselineStatus | Literal[""] = ""
    baseline_cell: str = ""
    baseline_notes: tuple[str, ...] = ()
    # Whether --neuron-profile-update should rewrite the stored entry (False: it still
    # holds, keep it byte for byte).
    rewrite_baseline: bool = True
    # What the gates judged, so that reports render it and judge nothing: the time the
    # baseline gate rests on (host_us or device_us; "" in reports from before it was kept),
    # the tolerance the marker set for the region (None: the session's applied; the time
    # verdict below names the one it used), the baseline's counts and its time verdict.
    gated: str = ""
    tolerance: float | None = None
    baseline_ops: int | None = None
    baseline_kernels: int | None = None
    time_judged: TimeJudged | None = None


Bound = Literal["compute", "memory"]


@dataclass(frozen=True)
class OpWork(Coded):
    """Work of one top-level op name in a region (summed over its calls)."""

    name: str
    calls: int
    flops: int
    bytes_read: int
    bytes_written: int

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written


@dataclass(frozen=True)
class Work(Coded):
    """FLOPs and bytes of one execution of a region (see the module doc for the model)."""

    flops: int
    bytes_read: int
    bytes_written: int
    # aten ops (``aten::foo``) whose FLOPs no rule covers, and compiled graphs whose bytes
    # could not be seen: the totals are lower bounds when this is not empty.
    uncounted: tuple[str, ...] = ()
    per_op: tuple[OpWork, ...] = ()
    # dtype of the op doing most FLOPs (picks the compute peak), "" when no FLOPs.
    dtype: str = ""
    # FLOPs of ops torch's FlopCounterMode does not count (our own rules), by aten op:
    # ``flops - sum(values)`` is what FlopCounterMode reports. Left out of files when empty.
    flops_beyond_torch: dict[str, int] = field(default_factory=dict, metadata=rule(omit={}))

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """FLOP per byte moved (0 when nothing moved)."""
        return intensity(self.flops, self.bytes_moved)


def intensity(flops: float, bytes_moved: float) -> float:
    return flops / bytes_moved if bytes_moved > 0 else 0.0


@dataclass(frozen=True)
class Roofline:
    """Where a region sits under its device's roofline: min(peak_flops, I * peak_bw)."""

    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    attainable_flops_per_s: float
    bound: Bound
    # Achieved over attainable, through the bound that applies (0..1, can exceed 1 when the
    # byte model undercounts or a peak is set too low).
    fraction: float


def roofline(
    flops: float, bytes_moved: float, device_us: float, peak_flops: float, peak_bw: float
) -> Roofline | None:
    """None when there is no time to divide by or nothing was done."""
    if device_us <= 0 or (flops <= 0 and bytes_moved <= 0) or peak_flops <= 0 or peak_bw <= 0:
        return None
    seconds = device_us * 1e-6
    fps, bps = flops / seconds, bytes_moved / seconds
    ai = intensity(flops, bytes_moved)
    if bytes_moved > 0 and ai * peak_bw < peak_flops:
        # Memory bound: achieved/attainable reduces to bytes/s over the bandwidth, which
        # also holds for pure data movement (0 FLOPs).
        return Roofline(fps, bps, ai * peak_bw, "memory", bps / peak_bw)
    return Roofline(fps, bps, peak_flops, "compute", fps / peak_flops)


@dataclass(frozen=True)
class Pair:
    """One region in two reports (``neuronperf compare``), as gate/pairs.py judged it."""

    test_id: str
    region: str
    conditions: frozenset[str]
    ops: tuple[int | None, int | None]
    kernels: tuple[int | None, int | None]
    device: TimeChange | None
    host: TimeChange | None
    gated: str  # the time the verdict rests on: device_us or host_us
    op_diff: str
    sentences: tuple[str, ...]  # why: the gate's failures and notes, the budget's violations
    # The gated time as measured on both sides, with what the references moved.
    judged: TimeJudged | None = None
    # Peak memory in bytes, base and new; None where a side did not profile memory.
    memory: tuple[int | None, int | None] = (None, None)

    @property
    def status(self) -> str:
        return next(c for c in Outcome if c in self.conditions)
