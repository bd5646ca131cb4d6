"""The CI summary: the session table as Markdown, regressions first, each with its op diff.
Written to ``--neuron-profile-markdown`` and appended to ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..escape import md_cell, md_code, md_text
from ..model import BaselineStatus, Record
from ..words import counted
from .change import baseline_text
from .memory import memory_cell
from .status import outcome
from .terminal import device_cell, header_line

PROBLEM_STATUSES = frozenset({"over budget", "regressed"})


def is_problem(r: Record) -> bool:
    return bool(r.violations) or r.status in PROBLEM_STATUSES or r.baseline == "regressed"


def ordered(records: Sequence[Record]) -> list[Record]:
    """Problems first, then the rest, each in run order."""
    return sorted(records, key=lambda r: not is_problem(r))


def _cell(markdown: object) -> str:
    # Escaped Markdown into a table cell: no pipe ends it, no newline ends the table.
    return md_cell(str(markdown))


def verdict(records: Sequence[Record]) -> str:
    """The sentence under the heading: what failed, else what was checked and what was not
    (a measurement with no baseline is not "within baseline")."""
    problems = [r for r in records if is_problem(r)]
    n = len(records)
    if problems:
        return f"**{len(problems)} of {n} measurements failed their budget or baseline.**"
    baseline = Counter(r.baseline for r in records)
    budgeted = sum(1 for r in records if r.budget)
    new = baseline[BaselineStatus.NEW]
    compared = n - baseline[""] - new - baseline[BaselineStatus.NOT_COMPARABLE]
    parts = []
    if budgeted:
        parts.append(f"{_all(budgeted, n)}within budget")
    if compared:
        parts.append(f"{_all(compared, n)}within baseline")
    if new:
        parts.append(f"{_all(new, n)}new (no baseline yet)")
    if baseline[BaselineStatus.NOT_COMPARABLE]:
        parts.append(
            f"{_all(baseline[BaselineStatus.NOT_COMPARABLE], n)}not comparable with the baseline"
        )
    if not parts:
        return f"No failures: {_plural(n)}, none with a budget or a baseline."
    return f"No failures in {_plural(n)}: " + "; ".join(parts) + "."


def _plural(n: int) -> str:
    return counted(n, "measurement")


def _all(k: int, n: int) -> str:
    if n == 1:
        return ""
    return "all " if k == n else f"{k} "


def render(records: Sequence[Record], note: str = "") -> str:
    problems = [r for r in records if is_problem(r)]
    lines = [f"## {md_text(header_line(records, note))}", ""]
    lines += [verdict(records), ""]
    # The memory column only where some region's memory was profiled (reports/memory.py).
    memory = any(r.measurement.memory is not None or r.measurement.memory_note for r in records)
    extra = " peak memory |" if memory else ""
    lines.append(
        "| | test | region | ops | kernels | device µs | host µs |"
        + extra
        + " baseline | budget | status |"
    )
    lines.append("|---|---|---|---:|---:|---:|---:|" + ("---:|" if memory else "") + "---|---|---|")
    for r in ordered(records):
        m = r.measurement
        mark = "❌" if is_problem(r) else "✅"
        ops = f"{m.ops} (varies)" if m.round_variants else str(m.ops)
        cells = [
            mark,
            md_code(m.test_id),
            md_code(m.region),
            ops,
            m.kernels,
            device_cell(m),
            f"{m.host_us.median:,.1f}",
            *([memory_cell(m)] if memory else []),
            md_text(baseline_text(r)) or "-",
            md_text(r.budget) or "-",
            md_text(outcome(r)),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if problems:
        lines += ["", "### What failed", ""]
        for r in problems:
            lines.append(
                f"- {md_code(r.measurement.test_id)} region {md_code(r.measurement.region)}"
            )
            for sentence in (*r.violations, *r.baseline_notes):
                lines.append(f"  - {md_text(sentence)}")
    return "\n".join(lines) + "\n"
