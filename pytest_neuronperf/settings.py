"""Every setting as a command-line option, an ini key and an environment variable, resolved
by one function. Precedence: command line, then environment, then ini, then default; a bad
value is a usage error that names where it came from."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import NeuronPerfError

# Here rather than imported from .backends: that would load every backend module at pytest
# start-up, for runs that never measure.
BACKEND_NAMES = ("auto", "cpu", "cuda", "neuron")


class SettingError(NeuronPerfError, ValueError):
    pass


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("expected true/false (1/0, yes/no, on/off)")


def _int(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ValueError(f"expected an integer >= {minimum}")
    return value


def _positive_int(text: str) -> int:
    return _int(text, 1)


# torch crashes (SIGSEGV) on set_num_threads(100000); no machine runs more threads usefully.
MAX_THREADS = 1024


def _threads(text: str) -> int:
    value = _int(text, 1)
    if value > MAX_THREADS:
        raise ValueError(f"expected an integer between 1 and {MAX_THREADS}")
    return value


def _non_negative_int(text: str) -> int:
    return _int(text, 0)


def _seconds(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("s"))
    except ValueError:
        value = -1.0
    if not 0 <= value <= 600:
        raise ValueError("expected seconds between 0 and 600, such as 1 or 0.5")
    return value


def _one_of(names: tuple[str, ...]) -> Callable[[str], str]:
    """A parser of one of ``names``, in any case."""

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in names:
            raise ValueError(f"expected one of {', '.join(names)}")
        return value

    return parse


_backend = _one_of(BACKEND_NAMES)


# How the heap behaves while a host-timed region is measured (measure/heap.py).
HEAP_MODES = ("fixed", "system")

_heap = _one_of(HEAP_MODES)


def _path(text: str) -> Path | None:
    return Path(text) if text.strip() else None


# The continuous-benchmarking formats a run or a report exports to (reports/export.py).
EXPORT_FORMATS = ("bencher", "github-action-benchmark")


def _export(text: str) -> tuple[str, Path] | None:
    """``FORMAT:PATH``: one of EXPORT_FORMATS, then the file to write."""
    if not text.strip():
        return None
    fmt, sep, path = text.partition(":")
    if not sep or fmt not in EXPORT_FORMATS or not path.strip():
        raise ValueError(f"expected FORMAT:PATH with FORMAT one of {', '.join(EXPORT_FORMATS)}")
    return fmt, Path(path)


def parse_tolerance(value: object) -> float:
    """A tolerance in per cent (``10``, ``"10%"``, ``"2.5%"``) -> a fraction (0.10).

    A bare number below 1 is refused: ``0.1`` reads as "10%" to some and "0.1%" to others,
    and a guessed meaning would make a gate silently ten times stricter or looser."""
    if isinstance(value, bool):
        raise ValueError("expected a percentage such as 10 or '10%'")
    text = str(value).strip()
    has_sign = text.endswith("%")
    try:
        pct = float(text.removesuffix("%").strip())
    except ValueError:
        raise ValueError("expected a percentage such as 10 or '10%'") from None
    if not 0 < pct <= 1000:
        raise ValueError("expected a percentage > 0 and <= 1000")
    if pct < 1 and not has_sign:
        raise ValueError(
            f"ambiguous, the tolerance is in per cent: write {pct * 100:g} for "
            f"{pct * 100:g}%, or '{pct:g}%' if you mean {pct:g}%"
        )
    return pct / 100


# NeuronConfig's documented parameters (Neuron SDK 2.32/2.33) that a user may set; ours
# (profile_output_dir, correlate_device_time) are not theirs (docs/neuron.md).
NEURON_MODES = ("DEVICE", "RUNTIME", "CPU_UTIL", "HOST_MEMORY")
DEFAULT_NEURON_CONFIG: tuple[tuple[str, str], ...] = (("modes", "DEVICE,RUNTIME"),)
_NC_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


def _neuron_value(key: str, value: str) -> str:
    if key == "modes":
        modes = [m.strip().upper() for m in value.split(",") if m.strip()]
        if not modes or any(m not in NEURON_MODES for m in modes):
            raise ValueError(f"modes: expected a comma list of {', '.join(NEURON_MODES)}")
        return ",".join(dict.fromkeys(modes))
    if key == "max_events_per_nc":
        return str(_positive_int(value))
    if key == "capture_enabled_for_nc":
        if not _NC_LIST.match(value.replace(" ", "")):
            raise ValueError("capture_enabled_for_nc: expected cores or ranges, e.g. 0,1,2-5")
        return value.replace(" ", "")
    if key == "precache_node_info":
        return str(_bool(value))
    if key == "neff_cache_dir":
        if not value:
            raise ValueError("neff_cache_dir: expected a directory")
        return value
    raise ValueError(
        f"unknown key {key!r}; NeuronConfig keys: modes, max_events_per_nc, "
        "capture_enabled_for_nc, neff_cache_dir, precache_node_info"
    )


def parse_neuron_config(text: str) -> tuple[tuple[str, str], ...]:
    """``'modes=RUNTIME; max_events_per_nc=2000000'`` -> sorted (key, value) pairs with
    checked values; modes default to the documented DEVICE,RUNTIME."""
    pairs = dict(DEFAULT_NEURON_CONFIG)
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"expected key=value separated by ';', got {part.strip()!r}")
        pairs[key.strip()] = _neuron_value(key.strip(), value.strip())
    return tuple(sorted(pairs.items()))


@dataclass(frozen=True)
class Spec:
    """One setting, declared once: its names, its parser, its default (Settings holds
    only the types), its --help text, and how the README's table shows it."""

    field: str
    cli: str
    ini: str
    env: str
    parse: Callable[[str], Any]
    default: Any
    # What it does, for --help; the default is added from ``default`` (see help).
    about: str
    is_flag: bool = False
    # The README table: the value after ``=`` (``N``), another way to turn it on (``-v``),
    # the default as a person reads it where the value is not that, and a note after it.
    metavar: str = ""
    alias: str = ""
    shown: str = ""
    note: str = ""

    @property
    def help(self) -> str:
        """--help text: what it does and, for a value, its default."""
        about = f"{self.about} (also {self.alias})" if self.alias else self.about
        if self.is_flag:
            return about
        shown = self.default_text(note=False).replace("`", "")
        return f"{about} (default {shown})"

    def default_text(self, *, note: bool = True) -> str:
        if self.shown:
            text = self.shown
        elif isinstance(self.default, bool):
            text = "on" if self.default else "off"
        elif self.default is None:
            text = "none"
        elif isinstance(self.default, str):
            text = f"`{self.default}`"
        else:
            text = f"{self.default:g}"
        return f"{text} ({self.note})" if note and self.note else text


# The one setting read from the ini file only: a table of lines (work/peaks.py).
PEAKS_INI = "neuron_profile_peaks"


SPECS: tuple[Spec, ...] = (
    Spec(
        "enabled",
        "--neuron-profile",
        "neuron_profile",
        "NEURONPERF_PROFILE",
        _bool,
        False,
        "profile every use of the neuron_profile fixture, print the report and compare "
        "baselines (tests with a neuron_budget marker are measured and enforced regardless)",
        is_flag=True,
    ),
    Spec(
        "backend",
        "--neuron-profile-backend",
        "neuron_profile_backend",
        "NEURONPERF_BACKEND",
        _backend,
        "auto",
        "auto|cpu|cuda|neuron; auto picks neuron, then cuda, then cpu",
        metavar="auto|cpu|cuda|neuron",
    ),
    Spec(
        "rounds",
        "--neuron-profile-rounds",
        "neuron_profile_rounds",
        "NEURONPERF_ROUNDS",
        _positive_int,
        10,
        "measured rounds per callable",
        metavar="N",
    ),
    Spec(
        "warmup",
        "--neuron-profile-warmup",
        "neuron_profile_warmup",
        "NEURONPERF_WARMUP",
        _non_negative_int,
        3,
        "unmeasured warm-up calls before the rounds",
        metavar="N",
    ),
    Spec(
        "window",
        "--neuron-profile-window",
        "neuron_profile_window",
        "NEURONPERF_WINDOW",
        _seconds,
        1.0,
        "seconds over which a callable's host time is sampled: one sample per round, each "
        "the median of the calls made in its share of the window; 0 times one call per round",
        metavar="SECONDS",
        note="host time sampled over 1 s; 0: one call per round",
    ),
    Spec(
        "threads",
        "--neuron-profile-threads",
        "neuron_profile_threads",
        "NEURONPERF_THREADS",
        _threads,
        1,
        "intra-op threads torch uses while a host-timed (cpu) region is measured (the "
        "user's setting is restored afterwards); stored with each baseline entry, which is "
        "judged only against measurements at the same count",
        metavar="N",
        note="torch intra-op threads while a CPU region is measured; stored with each entry",
    ),
    Spec(
        "heap",
        "--neuron-profile-heap",
        "neuron_profile_heap",
        "NEURONPERF_HEAP",
        _heap,
        "fixed",
        "fixed: hold glibc's malloc thresholds fixed from the first host-timed (cpu) "
        "measurement on, so that a region's large temporaries stay on the heap in every "
        "process (docs/heap.md); system: leave glibc's moving thresholds",
        metavar="fixed|system",
        note="glibc's malloc thresholds held fixed once a CPU region is measured",
    ),
    Spec(
        "details",
        "--neuron-profile-details",
        "neuron_profile_details",
        "NEURONPERF_DETAILS",
        _bool,
        False,
        "add the per-op breakdown of every measurement to the report",
        is_flag=True,
        alias="-v",
    ),
    Spec(
        "trace_dir",
        "--neuron-profile-trace-dir",
        "neuron_profile_trace_dir",
        "NEURONPERF_TRACE_DIR",
        _path,
        None,
        "write each measurement's Chrome trace (Perfetto, TensorBoard) into this directory",
        metavar="DIR",
    ),
    Spec(
        "profile_dir",
        "--neuron-profile-dir",
        "neuron_profile_dir",
        "NEURONPERF_DIR",
        _path,
        None,
        "directory of the baseline files, one per device kind; a relative path is taken "
        "from the rootdir",
        metavar="DIR",
        shown="`.neuronperf` at the rootdir",
    ),
    Spec(
        "update",
        "--neuron-profile-update",
        "neuron_profile_update",
        "NEURONPERF_UPDATE",
        _bool,
        False,
        "record the baselines of the tests that ran (implies --neuron-profile); entries of "
        "other tests are kept, entries of tests known to be gone are removed",
        is_flag=True,
        note="implies `--neuron-profile`",
    ),
    Spec(
        "pool",
        "--neuron-profile-pool",
        "neuron_profile_pool",
        "NEURONPERF_POOL",
        _bool,
        False,
        "record as --neuron-profile-update does, but add this run's rounds to a stored entry "
        "that measures the same thing, as one more recording process (the newest 5 are "
        "kept): a baseline over several processes does not carry one process's offset; "
        "'python -m pytest_neuronperf record --processes 3 -- ARGS' runs them",
        is_flag=True,
        note="update, adding this run's rounds to the stored entries as one more process",
    ),
    Spec(
        "tolerance",
        "--neuron-profile-tolerance",
        "neuron_profile_tolerance",
        "NEURONPERF_TOLERANCE",
        parse_tolerance,
        0.10,
        "time regression allowed against the baseline, in per cent; a test fails only when "
        "the 95 per cent interval of the slowdown lies wholly above it",
        metavar="10%",
        shown="`10`",
        note="per cent",
    ),
    Spec(
        "recheck",
        "--neuron-profile-recheck",
        "neuron_profile_recheck",
        "NEURONPERF_RECHECK",
        _non_negative_int,
        0,
        "fresh pytest processes a test is run again in when a region's time moved past "
        "the tolerance against the baseline; the region is judged on every process's "
        "rounds pooled, in place of the recording processes' spread (docs/gate-quality.md)",
        metavar="N",
        shown="`0`",
        note="0: judge the one process, held back by the recording processes' spread",
    ),
    Spec(
        "strict",
        "--neuron-profile-strict",
        "neuron_profile_strict",
        "NEURONPERF_STRICT",
        _bool,
        False,
        "fail measurements that have no baseline yet",
        is_flag=True,
    ),
    Spec(
        "budget_strict",
        "--neuron-profile-budget-strict",
        "neuron_profile_budget_strict",
        "NEURONPERF_BUDGET_STRICT",
        _bool,
        False,
        "judge max_device_us and max_host_us on the bare median (over the limit fails) "
        "instead of over it with 95 per cent confidence; regions of fewer than 5 rounds "
        "are then judged too",
        is_flag=True,
    ),
    Spec(
        "compare_host",
        "--neuron-profile-compare-host",
        "neuron_profile_compare_host",
        "NEURONPERF_COMPARE_HOST",
        _bool,
        False,
        "also gate host (wall) time against the baseline, not only device time (on cpu, "
        "where the device is the host, host time is the time gated in any case)",
        is_flag=True,
        note="always on for CPU",
    ),
    Spec(
        "count_work",
        "--neuron-profile-work",
        "neuron_profile_work",
        "NEURONPERF_WORK",
        _bool,
        True,
        "on|off: count FLOPs and bytes in one extra call per measurement (roofline, "
        "max_flops, the exact FLOPs/bytes baseline gate); off leaves time and counts only",
        metavar="on|off",
        note="count FLOPs and bytes",
    ),
    Spec(
        "reference",
        "--neuron-profile-reference",
        "neuron_profile_reference",
        "NEURONPERF_REFERENCE",
        _bool,
        True,
        "on|off: host-timed backends (cpu) time a fixed reference workload before each "
        "round and judge times against the baseline as multiples of it, allowing for a "
        "machine that runs slower or faster now; off compares raw times",
        metavar="on|off",
        note="CPU: judge times against the reference workload",
    ),
    Spec(
        "memory",
        "--neuron-profile-memory",
        "neuron_profile_memory",
        "NEURONPERF_MEMORY",
        _bool,
        False,
        "on|off: profile the memory of every measurement (peak, allocated and retained "
        "bytes) for the report; a memory budget or a baseline entry holding memory turns "
        "it on for its own measurements regardless",
        metavar="on|off",
        note="profiling memory slows the profiled rounds; budgets and baselines turn it on",
    ),
    Spec(
        "json_path",
        "--neuron-profile-json",
        "neuron_profile_json",
        "NEURONPERF_JSON",
        _path,
        None,
        "write every measurement, verdict and the environment as one JSON document "
        "(schema: pytest_neuronperf/reports/schemas/report-1.schema.json)",
        metavar="PATH",
    ),
    Spec(
        "markdown_path",
        "--neuron-profile-markdown",
        "neuron_profile_markdown",
        "NEURONPERF_MARKDOWN",
        _path,
        None,
        "write the report as Markdown, regressions first (also appended to "
        "$GITHUB_STEP_SUMMARY when that is set)",
        metavar="PATH",
        note="also `$GITHUB_STEP_SUMMARY`",
    ),
    Spec(
        "html_path",
        "--neuron-profile-html",
        "neuron_profile_html",
        "NEURONPERF_HTML",
        _path,
        None,
        "write a self-contained HTML report with per-op device-time charts",
        metavar="PATH",
    ),
    Spec(
        "export",
        "--neuron-profile-export",
        "neuron_profile_export",
        "NEURONPERF_EXPORT",
        _export,
        None,
        "write the measurements for a continuous-benchmarking engine: "
        "bencher:PATH (Bencher Metric Format, for bencher run --adapter json) or "
        "github-action-benchmark:PATH (its customSmallerIsBetter tool)",
        metavar="FORMAT:PATH",
    ),
    Spec(
        "neuron_config",
        "--neuron-profile-neuron-config",
        "neuron_profile_neuron_config",
        "NEURONPERF_NEURON_CONFIG",
        parse_neuron_config,
        DEFAULT_NEURON_CONFIG,
        "neuron backend: NeuronConfig parameters, 'key=value' separated by ';', e.g. "
        "'modes=RUNTIME; max_events_per_nc=2000000' (DEVICE mode reserves about 5 GB of HBM "
        "on Trn2); see docs/neuron.md",
        metavar="'K=V; ...'",
        shown="`modes=DEVICE,RUNTIME`",
        note="as documented",
    ),
)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The resolved settings. Types only: each default is its Spec's, so it is written
    once (resolve fills every field; ``defaults()`` is a run with nothing set)."""

    enabled: bool
    backend: str
    rounds: int
    warmup: int
    window: float
    threads: int
    heap: str
    details: bool
    trace_dir: Path | None
    profile_dir: Path | None
    update: bool
    pool: bool
    tolerance: float
    recheck: int
    strict: bool
    budget_strict: bool
    compare_host: bool
    count_work: bool
    reference: bool
    memory: bool
    json_path: Path | None
    markdown_path: Path | None
    html_path: Path | None
    export: tuple[str, Path] | None
    neuron_config: tuple[tuple[str, str], ...]


def defaults() -> Settings:
    return resolve({}, {}, env={})


def resolve(
    cli: Mapping[str, Any],
    ini: Mapping[str, Any],
    env: Mapping[str, str] | None = None,
    ini_source: str = "ini file",
) -> Settings:
    """``cli`` maps field -> value given on the command line (None when not given), ``ini``
    maps ini key -> raw text (None or "" when unset)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for spec in SPECS:
        raw_ini = ini.get(spec.ini)
        if raw_ini is not None and str(raw_ini).strip() != "":
            # Checked even where the command line or environment overrides it: a bad
            # value in a committed file is found now, not when the override goes.
            from_ini = _parse(spec, str(raw_ini), f"{ini_source} key {spec.ini}")
        raw_cli = cli.get(spec.field)
        if raw_cli is not None and raw_cli is not False:
            values[spec.field] = _parse(spec, str(raw_cli) if not spec.is_flag else "1", spec.cli)
            continue
        raw_env = env.get(spec.env)
        if raw_env is not None and raw_env != "":
            values[spec.field] = _parse(spec, raw_env, f"environment variable {spec.env}")
            continue
        if raw_ini is not None and str(raw_ini).strip() != "":
            values[spec.field] = from_ini
            continue
        values[spec.field] = spec.default
    if values.get("pool"):
        values["update"] = True
    if values.get("update"):
        # Recording baselines needs every fixture use measured, as --neuron-profile does.
        values["enabled"] = True
    return Settings(**values)


def _parse(spec: Spec, raw: str, where: str) -> Any:
    try:
        return spec.parse(raw)
    except ValueError as exc:
        raise SettingError(f"{where}={raw!r}: {exc}") from None


def markdown_table() -> str:
    """The README's settings table, rendered from SPECS (tests/unit/test_settings.py
    holds the README to it)."""
    rows = ["| option | ini | env | default |", "|---|---|---|---|"]
    for s in SPECS:
        option = f"`{s.cli}={s.metavar}`" if s.metavar else f"`{s.cli}`"
        if s.alias:
            option += f" (or `{s.alias}`)"
        cells = [option, f"`{s.ini}`", f"`{s.env}`", s.default_text()]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    rows.append(f"| (ini only) | `{PEAKS_INI}` | - | built-in peaks, CPU calibrated |")
    return "\n".join(rows) + "\n"
