"""``neuronperf report``: a saved Kineto trace's regions, or a Neuron profile's executions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..escape import terminal
from ..model import Measurement, Record, Status
from ..reports.collectives import collective_lines
from ..reports.detail import measurement_detail, per_op_table
from ..reports.json import offline_document
from ..reports.terminal import summary_table
from ..trace.events import TraceError
from ..trace.footprint import check_fits
from ..trace.offline import ModeChoice, TraceReport, report_trace
from ..trace.ranks import JobReport, report_ranks

if TYPE_CHECKING:
    from ..backends.neuron.offline import NeuronReport

EXIT_BAD_INPUT = 2
_KERNELS_SHOWN = 12


def run(path: Path, *, region: str | None, mode: ModeChoice, as_json: bool) -> int:
    """Prints the report of ``path``, or one error line and returns 2."""
    from ..backends.neuron import offline

    if offline.is_neuron_input(path):
        return _run_neuron(path, as_json=as_json, region=region)
    if path.is_dir():
        return _run_ranks(path, region=region, mode=mode, as_json=as_json)
    try:
        if path.is_file():
            check_fits(path)
        report = report_trace(path, region=region, mode=mode)
    except TraceError as exc:
        print(terminal(f"neuronperf: error: {exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    return _print(report, render(report) if not as_json else None)


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
    shown = ("ops varied", "launch gap", "device busy", "memory")
    lines += [line for line in rest if line.startswith(shown)]
    lines += collective_lines(m)
    return lines


def short_kernel_name(name: str, width: int = 90) -> str:
    text = name.removeprefix("void ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _run_neuron(path: Path, *, as_json: bool, region: str | None) -> int:
    from ..backends.neuron.offline import neuron_report
    from ..backends.neuron.runtime import RuntimeTraceError

    try:
        if region is not None:
            raise RuntimeTraceError(
                f"{path}: --region applies to Kineto traces; a Neuron runtime trace is "
                "reported per model"
            )
        report = neuron_report(path)
    except RuntimeTraceError as exc:
        print(terminal(f"neuronperf: error: {exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    return _print(report, render_neuron(report) if not as_json else None)


def _print(report: TraceReport | NeuronReport, text: str | None) -> int:
    """The report as its text, or as JSON where no text was rendered (--json)."""
    if text is None:
        print(_json(report), end="")
    else:
        print(terminal(text))
    return 0


def _json(report: TraceReport | NeuronReport) -> str:
    """The run report's layout (reports/json.py), which compare and history read. ASCII:
    a name from a trace may hold a lone surrogate, which no terminal encoding takes."""
    doc = offline_document(report.records(), report.source_dict(), report.extras())
    return json.dumps(doc, sort_keys=True, indent=2, allow_nan=False) + "\n"


def render_neuron(report: NeuronReport) -> str:
    lines = [
        f"neuronperf report: {report.source} (Neuron runtime trace: {report.executions:,} "
        f"executions from {report.rows:,} nc_exec_running rows, device "
        f"{report.device_us:,.1f} µs)",
        f"{'model':<40} {'executions':>10} {'device µs':>12} {'median µs':>10}",
    ]
    for m in report.models:
        lines.append(
            f"{m.model[:40]:<40} {m.executions:>10,} {m.device_us:>12,.1f} {m.median_us:>10,.1f}"
        )
    return "\n".join(lines)


def _run_ranks(path: Path, *, region: str | None, mode: ModeChoice, as_json: bool) -> int:
    try:
        if region is not None:
            raise TraceError(
                f"{path}: --region applies to one trace; a folder of rank traces is reported "
                "per rank and step"
            )
        job = report_ranks(path, mode=mode)
    except TraceError as exc:
        print(terminal(f"neuronperf: error: {exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    if as_json:
        print(json.dumps(job.to_dict(), indent=2, sort_keys=True))
    else:
        print(terminal(render_ranks(job)))
    return 0


def render_ranks(job: JobReport) -> str:
    """One row per rank and step; the slowest rank's rows marked."""
    slowest = job.slowest.rank
    modes = sorted({r.mode for r in job.ranks})
    lines = [
        f"neuronperf report: {job.source} ({len(job.ranks)} rank traces, {'/'.join(modes)} mode)",
        f"{'rank':>5}  {'step':<24} {'device µs':>14} {'host µs':>14}",
    ]
    for r in job.ranks:
        flag = "  slowest" if r.rank == slowest else ""
        for s in r.steps:
            lines.append(
                f"{r.rank:>5}  {s.step[:24]:<24} {s.device_us:>14,.1f} {s.host_us:>14,.1f}{flag}"
            )
    lines.append(
        f"slowest rank: {slowest} ({job.time_of(job.slowest):,.1f} {job.judged_by} µs, "
        f"{job.over_median:+.1%} over the others' median)"
    )
    return "\n".join(lines)
