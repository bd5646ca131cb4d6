"""Check a device backend on real hardware, once: the RMSNorm example under the profiler.

Run on a machine with the device (``verify_cuda.py`` and ``verify_neuron.py`` call this):

    python benchmarks/verify_device.py --backend cuda   [--out DIR] [--rounds 20]

It measures naive / fused (``torch.rms_norm``) / compiled RMSNorm with pytest-neuronperf's
own Runner and backend, saves each measurement's trace, re-reads every trace with the
offline report, cross-checks device time against ``key_averages()``, writes
``DIR/results.json`` (measurements, checks, raw profiler facts) and prints the table.
Exit status: 0 when every check passed, 1 when one failed, 2 when the device is missing.
Send back DIR (traces + results.json): it is what the tests in tests/data need.
"""

from __future__ import annotations

import argparse
import json
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
from pytest_neuronperf.reports.terminal import measurement_detail, summary_table
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
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True  # False: a fact to report back, not a pass/fail criterion


def _device_string(backend: Backend) -> str:
    return {"neuron": "neuron", "cuda": "cuda"}.get(backend.name, "cpu")


def raw_profile_facts(backend: Backend, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
    """What the profiler itself returns for one call: the facts the adapter relies on."""
    from torch.profiler import profile, record_function

    with (
        profile(activities=backend.activities(), **backend.profiler_kwargs()) as prof,
        record_function("verify"),
    ):
        fn(*args)
        backend.synchronize()
    fes = list(prof.events())
    by_device = Counter(getattr(fe.device_type, "name", str(fe.device_type)) for fe in fes)
    device = [fe for fe in fes if getattr(fe.device_type, "name", "") != "CPU"]
    linked = [fe for fe in fes if int(getattr(fe, "linked_correlation_id", 0) or 0) > 0]
    averages = prof.key_averages()
    key_avg_device = sum(float(a.self_device_time_total) for a in averages)
    ours = analyze_markers(backend.collect(prof), ["verify"], backend.mode)[0]
    return {
        "events_by_device_type": dict(by_device),
        "device_event_names": sorted({fe.name for fe in device})[:40],
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


def run(backend_name: str, out: Path, rounds: int, warmup: int) -> int:
    try:
        backend, note = select(backend_name)
    except BackendUnavailable as exc:
        print(f"verify: {exc}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(backend, trace_dir=out / "traces")
    dev = _device_string(backend)
    torch.manual_seed(0)
    x = torch.randn(ROWS, HIDDEN).to(dev)
    w = torch.randn(HIDDEN).to(dev)
    compile_kwargs: dict[str, Any] = {"backend": "neuron"} if backend.name == "neuron" else {}
    cases: list[tuple[str, Callable[..., Any]]] = [
        ("rmsnorm_naive", rmsnorm_naive),
        ("rmsnorm_fused", rmsnorm_fused),
        ("rmsnorm_compiled", torch.compile(rmsnorm_naive, **compile_kwargs)),
    ]
    measurements: dict[str, Measurement] = {}
    checks: list[Check] = []
    errors: dict[str, str] = {}
    for name, fn in cases:
        try:
            _, m = runner.measure_callable(
                fn, (x, w), {}, test_id="verify", name=name, warmup=warmup, rounds=rounds
            )
            measurements[name] = m
        except Exception:  # a hardware check reports every failure, then goes on
            errors[name] = traceback.format_exc()
            checks.append(Check(f"{name} measured", False, errors[name].splitlines()[-1]))
    facts: dict[str, Any] = {}
    try:
        facts = raw_profile_facts(backend, rmsnorm_naive, x, w)
    except Exception:
        errors["raw_profile"] = traceback.format_exc()

    def check(name: str, ok: bool, detail: str, required: bool = True) -> None:
        checks.append(Check(name, bool(ok), detail, required))

    kind = runner.environment["device_kind"]
    check("device kind", kind.startswith(f"{backend.name}:") or kind.startswith("rocm:"), kind)
    if backend.name == "cpu":
        backend.prepare()
    expected_ops = {"rmsnorm_naive": 6, "rmsnorm_fused": 1, "rmsnorm_compiled": 1}
    offline: dict[str, Any] = {}
    for name, m in measurements.items():
        check(f"{name} ops", m.ops == expected_ops[name], f"{m.ops} ops: {m.op_counts}")
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


def main(argv: list[str] | None = None, backend: str | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if backend is None:
        # cpu: a dry run of this script where there is no device (host-mode checks).
        parser.add_argument("--backend", choices=("cuda", "neuron", "cpu"), required=True)
    parser.add_argument("--out", type=Path, default=Path("neuronperf-verify"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    return run(backend or args.backend, args.out, args.rounds, args.warmup)


if __name__ == "__main__":
    sys.exit(main())
