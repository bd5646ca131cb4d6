"""``python -m pytest_neuronperf`` and the ``neuronperf`` console script."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..model import Measurement, Record, Status
from ..reports.terminal import measurement_detail, per_op_table, summary_table
from ..trace.events import TraceError
from ..trace.offline import TraceReport, report_trace
from . import compare, history
from .record import DEFAULT_PROCESSES, record

EXIT_BAD_INPUT = 2
_KERNELS_SHOWN = 12


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
    rep.add_argument("trace", type=Path, help="the trace file")
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
    return parser


def render(report: TraceReport) -> str:
    records = [Record(r.measurement, status=Status.TRACE) for r in report.regions]
    lines = [
        f"neuronperf report: {report.source} ({report.mode} mode, {report.device_kind})",
        summary_table(records),
    ]
    for r in report.regions:
        lines += ["", *_detail(r.measurement)]
    return "\n".join(lines)


def _detail(m: Measurement) -> list[str]:
    # The plugin's detail, with kernel names cut short: demangled CUDA template names run
    # to thousands of characters. --json keeps them whole.
    head, *rest = measurement_detail(m).split("\n")
    lines = [head, per_op_table(m)]
    if m.kernel_counts:
        top = sorted(m.kernel_counts.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("kernels:")
        lines += [f"  {n:>4} × {short_kernel_name(name)}" for name, n in top[:_KERNELS_SHOWN]]
        if len(top) > _KERNELS_SHOWN:
            lines.append(f"  ... {len(top) - _KERNELS_SHOWN} more kernel names (--json lists all)")
    lines += [line for line in rest if line.startswith(("ops varied", "launch gap", "device busy"))]
    return lines


def short_kernel_name(name: str, width: int = 90) -> str:
    text = name.removeprefix("void ")
    return text if len(text) <= width else text[: width - 1] + "…"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "compare":
        return compare.run(args)
    if args.command == "history":
        return history.run(args)
    if args.command == "record":
        if args.processes < 1:
            print(
                f"neuronperf: error: --processes must be >= 1, got {args.processes}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        return record(args.pytest_args, args.processes)
    from ..backends import neuron_offline

    if neuron_offline.is_neuron_input(args.trace):
        return neuron_offline.main(args.trace, as_json=args.json, region=args.region)
    try:
        report = report_trace(args.trace, region=args.region, mode=args.mode)
    except TraceError as exc:
        print(f"neuronperf: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(render(report))
    return 0
