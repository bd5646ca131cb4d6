"""``python -m pytest_neuronperf`` and the ``neuronperf`` console script."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import compare, export, history, merge, merge_baseline, report
from .record import DEFAULT_PROCESSES, record

EXIT_BAD_INPUT = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neuronperf", description="pytest-neuronperf tools that need no test run"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser(
        "report",
        help="analyse a saved Kineto chrome trace (.json or .json.gz) or a Neuron profile",
        description="Top-level ops, kernels, device time per op and launch gaps of a trace "
        "written by export_chrome_trace, tensorboard_trace_handler or "
        "--neuron-profile-trace-dir (CPU, CUDA or ROCm); or, for a Neuron profile directory "
        "or SystemProfileEvents.parquet, device executions per model and device time.",
    )
    rep.add_argument(
        "trace",
        type=Path,
        help="the trace file, or a folder of one job's rank traces (one row per rank and step)",
    )
    rep.add_argument(
        "--region",
        metavar="NAME",
        help="a record_function region (every occurrence is a round), a measurement of a "
        "trace this plugin wrote, or a glob such as 'ProfilerStep#*'",
    )
    rep.add_argument(
        "--mode",
        choices=("auto", "host", "device"),
        default="auto",
        help="device: cost from device events; host: from CPU op time (auto: device when "
        "the trace has device activity)",
    )
    rep.add_argument("--json", action="store_true", help="print JSON for machines")
    rec = sub.add_parser(
        "record",
        help="record baselines over several pytest processes",
        description="Runs 'pytest --neuron-profile-update ARGS' once, then "
        "'pytest --neuron-profile-pool ARGS' in fresh processes, so that each baseline "
        "entry spans several processes and does not carry one process's speed offset.",
    )
    rec.add_argument(
        "--processes",
        type=int,
        default=DEFAULT_PROCESSES,
        metavar="N",
        help=f"recording processes (default {DEFAULT_PROCESSES}; a pooled entry keeps the "
        "newest 5)",
    )
    rec.add_argument("pytest_args", nargs=argparse.REMAINDER, help="arguments for pytest, after --")
    compare.add_parser(sub)
    history.add_parser(sub)
    export.add_parser(sub)
    merge.add_parser(sub)
    merge_baseline.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "compare":
        return compare.run(args)
    if args.command == "history":
        return history.run(args)
    if args.command == "export":
        return export.run(args)
    if args.command == "merge":
        return merge.run(args)
    if args.command == "merge-baseline":
        return merge_baseline.run(args)
    if args.command == "record":
        if args.processes < 1:
            print(
                f"neuronperf: error: --processes must be >= 1, got {args.processes}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        return record(args.pytest_args, args.processes)
    return report.run(args.trace, region=args.region, mode=args.mode, as_json=args.json)
