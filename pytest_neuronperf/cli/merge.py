"""``neuronperf merge SHARD... -o OUT``: the JSON reports, or the baseline files, of a
suite split over CI shards, as the one file a single run would have written."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..baselines import store
from ..baselines.merge import MergeError, Shard, merge_baselines
from ..baselines.store import Baselines
from ..escape import terminal
from ..reports import json as report_json
from ..reports.merge import merge_reports

EXIT_BAD_INPUT = 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge",
        help="join CI shards' JSON reports, or their baseline files, into one",
        description="Reports (--neuron-profile-json): one report holding every shard's "
        "measurements; the shards must share schema version, device kind and commit, and "
        "no region may be in two. Baseline files (.neuronperf/<kind>.json after "
        "--neuron-profile-update in each shard): the file one serial update would write; "
        "with --base (the file the shards started from) an entry changed or removed by "
        "one shard wins over the others' unchanged copy. Nothing is written on an error.",
    )
    p.add_argument("shards", type=Path, nargs="+", metavar="SHARD")
    p.add_argument("-o", "--output", type=Path, required=True, help="the merged file")
    p.add_argument(
        "--base",
        type=Path,
        default=None,
        help="baselines only: the file every shard started from (its committed version)",
    )


def _error(text: str) -> int:
    print(terminal(f"neuronperf merge: error: {text}"), file=sys.stderr)
    return EXIT_BAD_INPUT


def _kind_of(path: Path) -> tuple[str, Any]:
    """('report' | 'baselines', parsed document); MergeError for anything else."""
    if path.exists() and not path.is_file():
        raise MergeError(f"{path}: not a regular file; give the shards' report or baseline files")
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise MergeError(f"{path}: no such file") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise MergeError(f"{path}: not a JSON report or baseline file ({exc})") from None
    if isinstance(doc, dict) and doc.get("schema") == report_json.SCHEMA_ID:
        return "report", doc
    if isinstance(doc, dict) and isinstance(doc.get("device_kind"), str) and "entries" in doc:
        return "baselines", doc
    raise MergeError(
        f"{path}: neither a pytest-neuronperf report nor a baseline file; give the shards' "
        "--neuron-profile-json reports or their .neuronperf/<kind>.json files"
    )


def _baselines(path: Path, doc: Any) -> Baselines:
    try:
        return store.parse(path.read_text(encoding="utf-8"), path, str(doc["device_kind"]))
    except (store.BaselineError, OSError, UnicodeDecodeError) as exc:
        raise MergeError(str(exc)) from None


def _merge(args: argparse.Namespace) -> str:
    kinds = [(path, *_kind_of(path)) for path in args.shards]
    what = {k for _, k, _ in kinds}
    if len(what) > 1:
        raise MergeError("the shards mix JSON reports and baseline files; merge each kind apart")
    if what == {"report"}:
        if args.base is not None:
            raise MergeError("--base applies to baseline files, not to reports")
        try:
            reports = [report_json.load(path) for path, _, _ in kinds]
        except report_json.ReportError as exc:
            raise MergeError(str(exc)) from None
        return report_json.dumps(merge_reports(reports))
    shards = [Shard(path, _baselines(path, doc)) for path, _, doc in kinds]
    base = None
    if args.base is not None:
        kind, doc = _kind_of(args.base)
        if kind != "baselines":
            raise MergeError(f"--base {args.base}: a report, not a baseline file")
        base = _baselines(args.base, doc)
    return store.dumps(merge_baselines(shards, args.output, base))


def run(args: argparse.Namespace) -> int:
    try:
        text = _merge(args)
    except MergeError as exc:
        return _error(str(exc))
    try:
        report_json.write_atomic(args.output, text)
    except OSError as exc:
        return _error(f"--output {args.output}: cannot write ({exc.strerror})")
    print(terminal(f"neuronperf merge: {len(args.shards)} shards -> {args.output}"))
    return 0
