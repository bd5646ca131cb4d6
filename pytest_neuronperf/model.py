"""The plain data that flows between modules: measurements and their parts.

Everything here is frozen and converts to and from JSON-ready dicts, because measurements
cross process boundaries (xdist workers) and land in files (baselines, reports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from .stats import Stats


@dataclass(frozen=True)
class OpRow:
    """One top-level op name in a region: calls and device time per round."""

    name: str
    calls: float
    device_us: float
    share: float
    kernels: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls": self.calls,
            "device_us": self.device_us,
            "share": self.share,
            "kernels": self.kernels,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpRow:
        return cls(
            name=str(d["name"]),
            calls=float(d["calls"]),
            device_us=float(d["device_us"]),
            share=float(d["share"]),
            kernels=float(d.get("kernels", 0.0)),
        )


@dataclass(frozen=True)
class Measurement:
    """What one region cost, over its measured rounds."""

    test_id: str
    region: str
    backend: str
    device_kind: str
    ops: int
    kernels: int
    op_counts: dict[str, int]
    kernel_counts: dict[str, int]
    device_us: Stats
    host_us: Stats
    per_op: tuple[OpRow, ...]
    rounds: int
    warmup_rounds: int = 0
    warmup_us: float = 0.0
    first_call_us: float = 0.0
    # Empty when every round dispatched the same ops; otherwise one line per odd round.
    round_variants: tuple[str, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)
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
    # Device backends: each kernel's wait from its launch call to its start on the device.
    launch_gap_us: Stats | None = None
    # Host-timed backends: the reference workload timed right before each round
    # (reference.py), paired with host_us and device_us samples; None when not timed.
    reference_us: Stats | None = None
    device_reference_us: Stats | None = None
    # Per round, the 10th percentile of each timed call over the reference tick right before
    # it (window.py): the steadier figure the cpu gate judges. None without a reference.
    host_relative: Stats | None = None
    # The same against the dispatch-bound reference tick, which tiny regions follow better;
    # the cpu gate calls a regression only when both agree (compare.py).
    dispatch_reference_us: Stats | None = None
    host_relative_dispatch: Stats | None = None
    # Set when the first window's host time regressed against the baseline and a second
    # window was sampled and judged in its place (measure.py); says what the first showed.
    recheck_note: str = ""
    # Sentences about how the host time was taken that a reader should see beside it: calls
    # quantised at the scheduler tick (measure/tick.py).
    host_notes: tuple[str, ...] = ()

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

    @property
    def op_sequence(self) -> Counter[str]:
        return Counter(self.op_counts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_id": self.test_id,
            "region": self.region,
            "backend": self.backend,
            "device_kind": self.device_kind,
            "ops": self.ops,
            "kernels": self.kernels,
            "op_counts": dict(sorted(self.op_counts.items())),
            "kernel_counts": dict(sorted(self.kernel_counts.items())),
            "device_us": self.device_us.to_dict(),
            "host_us": self.host_us.to_dict(),
            "per_op": [row.to_dict() for row in self.per_op],
            "rounds": self.rounds,
            "warmup_rounds": self.warmup_rounds,
            "warmup_us": self.warmup_us,
            "first_call_us": self.first_call_us,
            "round_variants": list(self.round_variants),
            "environment": dict(sorted(self.environment.items())),
            "graph_breaks": self.graph_breaks,
            "recompiles": self.recompiles,
            "compile_notes": list(self.compile_notes),
            "work": self.work.to_dict() if self.work is not None else None,
            "peak_flops_per_s": self.peak_flops_per_s,
            "peak_bytes_per_s": self.peak_bytes_per_s,
            "settle_calls": self.settle_calls,
            "host_calls": self.host_calls,
            "window_s": self.window_s,
            "page_faults": self.page_faults,
            "launch_gap_us": self.launch_gap_us.to_dict() if self.launch_gap_us else None,
            "reference_us": self.reference_us.to_dict() if self.reference_us else None,
            "device_reference_us": (
                self.device_reference_us.to_dict() if self.device_reference_us else None
            ),
            "host_relative": self.host_relative.to_dict() if self.host_relative else None,
            "dispatch_reference_us": (
                self.dispatch_reference_us.to_dict() if self.dispatch_reference_us else None
            ),
            "host_relative_dispatch": (
                self.host_relative_dispatch.to_dict() if self.host_relative_dispatch else None
            ),
            "recheck_note": self.recheck_note,
            "host_notes": list(self.host_notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Measurement:
        return cls(
            test_id=str(d["test_id"]),
            region=str(d["region"]),
            backend=str(d["backend"]),
            device_kind=str(d["device_kind"]),
            ops=int(d["ops"]),
            kernels=int(d["kernels"]),
            op_counts={str(k): int(v) for k, v in d["op_counts"].items()},
            kernel_counts={str(k): int(v) for k, v in d.get("kernel_counts", {}).items()},
            device_us=Stats.from_dict(d["device_us"]),
            host_us=Stats.from_dict(d["host_us"]),
            per_op=tuple(OpRow.from_dict(r) for r in d.get("per_op", [])),
            rounds=int(d["rounds"]),
            warmup_rounds=int(d.get("warmup_rounds", 0)),
            warmup_us=float(d.get("warmup_us", 0.0)),
            first_call_us=float(d.get("first_call_us", 0.0)),
            round_variants=tuple(str(v) for v in d.get("round_variants", [])),
            environment={str(k): str(v) for k, v in d.get("environment", {}).items()},
            graph_breaks=int(d.get("graph_breaks", 0)),
            recompiles=int(d.get("recompiles", 0)),
            compile_notes=tuple(str(v) for v in d.get("compile_notes", [])),
            work=_work(d.get("work")),
            peak_flops_per_s=float(d.get("peak_flops_per_s", 0.0)),
            peak_bytes_per_s=float(d.get("peak_bytes_per_s", 0.0)),
            settle_calls=int(d.get("settle_calls", 0)),
            host_calls=int(d.get("host_calls", 0)),
            window_s=float(d.get("window_s", 0.0)),
            page_faults=None if d.get("page_faults") is None else float(d["page_faults"]),
            launch_gap_us=_stats_or_none(d.get("launch_gap_us")),
            reference_us=_stats_or_none(d.get("reference_us")),
            device_reference_us=_stats_or_none(d.get("device_reference_us")),
            host_relative=_stats_or_none(d.get("host_relative")),
            dispatch_reference_us=_stats_or_none(d.get("dispatch_reference_us")),
            host_relative_dispatch=_stats_or_none(d.get("host_relative_dispatch")),
            recheck_note=str(d.get("recheck_note", "")),
            host_notes=tuple(str(v) for v in d.get("host_notes", [])),
        )


def _stats_or_none(d: dict[str, Any] | None) -> Stats | None:
    return Stats.from_dict(d) if d else None


def _work(d: dict[str, Any] | None) -> Work | None:
    if not d:
        return None
    return Work.from_dict(d)


@dataclass(frozen=True)
class Record:
    """A measurement with its verdict: what a worker sends the controller for the report."""

    measurement: Measurement
    budget: str = ""
    status: str = "measured"
    violations: tuple[str, ...] = ()
    # Against the stored baseline: "" when not compared, else new / same / changed /
    # improved / regressed (see compare.py); the cell is the report's column text.
    baseline: str = ""
    baseline_cell: str = ""
    baseline_notes: tuple[str, ...] = ()
    # Whether --neuron-profile-update should rewrite the stored entry (False: it still
    # holds, keep it byte for byte).
    rewrite_baseline: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "measurement": self.measurement.to_dict(),
            "budget": self.budget,
            "status": self.status,
            "violations": list(self.violations),
            "baseline": self.baseline,
            "baseline_cell": self.baseline_cell,
            "baseline_notes": list(self.baseline_notes),
            "rewrite_baseline": self.rewrite_baseline,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        return cls(
            measurement=Measurement.from_dict(d["measurement"]),
            budget=str(d.get("budget", "")),
            status=str(d.get("status", "measured")),
            violations=tuple(str(v) for v in d.get("violations", [])),
            baseline=str(d.get("baseline", "")),
            baseline_cell=str(d.get("baseline_cell", "")),
            baseline_notes=tuple(str(v) for v in d.get("baseline_notes", [])),
            rewrite_baseline=bool(d.get("rewrite_baseline", True)),
        )


Bound = Literal["compute", "memory"]


@dataclass(frozen=True)
class OpWork:
    """Work of one top-level op name in a region (summed over its calls)."""

    name: str
    calls: int
    flops: int
    bytes_read: int
    bytes_written: int

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls": self.calls,
            "flops": self.flops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpWork:
        return cls(
            name=str(d["name"]),
            calls=int(d.get("calls", 1)),
            flops=int(d.get("flops", 0)),
            bytes_read=int(d.get("bytes_read", 0)),
            bytes_written=int(d.get("bytes_written", 0)),
        )


@dataclass(frozen=True)
class Work:
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

    @property
    def bytes_moved(self) -> int:
        return self.bytes_read + self.bytes_written

    @property
    def intensity(self) -> float:
        """FLOP per byte moved (0 when nothing moved)."""
        return intensity(self.flops, self.bytes_moved)

    def to_dict(self) -> dict[str, Any]:
        return {
            "flops": self.flops,
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
            "uncounted": list(self.uncounted),
            "per_op": [o.to_dict() for o in self.per_op],
            "dtype": self.dtype,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Work:
        return cls(
            flops=int(d["flops"]),
            bytes_read=int(d["bytes_read"]),
            bytes_written=int(d["bytes_written"]),
            uncounted=tuple(str(u) for u in d.get("uncounted", [])),
            per_op=tuple(OpWork.from_dict(o) for o in d.get("per_op", [])),
            dtype=str(d.get("dtype", "")),
        )


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
