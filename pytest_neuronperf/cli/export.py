"""``neuronperf export REPORT.json --format bencher|github-action-benchmark``: a JSON
report's measurements in the format a continuous-benchmarking engine ingests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..escape import terminal
from ..reports import export
from ..reports.json import ReportError, load, write_atomic

EXIT_BAD_INPUT = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="write a --neuron-profile-json report for Bencher or github-action-benchmark",
        description="One benchmark per test and region with the measures device-time-us, "
        "host-time-us (median of the rounds, 25th-75th percentile as the interval), ops, "
        "kernels, and peak memory and collectives where the report has them. bencher: "
        "Bencher Metric Format, for 'bencher run --adapter json'; github-action-benchmark: "
        "the list its customSmallerIsBetter tool reads.",
    )
    p.add_argument("report", type=Path, help="a --neuron-profile-json report")
    p.add_argument("--format", required=True, choices=export.FORMATS, dest="fmt")
    p.add_argument(
        "-o", "--output", type=Path, default=None, help="the file to write (default: stdout)"
    )


def _error(text: str) -> int:
    print(terminal(f"neuronperf export: error: {text}"), file=sys.stderr)
    return EXIT_BAD_INPUT


def run(args: argparse.Namespace) -> int:
    try:
        report = load(args.report)
    except ReportError as exc:
        return _error(str(exc))
    if not report.records:
        return _error(f"{args.report} has no measurements; nothing to export")
    text = export.dumps(export.render(report.records, export.as_format(args.fmt)))
    if args.output is None:
        print(text, end="")
        return 0
    try:
        write_atomic(args.output, text)
    except OSError as exc:
        return _error(f"--output {args.output}: cannot write ({exc.strerror})")
    return 0
