"""Text that fits a terminal: tables whose columns drop or merge by priority, long names
elided in the middle, sentences wrapped. As pytest fits its own lines to
``config.get_terminal_writer().fullwidth`` (``COLUMNS``, else the terminal, else 80)."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Sequence
from typing import Any

from ..names import elide, elide_test_id

# tabulate's "simple" format puts two spaces between columns, and makes a column at least
# two wider than its header (its MIN_PADDING).
_SEP = 2
_HEADER_PAD = 2
# Columns that shrink, by eliding their cells, before and after optional columns go:
# header -> (width kept while columns can still be dropped, least width).
_ELASTIC = {
    "test": (40, 16),
    "region": (24, 8),
    "budget": (24, 10),
    "op": (40, 12),
}
# The pseudo-column of drop_first that merges "ops" and "kernels" into one; a later
# "kernels" in drop_first then leaves the ops alone.
MERGE_COUNTS = "ops+kernels"
MERGED = "ops/kernels"


def terminal_width(config: Any = None) -> int:
    """The width pytest writes to: its terminal writer's (``config.get_terminal_writer()``),
    else COLUMNS or the terminal's (no config, or no terminal reporter: ``-p no:terminal``)."""
    try:
        width = config.get_terminal_writer().fullwidth if config is not None else None
    except AssertionError:  # pytest's way of saying there is no terminal reporter
        width = None
    if isinstance(width, int) and width > 0:
        return width
    return shutil.get_terminal_size().columns


def elide_apart(texts: Sequence[str], width: int) -> dict[str, str]:
    """Each test id cut to ``width``, the cases of one test keeping where they differ
    (names.elide_test_id)."""
    ids = list(dict.fromkeys(texts))
    return {t: elide_test_id(t, width, ids) for t in ids}


def wrap(line: str, width: int, indent: str = "  ") -> list[str]:
    """One sentence as lines of at most ``width``, continuation lines indented."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(
        line, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
    ) or [line[:width]]


# pytest's long traceback prints an error's lines after "E       ": its marker and indents.
_ERROR_INDENT = 8


def fit_error(exc: BaseException, width: int) -> None:
    """Our error's message wrapped, in place, to the lines pytest prints it on: each after
    its marker, the first after the error's qualified name too."""
    message = str(exc)
    room = width - _ERROR_INDENT
    name = len(f"{type(exc).__module__}.{type(exc).__qualname__}: ")
    if room < 20 or all(len(line) <= room for line in message.splitlines()):
        return
    first = name if name <= room // 2 else 0
    lines = textwrap.wrap(
        message,
        room,
        initial_indent=" " * first,
        break_long_words=True,
        break_on_hyphens=False,
    )
    # A name that leaves little room starts the message on the next line.
    exc.args = (("" if first else "\n") + "\n".join(lines)[first:],)


def fit_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    drop_first: Sequence[str] = (),
) -> str:
    """A "simple" tabulate table no wider than ``width`` where that can be done: columns
    named in ``drop_first`` go in that order (MERGE_COUNTS merges ops and kernels) while the
    elastic columns (test, region, budget, baseline) would have to shrink below their kept
    width; then those shrink, the one furthest above its kept width first, then each
    towards its least width."""
    columns = {h: [str(row[i]) for row in rows] for i, h in enumerate(headers)}
    for step in drop_first:
        if _needed(columns) <= width:
            break
        if step == MERGE_COUNTS:
            _merge_counts(columns)
        elif step == "kernels" and MERGED in columns:
            ops = [c.rpartition("/")[0] for c in columns[MERGED]]
            placed = _placed(columns, MERGED, "ops", ops)
            columns.clear()
            columns.update(placed)
        else:
            columns.pop(step, None)
    widths = {h: _natural(h, cells) for h, cells in columns.items()}
    elastic = [h for h in columns if h in _ELASTIC]
    room = width - _SEP * (len(columns) - 1) - sum(w for h, w in widths.items() if h not in elastic)
    floor = {h: max(_ELASTIC[h][1], len(h) + _HEADER_PAD) for h in elastic}
    kept = {h: max(_ELASTIC[h][0], floor[h]) for h in elastic}

    def slack(h: str) -> tuple[bool, int]:
        # First down to the kept widths, furthest above first; then towards the floors.
        over = widths[h] - kept[h]
        return (over > 0, over if over > 0 else widths[h] - floor[h])

    while sum(widths[h] for h in elastic) > room:
        shrinkable = [h for h in elastic if widths[h] > floor[h]]
        if not shrinkable:
            break
        widths[max(shrinkable, key=slack)] -= 1
    for h in elastic:
        cut = elide_test_id if h == "test" else elide
        columns[h] = [cut(c, widths[h]) for c in columns[h]]
    from tabulate import tabulate

    table_rows = [list(r) for r in zip(*columns.values(), strict=True)] if rows else []
    return tabulate(table_rows, headers=list(columns), tablefmt="simple", disable_numparse=True)


def _natural(header: str, cells: Sequence[str]) -> int:
    return max([len(header) + _HEADER_PAD, *(len(c) for c in cells)])


def _needed(columns: dict[str, list[str]]) -> int:
    """The width with every elastic column at its kept width (or less, if narrower)."""
    total = _SEP * (len(columns) - 1)
    for h, cells in columns.items():
        natural = _natural(h, cells)
        kept = max(_ELASTIC[h][0], len(h) + _HEADER_PAD) if h in _ELASTIC else natural
        total += min(natural, kept)
    return total


def _merge_counts(columns: dict[str, list[str]]) -> None:
    if "ops" not in columns or "kernels" not in columns:
        return
    merged = [f"{o}/{k}" for o, k in zip(columns["ops"], columns["kernels"], strict=True)]
    del columns["kernels"]
    placed = _placed(columns, "ops", MERGED, merged)
    columns.clear()
    columns.update(placed)


def _placed(
    columns: dict[str, list[str]], where: str, header: str, cells: list[str]
) -> dict[str, list[str]]:
    """``columns`` with ``header`` in the place of ``where`` (or last, if it is gone)."""
    out = {(header if h == where else h): (cells if h == where else c) for h, c in columns.items()}
    out.setdefault(header, cells)
    return out
