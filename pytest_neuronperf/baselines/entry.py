"""What a baseline keeps of one measurement, and the layout of its file entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..codec import Codec, DecodeError, Rule, rule
from ..model import ROUND_SAMPLES, Figures, Measurement, OpRow
from ..stats import Stats


@dataclass(frozen=True, kw_only=True)
class Entry(Figures):
    """What a baseline keeps of one measurement: its figures (model.Figures) and these."""

    # FLOPs and bytes moved of one execution (roofline.py); None when not counted. Compared
    # exactly, like ops: they are deterministic, so any increase is real.
    flops: int | None = None
    bytes_moved: int | None = None
    # Recording processes whose rounds the samples hold, oldest first, ``rounds`` each
    # (--neuron-profile-pool, see pooled_with). Left out of the file for one process, so
    # that entries from before pooling keep their bytes.
    processes: int = field(default=1, metadata=rule(minimum=1, omit=1))

    @classmethod
    def of(cls, m: Measurement) -> Entry:
        return cls(
            **m.figures(),
            flops=m.work.flops if m.work is not None else None,
            bytes_moved=m.work.bytes_moved if m.work is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return CODEC.encode(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Entry:
        return CODEC.decode(d)

    def pooled_with(self, new: Entry, cap: int) -> Entry | None:
        """This entry's rounds and ``new``'s as one baseline spanning their recording
        processes, keeping the newest ``cap`` processes; None when the two do not measure
        the same thing (counts, work, environment, rounds or the figures kept differ), so
        that ``new`` replaces this one instead.

        Why: a process keeps an offset of its own (docs/gate-quality.md, "Pooling over
        recording processes"), so a baseline from one process is one draw of it, and every
        later verdict moves by as much. The rounds are concatenated, not averaged: the
        median then sits among the processes, and the bootstrap interval of the baseline
        widens by how far they disagree."""
        if (
            self.ops != new.ops
            or self.kernels != new.kernels
            or self.op_counts != new.op_counts
            or self.kernel_counts != new.kernel_counts
            or self.rounds != new.rounds
            or self.environment != new.environment
            or (self.flops, self.bytes_moved) != (new.flops, new.bytes_moved)
            or self.memory != new.memory
            or (self.collectives, self.world_size) != (new.collectives, new.world_size)
            or new.processes != 1
            or cap < 2
        ):
            return None
        keep = min(self.processes, cap - 1)
        merged: dict[str, Stats | None] = {}
        for name in ROUND_SAMPLES:
            old, now = getattr(self, name), getattr(new, name)
            if (old is None) != (now is None):
                return None
            if old is None or now is None:
                merged[name] = None
                continue
            if old.n != self.processes * self.rounds or now.n != new.rounds:
                # Rounds that do not split into processes cannot be dropped oldest first.
                return None
            merged[name] = Stats(old.samples[(self.processes - keep) * self.rounds :] + now.samples)
        return replace(new, processes=keep + 1, **merged)  # type: ignore[arg-type]


def _per_op_out(rows: tuple[OpRow, ...]) -> dict[str, Any]:
    # A mapping by op name, device time to 1 ns: the chart needs no more, a diff shows less.
    return {r.name: {"calls": r.calls, "device_us": round(r.device_us, 3)} for r in rows}


def _per_op_in(raw: Any, where: str) -> tuple[OpRow, ...]:
    if not isinstance(raw, Mapping):
        raise DecodeError(f"{where} must be an object of op name -> {{calls, device_us}}")
    rows = []
    for name, row in raw.items():
        if not isinstance(row, Mapping):
            raise DecodeError(f"{where}[{name!r}] must be an object of calls, device_us")
        # The share is the report's, computed from the current rounds; a file has none.
        rows.append(
            _ROW.decode(
                {"calls": 0, "device_us": 0, **row, "name": name, "share": 0.0},
                f"{where}[{name!r}]",
            )
        )
    return tuple(rows)


_ROW: Codec[OpRow] = Codec(OpRow)
# Entries leave out what was not measured (None), so a file holds only what was.
CODEC: Codec[Entry] = Codec(
    Entry, omit_none=True, rules={"per_op": Rule(encode=_per_op_out, decode=_per_op_in)}
)
