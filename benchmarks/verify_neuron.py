"""One command on a Trainium host: check the Neuron backend against the tutorial.

    python benchmarks/verify_neuron.py [--out neuronperf-verify-neuron] [--rounds 10]

Needs the native TorchNeuron backend (documented pairing: torch 2.14 with torch-neuronx
2.14.3, Neuron SDK 2.33), and for the second source ``pip install 'pytest-neuronperf[neuron]'``
plus ``neuron-explorer`` on PATH (aws-neuronx-tools). It runs the tutorial's RMSNorm naive,
``torch.rms_norm`` and ``torch.compile(backend="neuron")`` through pytest-neuronperf's own
Runner and prints ops, device executions and device µs from both sources (the
``key_averages()`` backfill and the Neuron Runtime trace) beside the tutorial's 6 / 1 / 1
ops and 2,355 / 403 / 376 µs (its shapes, not ours: the µs are for reading, not judged).
PASS/FAIL per step:

1. ``NeuronConfig`` accepts ``correlate_device_time`` (the tutorial's backfill);
2. the plugin's per-op device time equals ``key_averages()``'s, op by op and in total;
3. the Neuron profiler wrote its runtime files (``ntrace.pb``, ``trace_info.pb``, and the
   framework ``trace.json`` that ``export_trace`` places beside them);
4. every measured round holds device executions in the runtime trace;
5. the two sources agree within the stated margin (10%);
6. ops are 6 / 1 / 1.

It writes ``OUT/results.json`` (measurements, both sources per round, the checks, the raw
FunctionEvent fields the backfill arrived in, the files written): attach it, with the
printed log, to a bug report. Exit status 0 when every check passed, 1 when one failed,
2 when the Neuron backend is unavailable here.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch

from pytest_neuronperf.backends import BackendUnavailable, NeuronBackend, select
from pytest_neuronperf.backends.neuron.events import backfill_rounds, key_averages_device_us
from pytest_neuronperf.backends.neuron.sources import MARGIN, agreement
from pytest_neuronperf.measure.runner import Runner
from pytest_neuronperf.model import Measurement, Record, Status
from pytest_neuronperf.reports.detail import measurement_detail
from pytest_neuronperf.reports.terminal import summary_table
from pytest_neuronperf.settings import DEFAULT_NEURON_CONFIG, defaults, parse_neuron_config

HIDDEN = 4096
ROWS = 256
EPS = 1e-6
# Profiling TorchNeuron, Part 1 (Neuron 2.33): ops and Neuron device µs per variant.
TUTORIAL = {
    "rmsnorm_naive": (6, 2355.0),
    "rmsnorm_fused": (1, 403.0),
    "rmsnorm_compiled": (1, 376.0),
}


def rmsnorm_naive(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def rmsnorm_fused(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.rms_norm(x, (HIDDEN,), w, EPS)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def key_averages_check(
    backend: NeuronBackend, fn: Callable[..., Any], *args: Any
) -> tuple[bool, str, dict[str, Any]]:
    """One call profiled alone: the plugin's per-op device time against key_averages()'s
    rows, and the raw fields the backfill arrived in."""
    from torch.profiler import profile, record_function

    with (
        profile(activities=backend.activities(), **backend.profiler_kwargs()) as prof,
        record_function("verify"),
    ):
        fn(*args)
        backend.synchronize()
    fes = list(prof.events())
    [ours] = backfill_rounds(fes, ["verify"])
    averages = prof.key_averages()
    # CPU rows only: a device event named like its op has a row of its own.
    by_name = {str(a.key): a for a in averages if getattr(a.device_type, "name", "") == "CPU"}
    top = Counter(ours.result.ops)
    nested = Counter(fe.name for fe in fes) - top  # names also called below another op
    compared, bad = {}, []
    for name in top:
        if nested[name] or name not in by_name:
            continue
        theirs = float(by_name[name].device_time_total)
        mine = ours.result.op_device_us.get(name, 0.0)
        compared[name] = {"plugin_us": mine, "key_averages_us": theirs}
        if abs(mine - theirs) > 1e-3 + 1e-6 * abs(theirs):
            bad.append(f"{name}: plugin {mine:.3f} µs, key_averages {theirs:.3f} µs")
    total = key_averages_device_us(averages)
    if abs(ours.result.device_us - total) > 1e-3 + 1e-6 * abs(total):
        bad.append(f"total: plugin {ours.result.device_us:.3f} µs, key_averages {total:.3f} µs")
    ok = bool(compared) and not bad and total > 0
    detail = "; ".join(bad) or (
        f"{len(compared)} ops equal, total {total:,.1f} µs" if total > 0 else "no device time"
    )
    raw = {
        "events_by_device_type": dict(
            Counter(getattr(fe.device_type, "name", str(fe.device_type)) for fe in fes)
        ),
        "linked_events": sum(1 for fe in fes if int(fe.linked_correlation_id or 0) > 0),
        "ops": [
            {
                "name": o.name,
                "device_time_total": o.total_us,
                "self_device_time_total": o.self_us,
                "linked_us": o.linked_us,
                "source": o.source,
                "kernels": list(o.kernels),
            }
            for o in ours.ops
        ],
        "compared": compared,
        "key_averages_device_us": total,
        "key_averages_table": averages.table(sort_by="self_cpu_time_total", row_limit=25),
    }
    return ok, detail, raw


def run(out: Path, rounds: int, warmup: int, neuron_config: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"platform": platform.platform(), "torch": str(torch.__version__)}
    settings = replace(
        defaults(), backend="neuron", neuron_config=parse_neuron_config(neuron_config)
    )
    try:
        chosen, _ = select("neuron", settings)
    except BackendUnavailable as exc:
        print(f"verify_neuron: FAIL: {exc}", file=sys.stderr)
        result["error"] = str(exc)
        (out / "results.json").write_text(json.dumps(result, indent=2, sort_keys=True))
        return 2
    assert isinstance(chosen, NeuronBackend)
    backend = chosen
    runner = Runner(backend, trace_dir=out / "traces", count_work=False)
    torch.manual_seed(0)
    x = torch.randn(ROWS, HIDDEN).to("neuron")
    w = torch.randn(HIDDEN).to("neuron")
    cases: list[tuple[str, Callable[..., Any]]] = [
        ("rmsnorm_naive", rmsnorm_naive),
        ("rmsnorm_fused", rmsnorm_fused),
        ("rmsnorm_compiled", torch.compile(rmsnorm_naive, backend="neuron")),
    ]
    checks: list[Check] = []
    errors: dict[str, str] = {}
    measurements: dict[str, Measurement] = {}
    sources: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    for name, fn in cases:
        try:
            _, m = runner.measure_callable(
                fn, (x, w), {}, test_id="verify", name=name, warmup=warmup, rounds=rounds
            )
            measurements[name] = m
            [combined] = backend.last
            sources[name] = {
                "source": combined.source,
                "rounds": [asdict(r) for r in combined.per_round],
            }
        except Exception:  # a hardware check reports every failure, then goes on
            errors[name] = traceback.format_exc()
            checks.append(Check(f"{name} measured", False, errors[name].splitlines()[-1]))
        try:
            ok, detail, raw[name] = key_averages_check(backend, fn, x, w)
            checks.append(Check(f"{name}: plugin per-op device time == key_averages()", ok, detail))
        except Exception:
            errors[f"{name} key_averages"] = traceback.format_exc()
    built = backend.built
    checks.insert(
        0,
        Check(
            "NeuronConfig accepts correlate_device_time",
            built is not None and built.backfill,
            f"passed {', '.join(built.passed)}; refused {', '.join(built.refused) or 'nothing'}"
            if built is not None
            else "no NeuronConfig was built",
        ),
    )
    files = _profile_files(backend.profile_dir)
    names = {Path(f).name for f in files}
    wanted = ("ntrace.pb", "trace_info.pb", "trace.json")
    checks.append(
        Check(
            "runtime files written",
            all(n in names for n in wanted),
            f"{len(files)} files; missing {[n for n in wanted if n not in names] or 'none'}",
        )
    )
    for name, m in measurements.items():
        per_round = sources[name]["rounds"]
        execs = [r["executions"] for r in per_round]
        checks.append(
            Check(
                f"{name}: executions in every round",
                bool(execs) and all(e is not None and e > 0 for e in execs),
                f"{execs} ({backend.runtime_plan.reason if backend.runtime_plan else '?'})",
            )
        )
        bf = _median([r["backfill_us"] for r in per_round])
        rt = _median([r["runtime_us"] for r in per_round if r["runtime_us"] is not None])
        ok, gap = agreement(bf, rt) if bf > 0 and rt > 0 else (False, 1.0)
        checks.append(
            Check(
                f"{name}: backfill and runtime trace within {MARGIN:.0%}",
                ok,
                f"backfill {bf:,.1f} µs, runtime {rt:,.1f} µs, gap {gap:.1%}",
            )
        )
        want_ops = TUTORIAL[name][0]
        checks.append(Check(f"{name}: ops", m.ops == want_ops, f"{m.ops} (tutorial {want_ops})"))
    _print_table(measurements, sources)
    for m in measurements.values():
        print()
        print(measurement_detail(m))
    if "rmsnorm_naive" in raw:
        print("\nkey_averages() of one naive call:\n" + raw["rmsnorm_naive"]["key_averages_table"])
    print()
    for c in checks:
        print(f"[{'PASS' if c.ok else 'FAIL'}] {c.name}: {c.detail}")
    for name, tb in errors.items():
        print(f"\nerror in {name}:\n{tb}")
    result.update(
        environment=runner.environment,
        measurements={k: m.to_dict() for k, m in measurements.items()},
        sources=sources,
        raw_profile=raw,
        checks=[asdict(c) for c in checks],
        errors=errors,
        profile_dir=str(backend.profile_dir),
        profile_files=files[:400],
        tutorial={k: {"ops": v[0], "device_us": v[1]} for k, v in TUTORIAL.items()},
    )
    (out / "results.json").write_text(json.dumps(result, indent=2, sort_keys=True, default=str))
    print(f"\nresults: {out / 'results.json'}; Neuron profiles: {backend.profile_dir}")
    return 0 if checks and all(c.ok for c in checks) and not errors else 1


def _median(values: list[float]) -> float:
    from statistics import median

    return median(values) if values else 0.0


def _profile_files(root: Path | None) -> list[str]:
    if root is None:
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _print_table(measurements: dict[str, Measurement], sources: dict[str, Any]) -> None:
    records = [Record(m, status=Status.MEASURED) for m in measurements.values()]
    if records:
        print(summary_table(records))
    print(
        f"\n{'case':<18} {'ops':>4} {'tutorial':>8} {'executions':>10} {'backfill µs':>12} "
        f"{'runtime µs':>11} {'tutorial µs':>11}  source"
    )
    for name, m in measurements.items():
        rounds = sources[name]["rounds"]
        execs = _median([r["executions"] or 0 for r in rounds])
        bf = _median([r["backfill_us"] for r in rounds])
        rt = [r["runtime_us"] for r in rounds if r["runtime_us"] is not None]
        rt_text = f"{_median(rt):,.1f}" if rt else "-"
        ops, us = TUTORIAL[name]
        print(
            f"{name:<18} {m.ops:>4} {ops:>8} {execs:>10g} {bf:>12,.1f} {rt_text:>11} "
            f"{us:>11,.0f}  {sources[name]['source']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("neuronperf-verify-neuron"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--neuron-config",
        default="; ".join(f"{k}={v}" for k, v in DEFAULT_NEURON_CONFIG),
        help="NeuronConfig parameters, as --neuron-profile-neuron-config takes them",
    )
    args = parser.parse_args(argv)
    return run(args.out, args.rounds, args.warmup, args.neuron_config)


if __name__ == "__main__":
    sys.exit(main())
