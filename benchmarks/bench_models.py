"""Time verdicts on model-shaped suites: pytest-neuronperf's baseline gate next to
pytest-benchmark's ``--benchmark-compare-fail=median:10%``, on the same model callables, in
the same pytest processes.

The suite: Hugging Face ``transformers`` models built from configs with random weights (no
download): a tiny Llama eager, compiled and as a training step, a tiny GPT-2 and a tiny BERT
compiled; a ResNet-18-shaped convolutional net (BasicBlocks [2, 2, 2, 2] at a quarter of
ResNet-18's width, 64x64 images; torchvision's own wheel does not install beside the CPU
torch this project pins) eager and compiled; an RMSNorm and an MLP of 1,024 rows. Their
calls take one to tens of milliseconds, where the issue-26 suite's took microseconds.

One baseline is recorded and pooled over --record-processes fresh processes (as
``neuronperf record --processes 3`` does), and pytest-benchmark saves its own in the first.
Then every rerun is one fresh pytest process with both plugins on, judged against it:
  (a) A/A: nothing changed                    -> any failure or "improved" is false
  (b) +25%: each call spins for a quarter of its own duration after it returns, in numpy
      vector loops, so the region takes 25% longer at whatever speed the machine runs; no
      op, FLOP or byte torch counts changes, so only the time rule can tell -> should regress
  (c) faster: the unchanged code against a second baseline recorded with (b)'s spin, so
      the region runs 20% faster than its recording        -> must never regress
A rerun's verdict per model comes from the JSON report (the time verdict the gate gave).
--keep DIR keeps the baselines and every rerun's report, for replay_time_rules.py.

    python benchmarks/bench_models.py [--aa 20] [--slow 20] [--fast 5]
                                      [--record-processes 3] [--keep DIR] [--models a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from suite_cmd import pytest_cmd
from tabulate import tabulate

T = TypeVar("T")

WORKLOADS = '''
import os
import time

import numpy
import pytest
import torch
import transformers

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
INJECT = os.environ.get("BENCH_INJECT", "none")
SPIN = 0.25


# numpy's vector loops, not a bare Python loop: after a millisecond of scalar code the
# core powers its wide vector units down, and the next torch op (the reference tick timed
# before each call) ran 4-49% slower, which no slowdown of torch code does.
_A = numpy.ones(2048, dtype=numpy.float32)
_B = numpy.empty_like(_A)


def spun(f):
    """f, taking SPIN more of its own time per call in arithmetic torch's profiler does not
    see: no op, FLOP or byte it counts changes."""

    def slowed(*args):
        start = time.perf_counter()
        out = f(*args)
        end = time.perf_counter() + SPIN * (time.perf_counter() - start)
        while time.perf_counter() < end:
            numpy.multiply(_A, 1.0001, out=_B)
        return out

    return slowed if INJECT == "slow" else f


class Basic(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(cout)
        self.c2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet():
    w, layers, cin = 16, [], 16
    for i, cout in enumerate((w, 2 * w, 4 * w, 8 * w)):
        layers += [Basic(cin, cout, 1 if i == 0 else 2), Basic(cout, cout, 1)]
        cin = cout
    stem = [torch.nn.Conv2d(3, w, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(w),
            torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1)]
    head = [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(cin, 100)]
    return torch.nn.Sequential(*stem, *layers, *head).eval()


def llama():
    c = transformers.LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=344,
                                 num_hidden_layers=2, num_attention_heads=4,
                                 num_key_value_heads=4, max_position_embeddings=256)
    return transformers.LlamaForCausalLM(c)


def gpt2():
    c = transformers.GPT2Config(vocab_size=1000, n_embd=128, n_layer=2, n_head=4,
                                n_positions=256, bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(c).eval()


def bert():
    c = transformers.BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=512,
                                max_position_embeddings=256)
    return transformers.BertModel(c).eval()


def no_grad(model):
    def forward(x):
        with torch.no_grad():
            return model(x)

    return forward


def train_step():
    model = llama().train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)

    def step(ids):
        opt.zero_grad(set_to_none=True)
        model(ids, labels=ids).loss.backward()
        opt.step()

    return step


def rmsnorm(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


MLP = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512))


def built(name):
    torch.manual_seed(0)
    ids = (torch.randint(0, 1000, (1, 64)),)
    if name == "llama_fwd":
        return no_grad(llama().eval()), ids
    if name == "llama_compiled":
        return no_grad(torch.compile(llama().eval())), ids
    if name == "llama_train":
        return train_step(), ids
    if name == "gpt2_compiled":
        return no_grad(torch.compile(gpt2())), ids
    if name == "bert_compiled":
        return no_grad(torch.compile(bert())), ids
    img = (torch.randn(1, 3, 64, 64),)
    if name == "resnet_fwd":
        return no_grad(resnet()), img
    if name == "resnet_compiled":
        return no_grad(torch.compile(resnet())), img
    if name == "rmsnorm":
        return rmsnorm, (torch.randn(1024, 1024), torch.randn(1024))
    return no_grad(MLP), (torch.randn(1024, 512),)


NAMES = os.environ["BENCH_MODELS"].split(",")


@pytest.mark.parametrize("name", NAMES)
def test_ours(neuron_profile, name):
    f, args = built(name)
    neuron_profile(spun(f), *args, name=name)


@pytest.mark.parametrize("name", NAMES)
def test_pb(benchmark, name):
    f, args = built(name)
    benchmark(spun(f), *args)
'''

MODELS = [
    "llama_fwd",
    "llama_compiled",
    "llama_train",
    "gpt2_compiled",
    "bert_compiled",
    "resnet_fwd",
    "resnet_compiled",
    "rmsnorm",
    "mlp",
]

# pytest-benchmark reports a failed comparison at session end, one line per benchmark:
#   test_pb[mlp] (0001_base) - Field 'median' has failed PercentageRegressionCheck: ...
PB_FAILED = re.compile(r"test_pb\[(\w+)\] \(\d+_\w+\) - Field 'median' has failed")


def models_project(directory: Path) -> Path:
    """``directory`` made a pytest project holding this suite."""
    (directory / "test_models.py").write_text(WORKLOADS)
    (directory / "pytest.ini").write_text("[pytest]\n")
    return directory


def measured(
    project: Path, models: str, *args: str, prefix: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """One fresh pytest process measuring ``models`` (test_ours only, pytest-benchmark off)
    with ``args``, its command after ``prefix``: each measurement of its JSON report."""
    report = project / "measured.json"
    env = dict(os.environ, BENCH_MODELS=models, OMP_NUM_THREADS="1")
    cmd = pytest_cmd(
        "--neuron-profile",
        f"--neuron-profile-json={report}",
        *args,
        "-k",
        "test_ours",
        "test_models.py",
        off=("cacheprovider", "xdist", "randomly", "benchmark"),
    )
    proc = subprocess.run([*prefix, *cmd], cwd=project, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"pytest exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    return [r["measurement"] for r in json.loads(report.read_text())["measurements"]]


def alternated(
    processes: int, modes: Sequence[str], one: Callable[[str], dict[str, T]]
) -> dict[tuple[str, str], list[T]]:
    """(model, mode) -> what ``one`` returned for it in each of ``processes`` fresh processes
    per mode, the modes alternating process by process (their order reversed every other
    pair) so that each sees the same machine."""
    seen: dict[tuple[str, str], list[T]] = {}
    for i in range(processes):
        for mode in modes if i % 2 == 0 else list(modes)[::-1]:
            for model, figures in one(mode).items():
                seen.setdefault((model, mode), []).append(figures)
        print(f"process pair {i + 1}/{processes} done", file=sys.stderr)
    return seen


def alternated_in_project(
    processes: int, modes: Sequence[str], one: Callable[[Path, str], dict[str, T]]
) -> dict[tuple[str, str], list[T]]:
    """``alternated`` over fresh processes of this suite, in a project made for the run:
    ``one(project, mode)`` runs one."""
    with tempfile.TemporaryDirectory() as tmp:
        project = models_project(Path(tmp))
        return alternated(processes, modes, lambda mode: one(project, mode))


def spread_cells(host: Sequence[float], tick: Sequence[float]) -> list[str]:
    """Per-process host medians and medians against a tick as table cells: the host range,
    slowest over fastest, and the same against the tick."""
    return [
        f"{min(host):,.0f}-{max(host):,.0f}",
        f"{max(host) / min(host):.2f}",
        f"{max(tick) / min(tick):.2f}",
    ]


def judging_tick(m: dict[str, Any]) -> float:
    """A measurement's median against the tick that judges a model: the millisecond one
    where it was timed, else the memory-bound one."""
    tick: dict[str, Any] = m.get("host_relative_long") or m["host_relative"]
    return float(tick["median"])


def run(project: Path, inject: str, models: list[str], extra: list[str]) -> dict[str, Any]:
    """One pytest process: each model's time verdict from our report, and the models
    pytest-benchmark failed."""
    report = project / "report.json"
    report.unlink(missing_ok=True)
    env = dict(
        os.environ,
        BENCH_INJECT=inject,
        BENCH_MODELS=",".join(models),
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
    )
    cmd = pytest_cmd(
        "--neuron-profile",
        f"--neuron-profile-json={report}",
        f"--benchmark-storage=file://{project / 'pb'}",
        "--benchmark-max-time=0.5",
        *extra,
        off=("cacheprovider", "xdist", "randomly"),
    )
    out = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1) or not report.exists():
        raise SystemExit(f"pytest exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr}")
    verdicts: dict[str, str] = {}
    cells = []
    for row in json.loads(report.read_text())["measurements"]:
        region = row["measurement"]["region"]
        judged = row.get("time_judged") or {}
        verdicts[region] = judged.get("verdict", "")
        cells.append(f"{region} {row.get('baseline_cell', '')}")
    print("  " + ", ".join(cells), file=sys.stderr)
    return {"ours": verdicts, "theirs": set(PB_FAILED.findall(out.stdout + out.stderr))}


def record(project: Path, inject: str, where: str, processes: int, models: list[str]) -> None:
    base = [f"--neuron-profile-dir={where}"]
    pb = ["--benchmark-save=base"] if inject == "none" else ["--benchmark-disable"]
    run(project, inject, models, [*base, "--neuron-profile-update", *pb])
    for _ in range(processes - 1):
        run(project, inject, models, [*base, "--neuron-profile-pool", "--benchmark-disable"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aa", type=int, default=20)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument("--fast", type=int, default=5)
    parser.add_argument("--record-processes", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the baselines and every report here")
    parser.add_argument("--models", default=",".join(MODELS))
    opts = parser.parse_args()
    models = opts.models.split(",")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_models_") as tmp:
        project = Path(tmp)
        (project / "test_models.py").write_text(WORKLOADS)
        (project / "pytest.ini").write_text("[pytest]\n")
        record(project, "none", ".neuronperf", opts.record_processes, models)
        if opts.fast:
            record(project, "slow", ".neuronperf-slow", opts.record_processes, models)
        print(f"recorded after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if opts.keep:
            opts.keep.mkdir(parents=True, exist_ok=True)
            for name in (".neuronperf", ".neuronperf-slow"):
                if (project / name).exists():
                    shutil.copytree(
                        project / name, opts.keep / name.lstrip("."), dirs_exist_ok=True
                    )
        pb = ["--benchmark-compare=0001", "--benchmark-compare-fail=median:10%"]
        rows = []
        for label, inject, where, reruns, extra in (
            ("(a) A/A", "none", ".neuronperf", opts.aa, pb),
            ("(b) +25%", "slow", ".neuronperf", opts.slow, pb),
            ("(c) 20% faster", "none", ".neuronperf-slow", opts.fast, ["--benchmark-disable"]),
        ):
            verdicts: dict[str, Counter[str]] = {m: Counter() for m in models}
            theirs: Counter[str] = Counter()
            for i in range(reruns):
                out = run(project, inject, models, [f"--neuron-profile-dir={where}", *extra])
                if opts.keep:
                    shutil.copy(project / "report.json", opts.keep / f"{label[1]}-{i}.json")
                for model, verdict in out["ours"].items():
                    verdicts[model][verdict] += 1
                theirs.update(out["theirs"])
            for model in models:
                v = verdicts[model]
                rows.append(
                    [
                        label,
                        model,
                        reruns,
                        v["regressed"],
                        v["improved"],
                        v["same"],
                        theirs[model] if label[1] != "c" else "-",
                    ]
                )
            print(f"{label}: done after {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(
        tabulate(
            rows,
            headers=[
                "scenario",
                "model",
                "reruns",
                "regressed",
                "improved",
                "same",
                "pytest-benchmark failed",
            ],
            tablefmt="github",
        )
    )
    print(f"\ntotal {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
