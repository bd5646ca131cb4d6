"""The rounds of a region -> one Measurement, with its per-op table and op-count diffs.

This module's one job is summing up: analysis.py reads each round of a region from the
events; here the rounds become one Measurement (the worst round for counts, statistics
over rounds for times), its per-op table, the rounds whose ops differ, the recompiles seen,
and the op-count diff that failure messages and reports show against a baseline. Pure
functions: no pytest, no torch, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ..model import Measurement, OpRow
from ..stats import Stats, median
from ..words import counted
from .analysis import RoundResult
from .memory import summarize_memory


def summarize(
    rounds: Sequence[RoundResult],
    *,
    test_id: str,
    region: str,
    backend: str,
    device_kind: str,
    host: Sequence[float],
    environment: dict[str, str],
    warmup_rounds: int = 0,
    warmup_us: float = 0.0,
    first_call_us: float = 0.0,
) -> Measurement:
    """The Measurement of a region's rounds, live or from a saved trace."""
    # Budgets see the worst round: a recompile or a data-dependent path in any round
    # counts, and round_variants says which round it was.
    worst = max(rounds, key=lambda r: (len(r.ops), len(r.kernels)))
    gaps = launch_gaps(rounds)
    busy = [r.device_busy_us for r in rounds if r.device_busy_us is not None]
    memory = summarize_memory([r.memory for r in rounds])
    return Measurement(
        test_id=test_id,
        region=region,
        backend=backend,
        device_kind=device_kind,
        ops=len(worst.ops),
        kernels=max(len(r.kernels) for r in rounds),
        op_counts=dict(Counter(worst.ops)),
        kernel_counts=dict(Counter(worst.kernels)),
        device_us=Stats.of([r.device_us for r in rounds]),
        device_busy_us=Stats.of(busy) if busy else None,
        host_us=Stats.of(host),
        per_op=per_op_rows(rounds),
        rounds=len(rounds),
        warmup_rounds=warmup_rounds,
        warmup_us=warmup_us,
        first_call_us=first_call_us,
        round_variants=round_variants(rounds),
        environment=environment,
        graph_breaks=max(r.graph_breaks for r in rounds),
        recompiles=recompiles_seen(rounds),
        launch_gap_us=gaps if gaps.n else None,
        memory=memory[0] if memory else None,
        memory_steps=memory[1] if memory else (),
    )


def recompiles_seen(rounds: Sequence[RoundResult]) -> int:
    """Compilations inside measured rounds, plus extra compiled versions of one frame
    (``Torch-Compiled Region: 2/0`` in one round, ``2/1`` in another)."""
    versions: dict[str, set[str]] = {}
    for r in rounds:
        for name in r.compiled_regions:
            frame, _, version = name.rpartition(":")[2].strip().partition("/")
            versions.setdefault(frame, set()).add(version)
    drift = sum(len(v) - 1 for v in versions.values())
    return sum(r.compiles for r in rounds) + drift


def launch_gaps(rounds: Sequence[RoundResult]) -> Stats:
    """Every kernel's wait between its launch call starting and the kernel starting."""
    return Stats.of([g for r in rounds for g in r.launch_gaps_us])


def per_op_rows(rounds: Sequence[RoundResult]) -> tuple[OpRow, ...]:
    """Per-round figures by op name, costliest first: calls and kernels as the mean over
    rounds, device time as the median over rounds (like the region's own figure). Device
    work launched under no op has rows of its own, with 0 calls."""
    n = max(len(rounds), 1)
    calls: Counter[str] = Counter()
    kernels: Counter[str] = Counter()
    names: dict[str, None] = {}
    for r in rounds:
        calls.update(r.ops)
        kernels.update(r.op_kernels)
        names.update(dict.fromkeys(r.ops))
        names.update(dict.fromkeys(r.op_device_us))
    device = {name: median([r.op_device_us.get(name, 0.0) for r in rounds]) for name in names}
    total = sum(device.values())
    rows = [
        OpRow(
            name=name,
            calls=calls[name] / n,
            device_us=device[name],
            share=(device[name] / total) if total else 0.0,
            kernels=kernels[name] / n,
        )
        for name in names
    ]
    rows.sort(key=lambda r: (-r.device_us, r.name))
    return tuple(rows)


def round_variants(rounds: Sequence[RoundResult]) -> tuple[str, ...]:
    """Describe rounds whose op sequence differs from the most common one."""
    seqs = [tuple(r.ops) for r in rounds]
    if len(set(seqs)) <= 1:
        return ()
    common = Counter(seqs).most_common(1)[0][0]
    out = []
    for i, seq in enumerate(seqs):
        if seq != common:
            diff = op_diff_text(Counter(common), Counter(seq))
            out.append(f"round {i}: {counted(len(seq), 'op')} vs {len(common)} ({diff})")
    return tuple(out)


def op_diff(before: Mapping[str, int], after: Mapping[str, int]) -> list[tuple[str, int]]:
    """(name, change) for every op whose count changed, appeared ones first."""
    names = set(before) | set(after)
    diff = [(n, after.get(n, 0) - before.get(n, 0)) for n in names]
    return sorted((d for d in diff if d[1]), key=lambda d: (-d[1], d[0]))


def op_diff_text(before: Mapping[str, int], after: Mapping[str, int]) -> str:
    parts = [f"{'+' if d > 0 else '-'} {n} ×{abs(d)}" for n, d in op_diff(before, after)]
    return ", ".join(parts) if parts else "same ops, different order"
