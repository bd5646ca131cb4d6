#!/usr/bin/env bash
# Does installing pytest-neuronperf change anything for a suite that only uses
# pytest-benchmark?  Runs pytest-benchmark's OWN test suite (5.2.3 sdist) twice in one
# venv: first without pytest-neuronperf (and without torch), then after
# `pip install torch==2.13.0 -e <this repo>`, and compares the per-test outcomes.
#
# The runs follow pytest-benchmark's tox.ini [testenv] (nocov factor): its deps, its env
# (COLUMNS=80, PYTHONPATH=tests, PYTHONUNBUFFERED=yes, passenv=*), the package installed
# as a wheel (usedevelop=false) and the command `pytest -vv --ignore=src`, run from the
# source tree (its pytest.ini: filterwarnings=error, --doctest-modules, --nbmake, ...).
# Each run gets its own fresh copy of the source tree, so files one run writes
# (.benchmarks/, caches) cannot leak into the other.
#
# Usage: benchmarks/pytest_benchmark_suite.sh
#   PB_SRC   unpacked sdist  (default /tmp/pb/pytest_benchmark-5.2.3; fetched from PyPI if absent)
#   PB_WORK  scratch folder  (default /tmp/pb-suite; venv, tree copies and logs; wiped first)
#   PYTHON   interpreter     (default python3.11)
#   PB_COMPARE_ONLY=1  skip the installs and runs; compare the logs already in PB_WORK
# Prints both summaries and a last line "SAME" or "DIFFERENT"; exit status 0 for SAME, 1
# for DIFFERENT, anything else for a failure of the procedure itself.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PB_VERSION=5.2.3
PB_SRC=${PB_SRC:-/tmp/pb/pytest_benchmark-$PB_VERSION}
PB_WORK=${PB_WORK:-/tmp/pb-suite}
PYTHON=${PYTHON:-python3.11}
PYTEST_VERSION=9.0.3   # latest 9.0.x (tox's pytest90 factor pins 9.0.0)
TORCH_VERSION=2.13.0   # pinned: an unpinned torch pulls a multi-GB CUDA build
VENV=$PB_WORK/venv

# tox.ini [testenv] deps for the py311-pytest90-{nodist,xdist}-nocov envs.
DEPS=(
    "pytest==$PYTEST_VERSION"
    pytest-instafail==0.5.0
    pytest-xdist==3.8.0
    "setuptools>=80"
    aspectlib==2.0.0
    pygal==3.0.5
    pygaljs==1.0.2
    freezegun
    hunter
    setuptools
    elasticsearch==9.1.0
    nbmake
)

log() { printf '\n### %s\n' "$*"; }

# pip, minus this machine's noise about absent local index folders; pip's status kept.
pipq() {
    local rc
    set +e
    "${PIP[@]}" "$@" 2>&1 | grep -v "is ignored: it is neither a file nor a directory"
    rc=${PIPESTATUS[0]}
    set -e
    return "$rc"
}

if [[ ${PB_COMPARE_ONLY:-} != 1 ]]; then

if [[ ! -f $PB_SRC/tox.ini ]]; then
    log "fetching pytest-benchmark $PB_VERSION sdist from PyPI"
    mkdir -p "$(dirname "$PB_SRC")"
    "$PYTHON" -m pip download --no-deps --no-binary :all: -d "$(dirname "$PB_SRC")" \
        "pytest-benchmark==$PB_VERSION"
    tar -xzf "$(dirname "$PB_SRC")/pytest_benchmark-$PB_VERSION.tar.gz" -C "$(dirname "$PB_SRC")"
fi

rm -rf "$PB_WORK"
mkdir -p "$PB_WORK"

log "venv $VENV ($("$PYTHON" --version))"
"$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --quiet)
pipq install --upgrade pip
pipq install "${DEPS[@]}"
# package = wheel, usedevelop = false: build and install a wheel from the sdist tree
# (from a copy, so the build leaves nothing in PB_SRC).
cp -a "$PB_SRC" "$PB_WORK/build-src"
pipq install "$PB_WORK/build-src"
rm -rf "$PB_WORK/build-src"
"$VENV/bin/python" -m pip freeze --all | sort >"$PB_WORK/freeze-without.txt"

# Everything below runs with the venv first on PATH, as under tox: the suite starts
# `pytest` / `pytest-benchmark` subprocesses.
export PATH="$VENV/bin:$PATH" VIRTUAL_ENV=$VENV
export COLUMNS=80 PYTHONUNBUFFERED=yes PYTHONPATH=tests

run_suite() { # name
    local name=$1 tree=$PB_WORK/tree-$1 start end rc
    cp -a "$PB_SRC" "$tree"
    log "run '$name': pytest -vv --ignore=src  (in $tree)"
    "$VENV/bin/python" -c 'import sys, pytest; print("python", sys.version.split()[0], "pytest", pytest.__version__)'
    start=$(date +%s.%N)
    set +e
    (cd "$tree" && pytest -vv --ignore=src) >"$PB_WORK/$name.log" 2>&1
    rc=$?
    set -e
    end=$(date +%s.%N)
    echo "$rc" >"$PB_WORK/$name.rc"
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", e - s }' >"$PB_WORK/$name.wall"
    echo "exit status $rc, wall $(cat "$PB_WORK/$name.wall") s, log $PB_WORK/$name.log"
    grep -E '^(plugins:|rootdir:|configfile:|neuronperf)' "$PB_WORK/$name.log" || true
    tail -n 1 "$PB_WORK/$name.log"
}

run_suite without

log "installing torch==$TORCH_VERSION and pytest-neuronperf (editable, $REPO)"
pipq install "torch==$TORCH_VERSION" -e "$REPO"
"$VENV/bin/python" -m pip freeze --all | sort >"$PB_WORK/freeze-with.txt"
echo "packages added or changed (pip freeze diff):"
diff "$PB_WORK/freeze-without.txt" "$PB_WORK/freeze-with.txt" | sed -n 's/^[<>] /  &/p' || true
# The plugin must really be active in the second run, or the comparison proves nothing.
"$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
eps = [e for e in md.entry_points(group="pytest11") if e.name == "neuronperf"]
assert eps, "pytest11 entry point 'neuronperf' not installed"
print("pytest11 entry point:", eps[0].value, "from", eps[0].dist.name, eps[0].dist.version)
import pytest
assert pytest.__version__ == "9.0.3", f"pytest changed to {pytest.__version__}"
EOF
# ... and seen by a pytest started in the suite's tree (as the suite's pytester runs are).
# In a throwaway copy: pytest-benchmark creates .benchmarks/ wherever pytest starts.
cp -a "$PB_SRC" "$PB_WORK/tree-help"
n=$(cd "$PB_WORK/tree-help" && pytest -p no:cacheprovider --help | grep -c -- '--neuron-profile' || true)
rm -rf "$PB_WORK/tree-help"
echo "pytest --help in the suite's tree lists $n --neuron-profile* options"
[[ $n -gt 0 ]]

run_suite with

fi # PB_COMPARE_ONLY

log "comparison"
set +e
"$VENV/bin/python" - "$PB_WORK" <<'EOF'
"""Per-test outcomes from the -vv progress lines, outcome counts from the final line."""
import re
import sys
from collections import Counter
from pathlib import Path

work = Path(sys.argv[1])
# `nodeid OUTCOME [(reason)]   [ NN%]`; a long skip reason wraps at COLUMNS=80, so the
# percentage may be on the next line. A test may have two lines (e.g. PASSED, then ERROR in
# teardown). The -ra summary lines start with the outcome word and are not matched.
OUTCOMES = "PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR"
LINE = re.compile(rf"^(?!(?:{OUTCOMES}) )(?P<id>\S+?::.*?) (?P<out>{OUTCOMES})(?= |$)")
FINAL = re.compile(r"^=+ (?P<body>.*\d+ \w+.*) in [\d.]+s.*=+$")
# A collection error has no progress line; -ra lists it as "ERROR <path> - ...".
COLLECT_ERR = re.compile(r"^ERROR (?P<id>\S+)(?: - .*)?$")


def parse(name):
    text = (work / f"{name}.log").read_text(errors="replace").splitlines()
    outcomes = {}
    for line in text:
        if m := LINE.match(line):
            outcomes.setdefault(m["id"], []).append(m["out"])
    final = next((m["body"] for line in reversed(text) if (m := FINAL.match(line))), "")
    counts = Counter()
    for part in final.split(", "):
        n, _, what = part.partition(" ")
        if n.isdigit():
            counts[{"error": "errors", "warning": "warnings"}.get(what, what)] += int(n)
    for line in text:
        if (m := COLLECT_ERR.match(line)) and "::" not in m["id"]:
            outcomes.setdefault(m["id"], []).append("ERROR")
    return outcomes, counts, final


KEYS = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors", "warnings")
runs = {n: parse(n) for n in ("without", "with")}
for name, (outcomes, counts, final) in runs.items():
    wall = (work / f"{name}.wall").read_text().strip()
    rc = (work / f"{name}.rc").read_text().strip()
    failing = sorted(i for i, o in outcomes.items() if {"FAILED", "ERROR"} & set(o))
    print(f"--- {name} pytest-neuronperf: exit {rc}, wall {wall} s")
    print("    final line: " + final)
    print("    counts: " + ", ".join(f"{k}={counts.get(k, 0)}" for k in KEYS))
    print(f"    test ids seen: {len(outcomes)}; failing/erroring ({len(failing)}):")
    for i in failing:
        print(f"      {i}  {'/'.join(outcomes[i])}")

(o1, c1, _), (o2, c2, _) = runs["without"], runs["with"]
diffs = []
for k in KEYS:
    if c1.get(k, 0) != c2.get(k, 0):
        diffs.append(f"count {k}: {c1.get(k, 0)} -> {c2.get(k, 0)}")
for i in sorted(set(o1) | set(o2)):
    a, b = o1.get(i, ["(absent)"]), o2.get(i, ["(absent)"])
    if a != b:
        diffs.append(f"{i}: {'/'.join(a)} -> {'/'.join(b)}")
for name, (outcomes, counts, _) in runs.items():
    ran = sum(counts.get(k, 0) for k in ("passed", "failed", "skipped", "xfailed", "xpassed"))
    if not counts or len([i for i in outcomes if "::" in i]) < ran:
        diffs.append(f"the '{name}' log did not parse: {len(outcomes)} ids for {ran} tests")
if diffs:
    print("differences (without -> with):")
    for d in diffs:
        print("  " + d)
    print("DIFFERENT")
    sys.exit(1)
print("per-test outcomes identical for all", len(o1), "test ids")
print("SAME")
EOF
verdict=$?
set -e
exit "$verdict"
