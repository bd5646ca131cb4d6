"""The plain data that flows between modules: measurements and their parts.

Everything here is frozen and converts to and from JSON-ready dicts, because measurements
cross process boundaries (xdist workers) and land in files (baselines, reports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

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
        )


@dataclass(frozen=True)
class Record:
    """A measurement with its verdict: what a worker sends the controller for the report."""

    measurement: Measurement
    budget: str = ""
    status: str = "measured"
    violations: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "measurement": self.measurement.to_dict(),
            "budget": self.budget,
            "status": self.status,
            "violations": list(self.violations),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        return cls(
            measurement=Measurement.from_dict(d["measurement"]),
            budget=str(d.get("budget", "")),
            status=str(d.get("status", "measured")),
            violations=tuple(str(v) for v in d.get("violations", [])),
        )
