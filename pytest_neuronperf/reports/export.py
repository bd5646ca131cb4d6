"""What a run measured, in the formats continuous-benchmarking engines ingest.

- Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/), sent
  with ``bencher run --adapter json``: ``{benchmark: {measure: {value, lower_value,
  upper_value}}}``.
- github-action-benchmark's ``customSmallerIsBetter`` tool: a list of ``{name, unit, value,
  range, extra}`` (``BenchmarkResult`` in its src/extract.ts).

One benchmark per test and region (``BENCHMARK``); the measures (``MEASURES``) are stable
names, documented in docs/reports.md. A record whose test failed is left out: its figures
were not judged and would enter the engine's history as if they were.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..model import Record, Status
from ..stats import quantile

Format = Literal["bencher", "github-action-benchmark"]
FORMATS: tuple[Format, ...] = ("bencher", "github-action-benchmark")

# measure name -> unit. Times: the median of the rounds, the interval their 25th to 75th
# percentile. The memory and collective measures appear where the report holds them.
MEASURES: dict[str, str] = {
    "device-time-us": "us",
    "host-time-us": "us",
    "ops": "ops",
    "kernels": "kernels",
    "peak-memory-bytes": "bytes",
    "retained-memory-bytes": "bytes",
    "collective-calls": "calls",
    "collective-bytes": "bytes",
}


@dataclass(frozen=True)
class Metric:
    measure: str
    value: float
    lower: float | None = None
    upper: float | None = None
    rounds: int = 0


def benchmark_name(test_id: str, region: str) -> str:
    return f"{test_id} [{region}]"


def exported(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.status is not Status.TEST_FAILED]


def metrics(record: Record) -> Iterator[Metric]:
    """The measures of one record, in MEASURES order, those it has."""
    m = record.measurement
    for measure, stats in (("device-time-us", m.device_us), ("host-time-us", m.host_us)):
        if stats.n and math.isfinite(stats.median):
            s = sorted(stats.samples)
            yield Metric(measure, stats.median, quantile(s, 0.25), quantile(s, 0.75), stats.n)
    yield Metric("ops", m.ops)
    yield Metric("kernels", m.kernels)
    yield from optional_metrics(m.to_dict())


def optional_metrics(d: Mapping[str, Any]) -> Iterator[Metric]:
    """Peak memory and collectives (issues 28 and 27), from a measurement's dict when it
    has them: ``memory`` {peak_bytes, retained_bytes, ...} and ``collectives`` as a mapping
    of collective name -> {calls, bytes, ...}."""
    memory = d.get("memory")
    if isinstance(memory, Mapping):
        for key, measure in (
            ("peak_bytes", "peak-memory-bytes"),
            ("retained_bytes", "retained-memory-bytes"),
        ):
            if _number(memory.get(key)):
                yield Metric(measure, int(memory[key]))
    collectives = d.get("collectives")
    if isinstance(collectives, Mapping) and collectives:
        rows = [v for v in collectives.values() if isinstance(v, Mapping)]
        yield Metric("collective-calls", sum(_count(r.get("calls")) for r in rows))
        yield Metric("collective-bytes", sum(_count(r.get("bytes")) for r in rows))


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _count(v: Any) -> int:
    return int(v) if _number(v) else 0


def bencher(records: Sequence[Record]) -> dict[str, dict[str, dict[str, float]]]:
    """Counts stay integers (JSON numbers either way)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in exported(records):
        name = benchmark_name(r.measurement.test_id, r.measurement.region)
        measures = out.setdefault(name, {})
        for metric in metrics(r):
            entry = {"value": metric.value}
            if metric.lower is not None and metric.upper is not None:
                entry |= {"lower_value": metric.lower, "upper_value": metric.upper}
            measures[metric.measure] = entry
    return out


def github_action_benchmark(records: Sequence[Record]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in exported(records):
        name = benchmark_name(r.measurement.test_id, r.measurement.region)
        for metric in metrics(r):
            item: dict[str, Any] = {
                "name": f"{name} {metric.measure}",
                "unit": MEASURES[metric.measure],
                "value": metric.value,
            }
            if metric.lower is not None and metric.upper is not None:
                # The action scales "± x" with the unit (its extractRangeInfo.ts).
                item["range"] = f"± {(metric.upper - metric.lower) / 2:.3f}"
                item["extra"] = (
                    f"median of {metric.rounds} rounds\n"
                    f"25th-75th percentile: {metric.lower:.3f}-{metric.upper:.3f} {item['unit']}"
                )
            out.append(item)
    return out


def as_format(name: str) -> Format:
    for fmt in FORMATS:
        if fmt == name:
            return fmt
    raise ValueError(f"unknown export format {name!r}; choose from {', '.join(FORMATS)}")


def render(records: Sequence[Record], fmt: Format) -> Any:
    return bencher(records) if fmt == "bencher" else github_action_benchmark(records)


def dumps(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
