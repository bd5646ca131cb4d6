"""The CI summary: the session table as Markdown, regressions first, each with its op diff.
Written to ``--neuron-profile-markdown`` and appended to ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Record
from .terminal import device_cell, header_line

PROBLEM_STATUSES = frozenset({"over budget", "regressed"})


def is_problem(r: Record) -> bool:
    return bool(r.violations) or r.status in PROBLEM_STATUSES or r.baseline == "regressed"


def ordered(records: Sequence[Record]) -> list[Record]:
    """Problems first, then the rest, each in run order."""
    return sorted(records, key=lambda r: not is_problem(r))


def _cell(text: object) -> str:
    # A pipe would end the cell; a newline would end the table.
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(records: Sequence[Record], note: str = "") -> str:
    problems = [r for r in records if is_problem(r)]
    lines = [f"## {_cell(header_line(records, note))}", ""]
    verdict = (
        f"**{len(problems)} of {len(records)} measurements failed their budget or baseline.**"
        if problems
        else f"All {len(records)} measurements within budget and baseline."
    )
    lines += [verdict, ""]
    lines.append(
        "| | test | region | ops | kernels | device µs | host µs | baseline | budget | status |"
    )
    lines.append("|---|---|---|---:|---:|---:|---:|---|---|---|")
    for r in ordered(records):
        m = r.measurement
        mark = "❌" if is_problem(r) else "✅"
        ops = f"{m.ops} (varies)" if m.round_variants else str(m.ops)
        cells = [
            mark,
            f"`{m.test_id}`",
            f"`{m.region}`",
            ops,
            m.kernels,
            device_cell(m),
            f"{m.host_us.median:,.1f}",
            r.baseline_cell or r.baseline or "-",
            r.budget or "-",
            r.status,
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if problems:
        lines += ["", "### What failed", ""]
        for r in problems:
            lines.append(
                f"- `{_cell(r.measurement.test_id)}` region `{_cell(r.measurement.region)}`"
            )
            for sentence in (*r.violations, *r.baseline_notes):
                lines.append(f"  - {_cell(sentence)}")
    return "\n".join(lines) + "\n"
