"""``neuronperf compare BASE.json NEW.json``: two JSON reports region by region (main's
against a pull request's), as a table, a pull-request comment (--markdown) and an exit
status (--fail-on)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..escape import terminal
from ..gate.pairs import rows
from ..reports import diff, diff_render
from ..reports.fit import terminal_width
from ..reports.json import Report, ReportError, load, write_atomic
from ..settings import defaults
from .tolerance import read_tolerance

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two --neuron-profile-json reports region by region",
        description="One row per region: ops, kernels, device and host change and the op "
        "diff of NEW against BASE, judged as the baseline gate judges (counts exactly, "
        "times by the bootstrap interval where both sides have enough rounds).",
    )
    p.add_argument("base", type=Path, help="the report to compare against (e.g. main's)")
    p.add_argument("new", type=Path, help="the report under review (e.g. the pull request's)")
    p.add_argument(
        "--markdown",
        metavar="PATH",
        help="write a GitHub-flavoured comment to PATH ('-': stdout, in place of the table)",
    )
    p.add_argument(
        "--fail-on",
        default="",
        metavar="LIST",
        help="exit 1 when a region is any of these, comma-separated: "
        + ", ".join(diff.FAIL_ON_NAMES)
        + " (default: none, exit 0)",
    )
    p.add_argument(
        "--tolerance",
        default=None,
        metavar="PCT",
        help=f"allowed time regression in per cent (default {defaults().tolerance * 100:g}, or "
        "the tolerance a region's marker set)",
    )


def _error(text: str) -> int:
    print(terminal(f"neuronperf compare: error: {text}"), file=sys.stderr)
    return EXIT_BAD_INPUT


def _same_device(base: Report, new: Report) -> str | None:
    """Why the two cannot be compared, or None."""
    for report in (base, new):
        if not report.records:
            return f"{report.path} has no measurements; nothing to compare"
    if base.device_kinds != new.device_kinds:
        return (
            f"{base.path} was measured on {', '.join(base.device_kinds)}, {new.path} on "
            f"{', '.join(new.device_kinds)}; compare reports from the same kind of device"
        )
    return None


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in str(args.fail_on).split(",") if n.strip()]
    unknown = [n for n in names if n not in diff.FAIL_ON_NAMES]
    if unknown:
        return _error(
            f"--fail-on {','.join(unknown)}: unknown; choose from {', '.join(diff.FAIL_ON_NAMES)}"
        )
    try:
        tolerance = read_tolerance(args.tolerance)
    except ValueError as exc:
        return _error(f"--tolerance {args.tolerance!r}: {exc}")
    try:
        base, new = load(args.base), load(args.new)
    except ReportError as exc:
        return _error(str(exc))
    why = _same_device(base, new)
    if why:
        return _error(why)
    found = rows(base.records, new.records, tolerance, str(base.path))
    if args.markdown != "-":
        # Escaped in there, before it is laid out and wrapped.
        print(diff_render.text(found, base, new, terminal_width()), end="")
    if args.markdown:
        comment = diff_render.markdown(found, base, new)
        if args.markdown == "-":
            print(comment, end="")
        else:
            try:
                write_atomic(Path(args.markdown), comment)
            except OSError as exc:
                return _error(f"--markdown {args.markdown}: cannot write ({exc.strerror})")
    hit = diff.failing(found, [diff.FAIL_ON_NAMES[n] for n in names])
    if hit:
        print(
            f"neuronperf compare: {len(hit)} region(s) {', '.join(names)}: exit {EXIT_FAILED}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0
