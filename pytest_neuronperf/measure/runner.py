"""Run code under the profiler and turn what it recorded into a Measurement.

All rounds of a callable run inside one profiler session with a marker per round: starting
and stopping the profiler costs milliseconds, more than the regions we measure. Host time is
taken before, unprofiled, over a window of steady calls (window.py), so profiler overhead does
not inflate it and one busy moment of the machine does not decide it. The steps and the
measurements behind them: docs/design.md, "How a callable is measured".
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Any

from ..backends import Backend, Window
from ..errors import NeuronPerfError
from ..markers import PRIME, marker_name
from ..model import Measurement
from ..names import safe_filename
from ..stats import Stats
from ..trace.analysis import RoundResult, summarize
from ..trace.events import KinetoNode, kineto_nodes
from ..trace.offline import gc_paused
from ..work.peaks import PeakTable
from .compile_watch import CompileWatch
from .progress import Writer, phase
from .reference import Reference
from .settle import Settled, page_faults, settle
from .threads import THREADS_KEY, at_fixed_threads, fixed_threads
from .tick import scheduler_note
from .window import RECORD_WINDOWS, WINDOW_KEY, HostSamples, WindowPlan, pooled, sample_window


class MeasureError(NeuronPerfError, RuntimeError):
    """Misuse of the measuring API (not a failure of the measured code)."""


@dataclass
class _OpenRegion:
    name: str
    marker: str
    nested: list[tuple[str, str]] = field(default_factory=list)


class Runner:
    """Measures callables and ``with`` regions on one backend. One per pytest session."""

    def __init__(
        self,
        backend: Backend,
        trace_dir: Path | None = None,
        progress: Writer | None = None,
        *,
        peaks: PeakTable | None = None,
        count_work: bool = True,
        reference: bool = True,
        window: float = 0.0,
        record_windows: int = 1,
        threads: int | None = None,
    ) -> None:
        self.backend = backend
        # Intra-op threads while host-timed code is measured (threads.py); device backends
        # time the device and leave the user's count alone.
        self.threads = threads if backend.mode == "host" else None
        # Seconds over which host time is sampled (window.py).
        self.window = window
        # Windows pooled per measurement when recording baselines (window.pooled).
        self.record_windows = record_windows
        # Device backends time the device: how busy the host is moves their figures little.
        self.use_reference = reference and backend.mode == "host"
        self._reference: Reference | None = None
        if peaks is None:
            from ..work.calibrate import cpu_peaks

            peaks = PeakTable(calibrate=cpu_peaks)
        self.peaks = peaks
        self.count_work = count_work
        self.trace_dir = trace_dir
        self.progress = progress
        self._prepared = False
        self._open: list[_OpenRegion] = []
        self._seq = itertools.count()
        self._environment: dict[str, str] | None = None
        self.trace_paths: dict[tuple[str, str], Path] = {}

    def _prepare(self) -> None:
        if not self._prepared:
            self.backend.prepare()
            self._prepared = True

    @property
    def environment(self) -> dict[str, str]:
        if self._environment is None:
            env = dict(self.backend.versions())
            env["device_kind"] = self.backend.device_kind()
            if self.threads is not None:
                env[THREADS_KEY] = str(self.threads)
            self._environment = env
        return self._environment

    def _reference_timer(self) -> Reference | None:
        if self.use_reference and self._reference is None:
            self._reference = Reference()
        return self._reference

    def _seq_no(self) -> int:
        return next(self._seq)

    @at_fixed_threads
    def measure_callable(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        test_id: str,
        name: str,
        warmup: int,
        rounds: int,
        recheck: Callable[[Measurement], str | None] | None = None,
        window: WindowPlan | None = None,
    ) -> tuple[Any, Measurement]:
        """``recheck`` says how the host time regressed against the baseline, or None; when
        it does, more windows are sampled and replace the first (see _recheck). ``window``:
        how this measurement's host time is sampled (default: the Runner's whole window)."""
        if self._open:
            raise MeasureError(
                f"neuron_profile({name!r}) was called inside region {self._open[-1].name!r}: "
                "the callable form runs its own warm-up and rounds and cannot share a "
                "profiler session; call it outside the region, or use a nested region()"
            )
        if rounds < 1 or warmup < 0:
            raise MeasureError(
                f"rounds must be >= 1 and warmup >= 0 (got rounds={rounds}, warmup={warmup})"
            )
        self._prepare()
        plan = window if window is not None else WindowPlan(self.window)
        with CompileWatch() as watch:
            result, measurement, prof = self._run_callable(
                fn,
                args,
                kwargs,
                test_id=test_id,
                name=name,
                warmup=warmup,
                rounds=rounds,
                plan=plan,
            )
        notes = tuple(f"graph break: {r}" for r in watch.graph_break_reasons) + tuple(
            f"recompiled: {r}" for r in watch.recompile_reasons
        )
        measurement = replace(
            measurement,
            recompiles=max(measurement.recompiles, watch.recompiles),
            compile_notes=notes,
            # Host time is sampled over the window: a baseline is judged only against
            # measurements sampled the same way (compare.py).
            environment={**measurement.environment, WINDOW_KEY: f"{self.window:g}"},
        )
        self._export(prof, test_id, name, [name])
        if self.count_work:
            measurement = self._with_work(fn, args, kwargs, measurement)
        if recheck is not None:
            measurement = self._recheck(fn, args, kwargs, measurement, recheck, plan)
        return result, measurement

    def _sample_host(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rounds: int,
        plan: WindowPlan,
        windows: int | None = None,
    ) -> HostSamples:
        sync = self.backend.synchronize

        def timed() -> Any:
            out = fn(*args, **kwargs)
            sync()
            return out

        if windows is None:
            windows = self.record_windows
        windows = max(1, windows) if plan.seconds else 1
        return pooled(
            [sample_window(timed, rounds, plan, self._reference_timer()) for _ in range(windows)]
        )

    def _recheck(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        m: Measurement,
        recheck: Callable[[Measurement], str | None],
        plan: WindowPlan,
    ) -> Measurement:
        """A host-time regression is confirmed on a second look before it fails a test: as
        many windows as a recording pools, sampled right after and judged in the first's
        place, since a first window may have met a bad second (docs/gate-quality.md)."""
        first = recheck(m)
        if first is None:
            return m
        what = f"{m.test_id} {m.region!r}"
        with phase(self.progress, f"{what} host time regressed {first}: a second look"):
            # Whole windows, as a recording samples them: this look decides.
            whole = WindowPlan(plan.seconds)
            again = self._sample_host(fn, args, kwargs, m.rounds, whole, RECORD_WINDOWS)
        note = (
            f"host time regressed {first} in the first window; judged on "
            f"{RECORD_WINDOWS} more windows sampled right after, pooled"
        )
        return replace(
            m,
            host_us=Stats.of(again.host_us),
            recheck_note=note,
            **_host_fields(again, whole, self.threads, self._floor(m)),
        )

    def _with_work(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        m: Measurement,
    ) -> Measurement:
        """FLOPs and bytes from one more call, after the profiled rounds: the counting
        dispatch mode and its profiler never overlap the timing (work/counting.py)."""
        from ..work.counting import count_work

        with phase(self.progress, f"{m.test_id} {m.region!r} counting FLOPs and bytes"):
            try:
                _, work = count_work(fn, args, kwargs, read_tree=_kineto_tree)
                self.backend.synchronize()
            except Exception as exc:
                raise MeasureError(
                    f"neuron_profile({m.region!r}): counting FLOPs and bytes re-runs the "
                    f"callable under a TorchDispatchMode, and it raised {exc!r}"
                ) from exc
        peaks = self.peaks.for_kind(m.device_kind)
        if peaks is None:
            return replace(m, work=work)
        return replace(
            m,
            work=work,
            peak_flops_per_s=peaks.compute_peak(work.dtype),
            peak_bytes_per_s=peaks.bytes_per_s,
        )

    def _run_callable(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        test_id: str,
        name: str,
        warmup: int,
        rounds: int,
        plan: WindowPlan,
    ) -> tuple[Any, Measurement, Any]:
        from torch.profiler import profile, record_function

        sync = self.backend.synchronize
        clock = time.perf_counter_ns
        # Warm-up: compilation and caches happen here; reported, never budgeted.
        first_call_us = warmup_us = 0.0
        result: Any = None
        what = f"{test_id} {name!r}"
        faults = page_faults or (lambda: 0)
        warmup_faults: list[int] = []
        for i in range(warmup):
            label = "first call (torch.compile compiles here)" if i == 0 else f"warm-up {i + 1}"
            with phase(self.progress, f"{what} {label}"):
                f0 = faults()
                t0 = clock()
                result = fn(*args, **kwargs)
                sync()
                us = (clock() - t0) / 1e3
                warmup_faults.append(faults() - f0)
            if i == 0:
                refuse_lazy(result, name)
            warmup_us += us
            if i == 0:
                first_call_us = us

        def call() -> None:
            fn(*args, **kwargs)
            sync()

        # warmup=0 asks for cold figures: no settling then.
        settled = settle(call, warmup_faults) if warmup else Settled(0, None)
        reference = self._reference_timer()
        device_refs: list[float] = []
        windows = max(1, self.record_windows)
        span = f" over {plan.seconds:g} s" if plan.seconds else ""
        if plan.seconds and windows > 1:
            span = f" over {windows} windows of {plan.seconds:g} s (recording a baseline)"
        with phase(self.progress, f"{what} timing {rounds} rounds{span}"):
            sampled = self._sample_host(fn, args, kwargs, rounds, plan)
        result = sampled.result
        if not warmup:
            refuse_lazy(result, name)
        seq = self._seq_no()
        markers = [marker_name(seq, name, r) for r in range(rounds)]
        prime = marker_name(seq, name, PRIME)
        round_faults: list[float] = []
        # Host windows (the wall clock Neuron's runtime trace also uses) place device
        # executions in their round; each ends after the round's synchronize.
        host_windows: dict[str, Window] = {}
        with (
            phase(self.progress, f"{what} profiling {rounds} rounds"),
            profile(activities=self.backend.activities(), **self.backend.profiler_kwargs()) as prof,
        ):
            # A fresh profiler's first rounds run slower: an unanalysed prime round absorbs
            # that (docs/design.md, "How a callable is measured").
            def primed() -> None:
                with record_function(prime):
                    call()

            f0 = faults()
            primed()
            # Only a region that faulted after its first call settles again (docs/design.md).
            if warmup and settled.faulted:
                settle(primed, [faults() - f0])
            for marker in markers:
                if reference is not None:
                    # Bare: a record_function around each tick doubled the time torch takes
                    # to read the profile back. Its aten::mul calls sit between the rounds.
                    device_refs.append(reference.tick())
                f0 = faults()
                w0 = time.time_ns()
                with record_function(marker):
                    result = fn(*args, **kwargs)
                    sync()
                host_windows[marker] = (w0, time.time_ns())
                round_faults.append(float(faults() - f0))
        # Reading the profile back makes an object per event, all alive: a collection
        # scans them for nothing (it doubled the parse of a 100-op region). Nothing is timed.
        with gc_paused():
            [analyzed] = self.backend.analyze(prof, [markers], host_windows)
            measurement = self._summarize(
                analyzed.rounds,
                test_id=test_id,
                region=name,
                host=sampled.host_us,
                warmup_rounds=warmup,
                warmup_us=warmup_us,
                first_call_us=first_call_us,
            )
        measurement = replace(
            measurement,
            settle_calls=settled.extra_calls,
            **_host_fields(sampled, plan, self.threads, self._floor(measurement)),
            device_reference_us=Stats.of(device_refs) if device_refs else None,
            page_faults=median(round_faults) if page_faults is not None else None,
            device_notes=analyzed.notes,
        )
        return result, measurement, prof

    def _floor(self, m: Measurement) -> tuple[float, ...]:
        """On cpu the profiled rounds time the ops alone: a figure of what the code costs
        when it runs, for telling calls that waited for the scheduler (tick.py)."""
        return (m.device_us.min,) if self.backend.mode == "host" and m.device_us.n else ()

    @contextmanager
    def region(
        self, name: str, *, test_id: str, on_done: Callable[[Measurement], None]
    ) -> Iterator[None]:
        """Profile one execution of a block. Regions may nest: an inner region is a marker
        inside the outer region's profiler session, and its ops also count for the outer."""
        marker = marker_name(self._seq_no(), name)
        if self._open:
            outer = self._open[-1]
            if name == outer.name or any(n == name for n, _ in outer.nested):
                raise MeasureError(f"region {name!r} is already open or measured in this region")
            from torch.profiler import record_function

            with record_function(marker):
                yield
                self.backend.synchronize()
            outer.nested.append((name, marker))
            return
        self._prepare()
        from torch.profiler import profile, record_function

        entry = _OpenRegion(name, marker)
        self._open.append(entry)
        try:
            t0 = time.perf_counter_ns()
            with (
                fixed_threads(self.threads),
                profile(
                    activities=self.backend.activities(), **self.backend.profiler_kwargs()
                ) as prof,
            ):
                w0 = time.time_ns()
                with record_function(marker):
                    yield
                    self.backend.synchronize()
                window = (w0, time.time_ns())
            wall = (time.perf_counter_ns() - t0) / 1e3
        finally:
            self._open.pop()
        names = [name] + [n for n, _ in entry.nested]
        markers = [marker] + [m for _, m in entry.nested]
        # Nested regions have no host window of their own (docs/neuron.md).
        with gc_paused():  # as for a callable's rounds: nothing is timed here
            results = self.backend.analyze(prof, [[m] for m in markers], {marker: window})
        for region_name, res in zip(names, results, strict=True):
            # The block runs once, under the profiler: its host time includes profiling
            # overhead (the outer one is timed from Python, inner ones by their markers).
            host = [wall] if region_name == name else [res.rounds[0].wall_us]
            m = self._summarize(res.rounds, test_id=test_id, region=region_name, host=host)
            on_done(replace(m, device_notes=res.notes))
        self._export(prof, test_id, name, names)

    def _summarize(
        self,
        rounds: list[RoundResult],
        *,
        test_id: str,
        region: str,
        host: list[float],
        warmup_rounds: int = 0,
        warmup_us: float = 0.0,
        first_call_us: float = 0.0,
    ) -> Measurement:
        return summarize(
            rounds,
            test_id=test_id,
            region=region,
            backend=self.backend.name,
            device_kind=self.environment["device_kind"],
            host=host,
            environment=self.environment,
            warmup_rounds=warmup_rounds,
            warmup_us=warmup_us,
            first_call_us=first_call_us,
        )

    def _export(self, prof: Any, test_id: str, region: str, regions: list[str]) -> None:
        """Write the session's trace; nested regions share their outer region's file."""
        if self.trace_dir is None:
            return
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        path = self.trace_dir / trace_filename(test_id, region)
        taken = {p for k, p in self.trace_paths.items() if k[0] != test_id or k[1] not in regions}
        if path in taken:
            # Two ids that clean up to the same name (``[a/b]`` and ``[a_b]``) must not
            # overwrite each other's trace.
            path = path.with_name(trace_filename(test_id, region, unique=True))
        prof.export_chrome_trace(str(path))
        for name in regions:
            self.trace_paths[(test_id, name)] = path

    def trace_note(self, test_id: str, regions: Iterable[str]) -> str:
        """The lines a failure message adds so the developer can open the traces."""
        paths = sorted({str(p) for r in regions if (p := self.trace_paths.get((test_id, r)))})
        return "".join(f"\ntrace: {p} (open it in https://ui.perfetto.dev)" for p in paths)


def _kineto_tree(prof: Any) -> list[KinetoNode] | None:
    return kineto_nodes(getattr(prof.profiler, "kineto_results", None))


def trace_filename(test_id: str, region: str, *, unique: bool = False) -> str:
    """``<test>--<region>.json``, safe on any file system (under 200 characters). Cleaning
    and truncation can make two names equal; a truncated name, or ``unique``, gets a short
    hash of the exact pair."""
    test, reg = safe_filename(test_id), safe_filename(region)
    stem = f"{test[:120]}--{reg[:60]}"
    if unique or len(test) > 120 or len(reg) > 60:
        digest = hashlib.sha1(f"{test_id}\0{region}".encode()).hexdigest()[:10]
        stem = f"{stem}-{digest}"
    return f"{stem}.json"


def _host_fields(
    s: HostSamples, plan: WindowPlan, threads: int | None, floor: tuple[float, ...]
) -> dict[str, Any]:
    """The Measurement fields one host window fills in: ``window_s`` is how long it ran;
    ``floor``: more figures of what a call costs when it runs (Runner._floor)."""
    note = scheduler_note(s.long_calls_us, s.calls, s.host_us, (*s.fast_us, *floor), threads)
    return {
        "host_notes": (note,) if note else (),
        "host_calls": s.calls,
        "window_s": s.seconds if plan.seconds else 0.0,
        "window_note": s.note,
        "reference_us": Stats.of(s.reference_us) if s.reference_us else None,
        "host_relative": Stats.of(s.relative) if s.relative else None,
        "dispatch_reference_us": Stats.of(s.dispatch_us) if s.dispatch_us else None,
        "host_relative_dispatch": (Stats.of(s.relative_dispatch) if s.relative_dispatch else None),
    }


def refuse_lazy(result: Any, name: str) -> None:
    """A callable that returns a generator, coroutine or other lazy result has not done its
    work when it returns: timing it times the making of the promise. Raise, saying so."""
    what = ""
    if inspect.isgenerator(result):
        what, fix = "a generator", "lambda: list(gen(...))"
        result.close()
    elif inspect.iscoroutine(result):
        what, fix = "a coroutine", "lambda: asyncio.run(coro(...))"
        result.close()  # no "never awaited" warning on top of this error
    elif inspect.isasyncgen(result):
        what, fix = "an async generator", "a function that runs it to the end"
    elif inspect.isawaitable(result):
        what, fix = "an awaitable", "a function that awaits it to the end"
    elif isinstance(result, Future):
        what, fix = "a future", "lambda: submit(...).result()"
    elif isinstance(result, Iterator):
        what, fix = "a lazy iterator", "lambda: list(it(...))"
    if what:
        raise MeasureError(
            f"neuron_profile({name!r}): the callable returned {what} "
            f"({type(result).__name__}), so its work had not run when it returned and "
            f"nothing of it would be measured; measure a callable that does the work, "
            f"such as {fix}"
        )
