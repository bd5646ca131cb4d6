"""``neuronperf compare`` for people: a terminal table, and a GitHub-flavoured pull-request
comment whose first line says what regressed, with the rest in a collapsible block."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..escape import md_cell, md_code, md_text, terminal
from ..words import counted
from .diff import CONDITIONS, Row, count_cell, counts, memory_cell, ordered, time_cell
from .fit import wrap
from .json import Report
from .terminal import tabulate

# The comment's last line, so that a workflow can find and edit its earlier comment.
MARKER = "<!-- neuronperf-compare -->"
_NAMED = 3
# What the first line names; "test failed" is pytest's news (--fail-on test-failed).
_BAD = ("regressed", "over budget")
_HEADERS = ["status", "test", "region", "ops", "kernels", "device µs", "host µs", "op diff"]


def _headers(found: Sequence[Row]) -> list[str]:
    """The columns; peak memory before the op diff where either side profiled memory."""
    if not _memory(found):
        return _HEADERS
    return [*_HEADERS[:-1], "peak memory", _HEADERS[-1]]


def _memory(found: Sequence[Row]) -> bool:
    return any(v is not None for r in found for v in r.memory)


def _cells(r: Row, memory: bool = False) -> list[str]:
    cells = [
        r.status,
        r.test_id,
        r.region,
        count_cell(r.ops),
        count_cell(r.kernels),
        time_cell(r.device, r.gated == "device_us", r.judged),
        time_cell(r.host, r.gated == "host_us", r.judged),
        r.op_diff or "-",
    ]
    if memory:
        cells.insert(7, memory_cell(r.memory))
    return cells


def summary(found: Sequence[Row]) -> str:
    """``2 regressed (rmsnorm_fused ×2), 3 same, of 5 regions``: the failing conditions
    name their regions, so the comment's first line says what regressed."""
    c = counts(found)
    parts = []
    for cond in CONDITIONS:
        if cond not in c:
            continue
        text = f"{c[cond]} {cond}"
        if cond in _BAD:
            names = Counter(r.region for r in found if cond in r.conditions)
            shown = [f"{n} ×{k}" if k > 1 else n for n, k in list(names.items())[:_NAMED]]
            text += f" ({', '.join(shown)}{', …' if len(names) > _NAMED else ''})"
        parts.append(text)
    n = len(found)
    return ", ".join(parts) + f" of {counted(n, 'region')}" if parts else "no regions"


def text(found: Sequence[Row], base: Report, new: Report, width: int | None = None) -> str:
    """The table, one line a region, where it fits ``width``; else one block a region, its
    cells one a line under its status, test and region, every line wrapped to ``width``."""
    memory = _memory(found)
    # Escaped before laying out: an escape is wider than the character it shows.
    rows = [[terminal(c) for c in _cells(r, memory)] for r in ordered(found)]
    table = tabulate(rows, headers=_headers(found), tablefmt="simple", disable_numparse=True)
    if width is not None and max(map(len, table.splitlines())) > width:
        table = "\n".join(_block(cells, _headers(found)) for cells in rows)
    lines = [
        f"neuronperf compare: {base.name()} -> {new.name()}",
        summary(found),
        "",
        table,
        _JUDGED,
    ]
    for r in ordered(found):
        if r.status in _BAD and r.sentences:
            lines += ["", f"{r.status}: {r.test_id} [{r.region}]"]
            lines += [f"  {s}" for s in r.sentences]
    if width is not None:
        lines = [w for t in lines for line in t.split("\n") for w in _wrapped(line, width)]
    return "\n".join(lines) + "\n"


def _wrapped(line: str, width: int) -> list[str]:
    # An indented line's continuations sit deeper, under its first word.
    return wrap(terminal(line), width, "    " if line.startswith("  ") else "  ")


# Which of a region's two times is judged, and how its cell says so.
_JUDGED = (
    "(the time judged is host µs on host-timed backends, device µs elsewhere: its cell "
    "ends in that time's verdict, or says why it was not judged)"
)


def _block(cells: list[str], headers: list[str]) -> str:
    """One region as lines: its status, test and region, then each other cell by name."""
    status, test, region, *rest = cells
    named = [
        f"  {h} {c}" if h != "op diff" else f"  {h}: {c}"
        for h, c in zip(headers[3:], rest, strict=True)
    ]
    return "\n".join([f"{status}  {test} [{region}]", *named])


def _md(value: object) -> str:
    # Names as literal text on one line: no markup, mention, link, or pipe ending a cell.
    return md_cell(md_text(str(value)))


def _md_table(found: Sequence[Row]) -> list[str]:
    memory = _memory(found)
    lines = [
        "| | " + " | ".join(_headers(found)[1:]) + " |",
        "|---|---|---|---:|---:|---|---|" + ("---:|" if memory else "") + "---|",
    ]
    for r in found:
        cells = _cells(r, memory)
        mark = "❌" if r.status in _BAD else "✅"
        row = [
            f"{mark} {_md(r.status)}",
            md_cell(md_code(cells[1])),
            md_cell(md_code(cells[2])),
            *map(_md, cells[3:-1]),
            md_cell(md_code(cells[-1])) if r.op_diff else "-",
        ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


# GitHub refuses a comment longer than this many characters.
GITHUB_LIMIT = 65_536


def markdown(found: Sequence[Row], base: Report, new: Report) -> str:
    """The comment, fitted to GitHub's limit: when every region does not fit, as many as
    do, regressions first, and a line saying how many more there are and where to see them."""
    text = _markdown(found, base, new, len(found))
    if len(text) <= GITHUB_LIMIT:
        return text
    fits, over = 0, len(found)  # the largest count of rows shown that fits, by bisection
    while over - fits > 1:
        mid = (fits + over) // 2
        if len(_markdown(found, base, new, mid)) <= GITHUB_LIMIT:
            fits = mid
        else:
            over = mid
    return _markdown(found, base, new, fits)


def _markdown(found: Sequence[Row], base: Report, new: Report, shown: int) -> str:
    bad = [r for r in ordered(found) if r.status in _BAD]
    mark = "❌" if bad else "✅"
    head = summary(found) if bad else "nothing regressed: " + summary(found)
    lines = [f"### {mark} neuronperf: {_md(head)}", ""]
    if bad:
        lines += [*_md_table(bad[:shown]), ""]
    rows = ordered(found)[:shown]
    lines += [
        "<details>",
        f"<summary>All {len(found)} regions: ops, kernels, device and host change, op diff"
        "</summary>",
        "",
        f"Base {md_code(base.name())}, new {md_code(new.name())}. Times: median of the rounds, "
        "base → new; the verdict rests on the time marked regressed, improved or within "
        "noise (bootstrap interval of the ratio of medians against the tolerance, as the "
        "baseline gate judges it).",
        "",
        *_md_table(rows),
    ]
    if shown < len(found):
        lines += [
            "",
            f"**{len(found) - shown} more regions not shown**: a comment holds at most "
            f"{GITHUB_LIMIT:,} characters; `neuronperf compare BASE NEW` prints them all.",
        ]
    why = [r for r in rows if r.sentences]
    if why:
        lines += ["", "**Why**", ""]
        for r in why:
            lines.append(f"- {md_code(r.test_id)} region {md_code(r.region)} ({_md(r.status)})")
            lines += [f"  - {_md(s)}" for s in r.sentences]
    lines += ["", "</details>", "", MARKER]
    return "\n".join(lines) + "\n"
