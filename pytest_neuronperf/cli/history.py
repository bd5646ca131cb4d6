"""``neuronperf history REPORT.json... | DIR``: every region across stored JSON reports as
one HTML page of small line charts, in commit order, with the regions that crept flagged."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..escape import terminal
from ..reports.charts import history
from ..reports.json import Report, ReportError, load, write_atomic
from ..settings import defaults
from .tolerance import read_tolerance

EXIT_BAD_INPUT = 2
DEFAULT_OUTPUT = Path("neuronperf-history.html")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "history",
        help="chart regions across many --neuron-profile-json reports",
        description="Device µs, host µs and ops of every region across the given reports "
        "(files, or directories searched for *.json), ordered by the commit time they "
        "record, as one self-contained HTML page.",
    )
    p.add_argument("paths", type=Path, nargs="+", metavar="REPORT.json|DIR")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"the HTML page to write (default {DEFAULT_OUTPUT})",
    )
    p.add_argument(
        "--tolerance",
        default=None,
        metavar="PCT",
        help="a region crept when it slowed by more than this, in per cent, from the first "
        f"report to the last (default {defaults().tolerance * 100:g})",
    )


def _error(text: str) -> int:
    print(terminal(f"neuronperf history: error: {text}"), file=sys.stderr)
    return EXIT_BAD_INPUT


def gather(paths: list[Path]) -> tuple[list[Report], list[Path]]:
    """The reports, and the files a directory held that are no neuronperf report (a CI
    artifact folder holds other JSON too). A named file must be a report."""
    reports: list[Report] = []
    skipped: list[Path] = []
    for path in paths:
        if not path.is_dir():
            reports.append(load(path))
            continue
        for file in sorted(path.rglob("*.json")):
            try:
                reports.append(load(file))
            except ReportError as exc:
                if not exc.not_a_report:
                    raise
                skipped.append(file)
    return reports, skipped


def run(args: argparse.Namespace) -> int:
    try:
        tolerance = read_tolerance(args.tolerance)
    except ValueError as exc:
        return _error(f"--tolerance {args.tolerance!r}: {exc}")
    try:
        reports, skipped = gather(list(args.paths))
    except ReportError as exc:
        return _error(str(exc))
    if skipped:
        print(
            f"neuronperf history: skipped {len(skipped)} JSON file(s) that are not "
            f"neuronperf reports (first: {skipped[0]})",
            file=sys.stderr,
        )
    reports = [r for r in reports if r.records]
    if not reports:
        where = ", ".join(map(str, args.paths))
        return _error(
            f"no report with measurements in {where}; write them with --neuron-profile-json=PATH"
        )
    ordered = history.ordered(reports)
    try:
        write_atomic(args.output, history.render(ordered, tolerance))
    except OSError as exc:
        return _error(f"--output {args.output}: cannot write ({exc.strerror})")
    print(terminal(history.text(ordered, tolerance)))
    print(f"neuronperf history: {len(ordered)} reports -> {args.output}")
    return 0
