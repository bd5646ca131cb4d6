"""Tables people read: the session report and the per-op breakdown of a failure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Measurement, Record


def tabulate(rows: Sequence[Sequence[object]], **kwargs: Any) -> str:
    # tabulate (and wcwidth under it) costs ~20 ms to import: only pay it when printing.
    from tabulate import tabulate as _tabulate

    return _tabulate(rows, **kwargs)


def _us(v: float) -> str:
    return f"{v:,.1f}"


def device_cell(m: Measurement) -> str:
    cell = _us(m.device_us.median)
    if m.device_us.n > 1:
        cell += f" ±{m.device_us.spread * 100:.0f}%"
    return cell


def header_line(records: Sequence[Record], note: str = "") -> str:
    envs = {tuple(sorted(r.measurement.environment.items())) for r in records}
    parts = []
    for env in sorted(envs):
        d = dict(env)
        backend, kind, torch = (d.get(k, "?") for k in ("backend", "device_kind", "torch"))
        parts.append(f"backend {backend}, device {kind}, torch {torch}")
    line = "neuronperf: " + "; ".join(parts)
    return f"{line} [{note}]" if note else line


def summary_table(records: Sequence[Record]) -> str:
    rows = []
    for r in records:
        m = r.measurement
        ops = f"{m.ops} (varies)" if m.round_variants else str(m.ops)
        rows.append(
            [
                m.test_id,
                m.region,
                m.device_kind,
                ops,
                m.kernels,
                device_cell(m),
                _us(m.host_us.median),
                m.rounds,
                r.budget or "-",
                r.status,
            ]
        )
    return tabulate(
        rows,
        headers=[
            "test",
            "region",
            "device",
            "ops",
            "kernels",
            "device µs",
            "host µs",
            "rounds",
            "budget",
            "status",
        ],
        tablefmt="simple",
        disable_numparse=True,
    )


def per_op_table(m: Measurement) -> str:
    rows = [
        [
            row.name,
            _num(row.calls),
            _num(row.kernels),
            _us(row.device_us),
            f"{row.share * 100:.1f}%",
        ]
        for row in m.per_op
    ]
    if not rows:
        return f"(region {m.region!r} dispatched no ops)"
    return tabulate(
        rows,
        headers=["op", "calls", "kernels", "device µs", "share"],
        tablefmt="simple",
        disable_numparse=True,
    )


def measurement_detail(m: Measurement) -> str:
    lines = [
        f"region {m.region!r} on {m.device_kind}: {m.ops} ops, {m.kernels} kernels, "
        f"device {device_cell(m)} µs, host {_us(m.host_us.median)} µs "
        f"(median of {m.rounds} rounds; warm-up {m.warmup_rounds} calls, "
        f"first call {_us(m.first_call_us)} µs)",
        per_op_table(m),
    ]
    if m.kernel_counts:
        kernels = ", ".join(f"{name} ×{n}" for name, n in sorted(m.kernel_counts.items()))
        lines.append(f"kernels: {kernels}")
    for variant in m.round_variants:
        lines.append(f"ops varied across rounds: {variant}")
    return "\n".join(lines)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.2f}"
