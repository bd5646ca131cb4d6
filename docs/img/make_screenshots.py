"""Remake the README's screenshots from the RMSNorm example (needs chromium and pillow).

    python docs/img/make_screenshots.py

In a temporary git repo: records the example's baselines and JSON report on branch main,
breaks the fusion of ``rmsnorm_fused`` (the hand-written formula in place of
``torch.rms_norm``) on branch pr, runs the example again with the HTML and JSON reports,
compares the two, and charts a history. The history is synthetic: ten copies of main's
real report, one region's timed samples scaled by 1.03 per merge (inside the 10% tolerance
each, +30% over nine merges), and the broken fusion's op count from merge 7 on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import chromium  # noqa: E402  (the tests' browser helper)

RUN = [
    sys.executable,
    "-m",
    "pytest",
    "test_rmsnorm.py",
    "-p",
    "no:cacheprovider",
    "-q",
    "--neuron-profile",
]
FUSED = "    return torch.rms_norm(x, (HIDDEN,), w, EPS)"
BROKEN = "    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w  # fusion lost"


def sh(cwd: Path, *args: str, check: bool = True) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    subprocess.run(list(args), cwd=cwd, check=check, env=env)


def git(cwd: Path, *args: str) -> None:
    sh(cwd, "git", "-c", "user.name=demo", "-c", "user.email=demo@example.com", *args)


def creep(doc: dict[str, Any], broken: dict[str, Any], k: int) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(doc))
    out["git"] = {
        "commit": f"{k + 1:x}{k:x}" * 20,
        "branch": "main",
        "dirty": False,
        "commit_time": f"2026-03-{k + 1:02d}T09:00:00+00:00",
    }
    late = {
        (r["measurement"]["test_id"], r["measurement"]["region"]): r for r in broken["measurements"]
    }
    for i, rec in enumerate(out["measurements"]):
        m = rec["measurement"]
        if k >= 6 and m["region"] == "rmsnorm_fused":
            out["measurements"][i] = late[(m["test_id"], m["region"])]
            continue
        if m["region"] == "rmsnorm_naive":
            for key in ("device_us", "host_us", "host_relative", "host_relative_dispatch"):
                stats = m.get(key)
                if stats:
                    stats["samples"] = [v * 1.03**k for v in stats["samples"]]
                    stats["median"] *= 1.03**k
    return out


def crop(img: Any, box: tuple[float, float, float, float], name: str) -> None:
    left, top, right, bottom = (round(v) for v in box)
    part = img.crop((max(0, left), max(0, top), min(img.width, right), min(img.height, bottom)))
    part = part.convert("P", palette=1, colors=128)  # adaptive: flat colours stay exact enough
    part.save(OUT / name, optimize=True)
    print(f"wrote {OUT / name} ({part.width}x{part.height})")


def section(layout: chromium.Layout, name: str) -> tuple[float, float]:
    """The top and bottom of the section with id ``name``, with a margin."""
    (item,) = [i for i in layout.items if i["id"] == name]
    _, top, _, height = item["box"]
    return top - 10, top + height + 6


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="neuronperf-shots-"))
    shutil.copy(ROOT / "examples" / "test_rmsnorm.py", work)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "test_rmsnorm.py")
    git(work, "commit", "-qm", "RMSNorm example")
    sh(work, *RUN, "--neuron-profile-update", "--neuron-profile-json=base.json")
    source = (work / "test_rmsnorm.py").read_text()
    (work / "test_rmsnorm.py").write_text(source.replace(FUSED, BROKEN))
    git(work, "checkout", "-qb", "pr")
    git(work, "commit", "-qam", "rmsnorm_fused: hand-written formula")
    sh(
        work,
        *RUN,
        "--neuron-profile-json=pr.json",
        "--neuron-profile-html=report.html",
        check=False,
    )
    sh(
        work,
        sys.executable,
        "-m",
        "pytest_neuronperf",
        "compare",
        "base.json",
        "pr.json",
        "--markdown",
        str(OUT / "compare-comment.md"),
    )
    base, broken = (json.loads((work / n).read_text()) for n in ("base.json", "pr.json"))
    (work / "history").mkdir()
    for k in range(10):
        (work / "history" / f"{k}.json").write_text(json.dumps(creep(base, broken, k)))
    sh(work, sys.executable, "-m", "pytest_neuronperf", "history", "history", "-o", "history.html")

    sections = "section#summary, section#table, section#roofline, section#fusion"
    tmp = work / "chromium"
    tmp.mkdir()
    _, placed, img = chromium.look(work / "report.html", tmp, sections)
    crop(img, (0, 0, 1280, section(placed, "table")[1]), "report-summary.png")
    for name in ("roofline", "fusion"):
        top, bottom = section(placed, name)
        crop(img, (0, top, 1280, bottom), f"report-{name}.png")
    _, placed, img = chromium.look(work / "history.html", tmp, "div.card, table")
    cards = [i for i in placed.items if i["cls"] == "card"]
    bottom = max(c["box"][1] + c["box"][3] for c in cards[:4])  # two rows
    crop(img, (0, 0, 1280, bottom + 12), "history.png")
    print(f"work directory: {work}")


if __name__ == "__main__":
    main()
