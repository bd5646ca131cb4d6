"""``neuronperf merge-baseline FILE``: resolve a git conflict in a baseline file by keeping
both sides' entries (HEAD's where both branches recorded one)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..baselines.store import BaselineError, merge_conflict
from ..escape import terminal

EXIT_BAD_INPUT = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge-baseline",
        help="resolve a git conflict in a baseline file, keeping both sides' entries",
        description="Reads both sides of the git conflict markers in a .neuronperf/<kind>.json "
        "file and writes their entries together in its place; where both sides hold an "
        "entry for the same test and region, HEAD's (ours) is kept.",
    )
    p.add_argument("file", type=Path, help="the baseline file with conflict markers")


def run(args: argparse.Namespace) -> int:
    try:
        merged = merge_conflict(args.file)
    except BaselineError as exc:
        print(terminal(f"neuronperf merge-baseline: error: {exc}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    print(
        f"{args.file}: conflict resolved ({merged.damaged.removeprefix('git conflict markers: ')}"
        "); rerun --neuron-profile-update for the entries that differed"
    )
    return 0
