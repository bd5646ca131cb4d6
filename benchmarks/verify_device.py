"""Check a device backend on real hardware, once: the RMSNorm example under the profiler.

Run on a machine with the device (``verify_cuda.py`` and ``verify_neuron.py`` call this):

    python benchmarks/verify_device.py --backend cuda   [--out DIR] [--rounds 20]

It measures naive / fused (``torch.rms_norm``) / compiled RMSNorm with pytest-neuronperf's
own Runner and backend (plus the backend's own cases: verify_cuda.py adds CUDA-graph
replays and a direct Triton launch), saves each measurement's trace, re-reads every trace
with the offline report, cross-checks device time against ``key_averages()``, writes
``DIR/results.json`` (measurements, checks, raw profiler facts) and prints the table.
DIR defaults to ``$OUT`` when set, else ``neuronperf-verify``.
Exit status: 0 when every check passed, 1 when one failed, 2 when the device is missing
(results.json then says why). Send back DIR (traces + results.json): it is what the tests
in tests/data need.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pytest_neuronperf.backends import Backend, BackendUnavailable, select
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement, Record, Status
from pytest_neuronperf.reports.detail import measurement_detail
from pytest_neuronperf.reports.terminal import summary_table
from pytest_neuronperf.trace.analysis import analyze_markers
from pytest_neuronperf.trace.offline import report_trace

HIDDEN = 4096
ROWS = 256
EPS = 1e-6


def rmsnorm_naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def rmsnorm_fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, EPS)


@dataclass
class Case:
    """One measured callable. ``ops``: the dispatches it must show (None: reported only).
    ``kernels``: what the device must run per call, counted independently of our analysis
    once the case has been measured (warm); None: at least one."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    ops: int | None
    kernels: Callable[[], int] | None = None
    # FLOP counting re-runs the call under a TorchDispatchMode, which a CUDA-graph replay or
    # a Triton launch has nothing to show to (and reduce-overhead may recompile under).
    count_work: bool = True


ExtraCases = Callable[[Backend, torch.Tensor, torch.Tensor], list[Case]]


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True  # False: a fact to report back, not a pass/fail criterion


def _device_string(backend: Backend) -> str:
    return {"neuron": "neuron", "cuda": "cuda"}.get(backend.name, "cpu")


def raw_profile(backend: Backend, fn: Callable[..., Any], *args: Any) -> Any:
    """torch's profiler around one call, under a ``verify`` marker."""
    from torch.profiler import profile, record_function

    with (
        profile(activities=backend.activities(), **backend.profiler_kwargs()) as prof,
        record_function("verify"),
    ):
        fn(*args)
        backend.synchronize()
    return prof


def raw_kernel_count(backend: Backend, fn: Callable[..., Any], *args: Any) -> int:
    """Kernels the device ran during one call, as torch's profiler lists them: a plain count
    of its device-side ``kernel`` events, with no attribution to ops or launches."""
    prof = raw_profile(backend, fn, *args)
    return sum(
        1
        for fe in prof.events()
        if getattr(fe.device_type, "name", "") != "CPU"
        and (getattr(fe, "activity_type", None) or "kernel") == "kernel"
        and not fe.name.lower().startswith(("memcpy", "memset"))
    )


def raw_profile_facts(backend: Backend, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """What the profiler itself returns for one call: the facts the adapter relies on."""
    prof = raw_profile(backend, fn, *args)
    fes = list(prof.events())
    by_device = Counter(getattr(fe.device_type, "name", str(fe.device_type)) for fe in fes)
    device = [fe for fe in fes if getattr(fe.device_type, "name", "") != "CPU"]
    linked = [fe for fe in fes if int(getattr(fe, "linked_correlation_id", 0) or 0) > 0]
    annotations = {fe.name for fe in fes if getattr(fe, "is_user_annotation", False)}
    averages = prof.key_averages()
    # As torch's table totals "Self CUDA": device-side rows only (CPU rows repeat their
    # kernels' time), less the GPU timeline's copies of record_function spans.
    key_avg_device = sum(
        float(a.self_device_time_total)
        for a in averages
        if getattr(a.device_type, "name", "CPU") != "CPU" and a.key not in annotations
    )
    ours = analyze_markers(backend.collect(prof), ["verify"], backend.mode)[0]
    return {
        "events_by_device_type": dict(by_device),
        "device_event_names": sorted({fe.name for fe in device})[:40],
        "device_activity_types": dict(
            Counter(str(getattr(fe, "activity_type", None)) for fe in device)
        ),
        "linked_events": len(linked),
        "linked_cpu_event_names": sorted(
            {fe.name for fe in linked if getattr(fe.device_type, "name", "") == "CPU"}
        )[:40],
        "key_averages_self_device_us": key_avg_device,
        "ours_device_us": ours.device_us,
        "ours_ops": ours.ops,
        "ours_kernels": ours.kernels,
        "key_averages_table": averages.table(sort_by="self_cpu_time_total", row_limit=20),
    }


def run(
    backend_name: str, out: Path, rounds: int, warmup: int, extra: ExtraCases | None = None
) -> int:
    try:
        backend, note = select(backend_name)
    except BackendUnavailable as exc:
        print(f"verify: {exc}", file=sys.stderr)
        out.mkdir(parents=True, exist_ok=True)
        missing = {"backend": backend_name, "unavailable": str(exc), "checks": []}
        (out / "results.json").write_text(json.dumps(missing, indent=2, sort_keys=True))
        return 2
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(backend, trace_dir=out / "traces")
    dev = _device_string(backend)
    torch.manual_seed(0)
    x = torch.randn(ROWS, HIDDEN).to(dev)
    w = torch.randn(HIDDEN).to(dev)
    compile_kwargs: dict[str, Any] = {"backend": "neuron"} if backend.name == "neuron" else {}
    cases = [
        Case("rmsnorm_naive", rmsnorm_naive, (x, w), ops=6),
        Case("rmsnorm_fused", rmsnorm_fused, (x, w), ops=1),
        Case("rmsnorm_compiled", torch.compile(rmsnorm_naive, **compile_kwargs), (x, w), ops=1),
    ]
    measurements: dict[str, Measurement] = {}
    checks: list[Check] = []
    errors: dict[str, str] = {}

    def check(name: str, ok: bool, detail: str, required: bool = True) -> None:
        checks.append(Check(name, bool(ok), detail, required))

    if extra is not None:
        try:
            cases += extra(backend, x, w)
        except Exception:  # building a case (a capture, a compile) is a finding too
            errors["extra cases"] = traceback.format_exc()
            check("extra cases built", False, errors["extra cases"].splitlines()[-1])
    by_name = {c.name: c for c in cases}
    for case in cases:
        name = case.name
        runner.count_work = case.count_work
        try:
            _, m = runner.measure_callable(
                case.fn, case.args, {}, test_id="verify", name=name, warmup=warmup, rounds=rounds
            )
            measurements[name] = m
        except Exception:  # a hardware check reports every failure, then goes on
            errors[name] = traceback.format_exc()
            checks.append(Check(f"{name} measured", False, errors[name].splitlines()[-1]))
            continue
        if case.kernels is not None:
            try:
                expected = case.kernels()
            except Exception:
                errors[f"{name} expected kernels"] = traceback.format_exc()
                check(f"{name} kernels = what it holds", False, "could not count them")
                continue
            # Every round, not only the worst: each launched kernel has a launch gap.
            launched = m.launch_gap_us.n if m.launch_gap_us else 0
            check(
                f"{name} kernels = what it holds",
                m.kernels == expected and launched == expected * m.rounds,
                f"{m.kernels} kernels in the worst round, {launched} over {m.rounds} rounds; "
                f"one call runs {expected} (torch's profiler, counted plainly): "
                f"{m.kernel_counts}",
            )
            rows = sum(r.device_us for r in m.per_op)
            check(
                f"{name} per-op rows hold its device time (±5%)",
                abs(rows - m.device_us.median) <= 0.05 * m.device_us.median,
                f"rows {rows:.1f} µs, device {m.device_us.median:.1f} µs: "
                + ", ".join(f"{r.name} {r.device_us:.1f}" for r in m.per_op[:6]),
            )
    facts: dict[str, Any] = {}
    try:
        facts = raw_profile_facts(backend, rmsnorm_naive, x, w)
    except Exception:
        errors["raw_profile"] = traceback.format_exc()

    kind = runner.environment["device_kind"]
    check("device kind", kind.startswith(f"{backend.name}:") or kind.startswith("rocm:"), kind)
    if backend.name == "cpu":
        backend.prepare()
    offline: dict[str, Any] = {}
    for name, m in measurements.items():
        ops = by_name[name].ops
        check(
            f"{name} ops",
            ops is None or m.ops == ops,
            f"{m.ops} ops: {m.op_counts}",
            ops is not None,
        )
        check(f"{name} kernels found", m.kernels >= 1, f"{m.kernels} kernels: {m.kernel_counts}")
        check(f"{name} device time", m.device_us.median > 0, f"{m.device_us.median:.1f} µs")
        check(f"{name} consistent rounds", m.consistent, "; ".join(m.round_variants) or "yes")
        path = runner.trace_paths.get(("verify", name))
        if path is None:
            check(f"{name} trace saved", False, "no trace path")
            continue
        try:
            rep = report_trace(path, region=name)
        except Exception as exc:  # the offline path must read what the live one wrote
            check(f"{name} offline report", False, f"{type(exc).__name__}: {exc}")
            continue
        om = rep.regions[0].measurement
        offline[name] = rep.to_dict()
        check(
            f"{name} offline == live",
            (om.ops, om.kernels, om.op_counts) == (m.ops, m.kernels, m.op_counts),
            f"offline {om.ops} ops / {om.kernels} kernels, live {m.ops} / {m.kernels}",
        )
        gaps = rep.regions[0].launch_gap_us
        check(
            f"{name} launch gaps",
            gaps.n > 0,
            f"{gaps.n} launches, median {gaps.median:.1f} µs" if gaps.n else "none recorded",
            # Whether Neuron records a launch call correlated with each execution is unknown;
            # host mode (the cpu dry run) has no launches.
            required=backend.name == "cuda",
        )
    if "rmsnorm_naive" in measurements and "rmsnorm_compiled" in measurements:
        naive, comp = measurements["rmsnorm_naive"], measurements["rmsnorm_compiled"]
        check(
            "compiled fuses kernels",
            comp.kernels < naive.kernels,
            f"compiled {comp.kernels} vs naive {naive.kernels} kernels",
            # Neuron's eager mode may fuse the naive ops itself (Adaptive Eager Execution).
            required=backend.name != "neuron",
        )
    if facts and backend.mode == "device":
        ka, ours = facts["key_averages_self_device_us"], facts["ours_device_us"]
        check(
            "device time matches key_averages (±5%)",
            ka > 0 and abs(ours - ka) <= 0.05 * ka,
            f"ours {ours:.1f} µs, key_averages self device {ka:.1f} µs",
        )
    records = [Record(m, status=Status.MEASURED) for m in measurements.values()]
    result = {
        "backend": backend.name,
        "selection": note,
        "environment": runner.environment,
        "platform": platform.platform(),
        "measurements": {k: m.to_dict() for k, m in measurements.items()},
        "offline": offline,
        "raw_profile": {k: v for k, v in facts.items() if k != "key_averages_table"},
        "checks": [c.__dict__ for c in checks],
        "errors": errors,
        "traces": {k[1]: str(p) for k, p in runner.trace_paths.items()},
    }
    if isinstance(getattr(backend, "profile_dir", None), Path):
        profile_dir: Path = backend.profile_dir  # type: ignore[attr-defined]
        result["neuron_profile_files"] = sorted(
            str(p.relative_to(profile_dir)) for p in profile_dir.rglob("*") if p.is_file()
        )[:200]
    (out / "results.json").write_text(json.dumps(result, indent=2, sort_keys=True, default=str))
    if records:
        print(summary_table(records))
        for m in measurements.values():
            print()
            print(measurement_detail(m))
    if facts:
        print("\nkey_averages() of one naive call:\n" + facts["key_averages_table"])
    print()
    for c in checks:
        label = ("PASS" if c.ok else "FAIL") if c.required else "INFO"
        print(f"[{label}] {c.name}: {c.detail}")
    for name, tb in errors.items():
        print(f"\nerror in {name}:\n{tb}")
    print(f"\nresults: {out / 'results.json'}; traces: {out / 'traces'}")
    return 0 if checks and all(c.ok for c in checks if c.required) and not errors else 1


def main(
    argv: list[str] | None = None, backend: str | None = None, extra: ExtraCases | None = None
) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if backend is None:
        # cpu: a dry run of this script where there is no device (host-mode checks).
        parser.add_argument("--backend", choices=("cuda", "neuron", "cpu"), required=True)
    default_out = os.environ.get("OUT") or "neuronperf-verify"
    parser.add_argument("--out", type=Path, default=Path(default_out), help="(default: $OUT)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    return run(backend or args.backend, args.out, args.rounds, args.warmup, extra)


if __name__ == "__main__":
    sys.exit(main())
