"""Run code under the profiler and turn what it recorded into a Measurement.

The runner orchestrates the steps, each in its own module: warm-up and settling
(warmup.py), host time over windows of unprofiled calls (host.py, window.py), the profiled
rounds (rounds.py), and the trace files (export.py).

All rounds of a callable run inside one profiler session with a marker per round: starting
and stopping the profiler costs milliseconds, more than the regions we measure. Host time is
taken after them and the work count, unprofiled, over a window of steady calls (window.py),
so profiler overhead does not inflate it and one busy moment of the machine does not decide
it; what the rounds found says which of its figures a recording must pin down. The steps and the
measurements behind them: docs/design.md, "How a callable is measured".
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Any

from ..backends import Backend
from ..backends.memory import AllocatorFigures, MemoryProbe
from ..markers import PRIME, marker_name
from ..model import Measurement, Work
from ..stats import Stats
from ..trace.analysis import RoundResult
from ..trace.events import KinetoNode, kineto_nodes
from ..trace.offline import gc_paused
from ..trace.summary import summarize
from ..work.peaks import PeakTable
from .compile_watch import CompileWatch, ran_eagerly
from .errors import MeasureError
from .export import TracePaths, export_trace, trace_lines
from .heap import fix_heap
from .host import host_fields, host_samples, second_look, window_span
from .memory import settle_memory
from .progress import Writer, phase
from .reference import LONG_REGION_US, LONG_TIMED_SHARE, Reference
from .rounds import Profiled, profile_rounds
from .settle import page_faults
from .threads import THREADS_KEY, at_fixed_threads, fixed_threads
from .warmup import WarmUp, refuse_lazy, warm_up
from .window import WINDOW_KEY, HostSamples, Shape, WindowPlan


@dataclass
class _OpenRegion:
    name: str
    marker: str
    nested: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Analysed:
    """The profiled rounds read back, with the backend's notes and the memory's."""

    rounds: list[RoundResult]
    notes: tuple[str, ...]
    memory_note: str


def _shape(analysed: _Analysed, work: Work | None) -> Shape:
    """What the region is made of: its worst round's ops and, where counted, its work."""
    return Shape(
        max((len(r.ops) for r in analysed.rounds), default=0),
        work.flops if work is not None else None,
        work.bytes_moved if work is not None else None,
    )


def _long(run: Profiled, markers: list[str]) -> bool:
    """Whether a region's host window times the millisecond tick: its profiled rounds took
    long enough that the unprofiled calls may reach LONG_REGION_US (profiling only adds)."""
    windows = [run.host_windows[m] for m in markers if m in run.host_windows]
    spans = [(w1 - w0) / 1e3 for w0, w1 in windows]
    return bool(spans) and median(spans) >= LONG_TIMED_SHARE * LONG_REGION_US


@dataclass(frozen=True)
class Call:
    """The measured callable and what it is called with: every step calls it the same way."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


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
        fixed_heap: bool = False,
    ) -> None:
        self.backend = backend
        # Intra-op threads while host-timed code is measured (threads.py); device backends
        # time the device and leave the user's count alone.
        self.threads = threads if backend.mode == "host" else None
        # glibc's malloc thresholds, fixed from the first host-timed measurement (heap.py).
        self.fixed_heap = fixed_heap and backend.mode == "host"
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
        self._trace_problem_said = False
        self._prepared = False
        self._open: list[_OpenRegion] = []
        self._seq = itertools.count()
        self._environment: dict[str, str] | None = None
        self.trace_paths: TracePaths = {}

    def _prepare(self) -> None:
        if not self._prepared:
            self.backend.prepare()
            if self.fixed_heap:
                fix_heap()
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
        memory: bool = False,
    ) -> tuple[Any, Measurement]:
        """``recheck`` says how the host time regressed against the baseline, or None; when
        it does, more windows are sampled and replace the first (host.second_look). ``window``:
        how this measurement's host time is sampled (default: the Runner's whole window).
        ``memory``: profile the rounds' memory too (what it costs: benchmarks/RESULTS.md)."""
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
        call = Call(fn, args, kwargs)
        with CompileWatch() as watch:
            result, measurement, prof = self._run_callable(
                call,
                test_id=test_id,
                name=name,
                warmup=warmup,
                rounds=rounds,
                plan=plan,
                memory=memory,
                watch=watch,
            )
        measurement = replace(
            measurement,
            recompiles=max(measurement.recompiles, watch.recompiles),
            compile_notes=(*watch.notes(), *measurement.compile_notes),
            # Host time is sampled over the window: a baseline is judged only against
            # measurements sampled the same way (compare.py).
            environment={**measurement.environment, WINDOW_KEY: f"{self.window:g}"},
        )
        self._export(prof, test_id, name, [name])
        if recheck is not None:
            measurement = self._recheck(call, measurement, recheck, plan)
        return result, measurement

    def _sample_host(
        self,
        call: Call,
        rounds: int,
        plan: WindowPlan,
        windows: int | None = None,
        *,
        long_tick: bool,
    ) -> HostSamples:
        return host_samples(
            call.fn,
            call.args,
            call.kwargs,
            sync=self.backend.synchronize,
            rounds=rounds,
            plan=plan,
            windows=self.record_windows if windows is None else windows,
            reference=self._reference_timer(),
            long_tick=long_tick,
        )

    def _recheck(
        self,
        call: Call,
        m: Measurement,
        recheck: Callable[[Measurement], str | None],
        plan: WindowPlan,
    ) -> Measurement:
        """The second look at a host-time regression (host.second_look)."""

        def again(whole: WindowPlan, windows: int) -> HostSamples:
            # Judged as the first look was: against the millisecond tick where it was timed.
            long_tick = m.long_reference_us is not None
            return self._sample_host(call, m.rounds, whole, windows, long_tick=long_tick)

        return second_look(
            m,
            recheck,
            again,
            plan,
            threads=self.threads,
            floor=self._floor(m),
            progress=self.progress,
        )

    def _count_work(self, call: Call, what: str, name: str) -> Work | None:
        """FLOPs and bytes from one more call, after the profiled rounds: the counting
        dispatch mode and its profiler never overlap the timing (work/counting.py)."""
        if not self.count_work:
            return None
        from ..work.counting import count_work

        with phase(self.progress, f"{what} counting FLOPs and bytes"):
            try:
                _, work = count_work(call.fn, call.args, call.kwargs, read_tree=_kineto_tree)
                self.backend.synchronize()
            except Exception as exc:
                raise MeasureError(
                    f"neuron_profile({name!r}): counting FLOPs and bytes re-runs the "
                    f"callable under a TorchDispatchMode, and it raised {exc!r}"
                ) from exc
        return work

    def _with_work(self, m: Measurement, work: Work | None) -> Measurement:
        if work is None:
            return m
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
        call: Call,
        *,
        test_id: str,
        name: str,
        warmup: int,
        rounds: int,
        plan: WindowPlan,
        memory: bool,
        watch: CompileWatch,
    ) -> tuple[Any, Measurement, Any]:
        sync = self.backend.synchronize
        what = f"{test_id} {name!r}"
        # Compilation and caches happen here; reported, never budgeted.
        warm = warm_up(
            call.fn,
            call.args,
            call.kwargs,
            sync=sync,
            warmup=warmup,
            name=name,
            what=what,
            progress=self.progress,
        )
        seq = self._seq_no()
        markers = [marker_name(seq, name, r) for r in range(rounds)]
        # Profiled and counted before the host window: what the region is made of decides
        # which of its figures a recording pins down (gate/record.py).
        run = profile_rounds(
            call.fn,
            call.args,
            call.kwargs,
            self.backend,
            markers,
            marker_name(seq, name, PRIME),
            resettle=bool(warmup and warm.settled.faulted),
            reference=self._reference_timer(),
            progress=self.progress,
            what=what,
            memory=memory,
            # Recompiles of the first calls (warm-up, prime) are reported, never budgeted.
            primed_hook=watch.measuring,
        )
        if not warmup:
            refuse_lazy(run.result, name)
        analysed = self._analyse(run, markers, memory)
        work = self._count_work(call, what, name)
        plan = plan.given(_shape(analysed, work))
        span = window_span(plan, self.record_windows)
        with phase(self.progress, f"{what} timing {rounds} rounds{span}"):
            sampled = self._sample_host(call, rounds, plan, long_tick=_long(run, markers))
        measurement = self._measurement_of(
            analysed, run, sampled, warm, test_id=test_id, name=name, warmup=warmup
        )
        compiled = [c for r in analysed.rounds for c in r.compiled_regions]
        eager = ran_eagerly(call.fn, name, compiled, measurement.ops)
        measurement = replace(measurement, compile_notes=eager)
        measurement = replace(measurement, **host_fields(
            sampled, plan, self.threads, self._floor(measurement)
        ))  # fmt: skip
        return run.result, self._with_work(measurement, work), run.prof

    def _analyse(self, run: Profiled, markers: list[str], memory: bool) -> _Analysed:
        """The profiled rounds read back, and what their memory showed."""
        # Reading the profile back makes an object per event, all alive: a collection
        # scans them for nothing (docs/cost.md). Nothing is timed here.
        with gc_paused():
            [analyzed] = self.backend.analyze(run.prof, [markers], run.host_windows)
            memory_note, memory_notes = self._settle_memory(
                memory, analyzed.rounds, markers, run.allocator
            )
        return _Analysed(analyzed.rounds, analyzed.notes + memory_notes, memory_note)

    def _measurement_of(
        self,
        analysed: _Analysed,
        run: Profiled,
        sampled: HostSamples,
        warm: WarmUp,
        *,
        test_id: str,
        name: str,
        warmup: int,
    ) -> Measurement:
        """The profiled rounds summed up, with what warm-up and the rounds saw."""
        with gc_paused():
            measurement = self._summarize(
                analysed.rounds,
                test_id=test_id,
                region=name,
                host=sampled.host_us,
                warmup_rounds=warmup,
                warmup_us=warm.warmup_us,
                first_call_us=warm.first_call_us,
            )
        return replace(
            measurement,
            settle_calls=warm.settled.extra_calls,
            device_reference_us=Stats.of(run.device_refs) if run.device_refs else None,
            page_faults=median(run.round_faults) if page_faults is not None else None,
            device_notes=analysed.notes,
            memory_note=analysed.memory_note,
        )

    def _settle_memory(
        self,
        memory: bool,
        rounds: list[RoundResult],
        markers: list[str],
        allocator: dict[str, AllocatorFigures],
    ) -> tuple[str, tuple[str, ...]]:
        """(why the region has no memory figure or "", notes), rounds' memory in place."""
        if not memory:
            return "", ()
        probe = self.backend.memory_probe() if not allocator else None
        return settle_memory(
            rounds,
            markers,
            allocator,
            mode=self.backend.mode,
            device=self.backend.memory_device,
            why_no_counters=probe if isinstance(probe, str) else "",
        )

    def _floor(self, m: Measurement) -> tuple[float, ...]:
        """On cpu the profiled rounds time the ops alone: a figure of what the code costs
        when it runs, for telling calls that waited for the scheduler (tick.py)."""
        return (m.device_us.min,) if self.backend.mode == "host" and m.device_us.n else ()

    @contextmanager
    def region(
        self,
        name: str,
        *,
        test_id: str,
        on_done: Callable[[Measurement], None],
        memory: bool = False,
    ) -> Iterator[None]:
        """Profile one execution of a block. Regions may nest: an inner region is a marker
        inside the outer region's profiler session, and its ops also count for the outer.
        ``memory``: profile its memory too (an outer region's setting holds for nested
        ones); what the block leaves alive (its variables) is its retained memory."""
        marker = marker_name(self._seq_no(), name)
        if self._open:
            with self._nested_region(name, marker):
                yield
            return
        self._prepare()
        from torch.profiler import profile, record_function

        entry = _OpenRegion(name, marker)
        self._open.append(entry)
        probe = self.backend.memory_probe() if memory else None
        counters = probe if isinstance(probe, MemoryProbe) else None
        allocator: dict[str, AllocatorFigures] = {}
        try:
            t0 = time.perf_counter_ns()
            with (
                fixed_threads(self.threads),
                profile(
                    activities=self.backend.activities(),
                    profile_memory=memory,
                    **self.backend.profiler_kwargs(),
                ) as prof,
            ):
                if counters is not None:
                    counters.start()
                w0 = time.time_ns()
                with record_function(marker):
                    yield
                    self.backend.synchronize()
                window = (w0, time.time_ns())
                if counters is not None:
                    allocator[marker] = counters.stop()
            wall = (time.perf_counter_ns() - t0) / 1e3
        finally:
            self._open.pop()
        self._region_done(
            entry, prof, window, wall, allocator, test_id=test_id, on_done=on_done, memory=memory
        )

    @contextmanager
    def _nested_region(self, name: str, marker: str) -> Iterator[None]:
        """An inner region: a marker inside the outer region's profiler session."""
        outer = self._open[-1]
        if name == outer.name or any(n == name for n, _ in outer.nested):
            raise MeasureError(f"region {name!r} is already open or measured in this region")
        from torch.profiler import record_function

        with record_function(marker):
            yield
            self.backend.synchronize()
        outer.nested.append((name, marker))

    def _region_done(
        self,
        entry: _OpenRegion,
        prof: Any,
        window: tuple[int, int],
        wall: float,
        allocator: dict[str, AllocatorFigures],
        *,
        test_id: str,
        on_done: Callable[[Measurement], None],
        memory: bool,
    ) -> None:
        """Analyse a closed region's profile: one measurement for it and each nested one."""
        name, marker = entry.name, entry.marker
        names = [name] + [n for n, _ in entry.nested]
        markers = [marker] + [m for _, m in entry.nested]
        # Nested regions have no host window of their own (docs/neuron.md).
        with gc_paused():  # as for a callable's rounds: nothing is timed here
            results = self.backend.analyze(prof, [[m] for m in markers], {marker: window})
        for region_name, mark, res in zip(names, markers, results, strict=True):
            # Nested regions have no counters of their own: their records are the figures.
            note, notes = self._settle_memory(
                memory, res.rounds, [mark], {k: v for k, v in allocator.items() if k == mark}
            )
            # The block runs once, under the profiler: its host time includes profiling
            # overhead (the outer one is timed from Python, inner ones by their markers).
            host = [wall] if region_name == name else [res.rounds[0].wall_us]
            m = self._summarize(res.rounds, test_id=test_id, region=region_name, host=host)
            on_done(replace(m, device_notes=res.notes + notes, memory_note=note))
        self._export(prof, test_id, name, names)

    def _export(self, prof: Any, test_id: str, name: str, names: list[str]) -> None:
        problem = export_trace(prof, self.trace_dir, self.trace_paths, test_id, name, names)
        if problem is not None and not self._trace_problem_said:
            self._trace_problem_said = True  # once: a full disk fails every trace after it
            if self.progress is not None:
                self.progress(problem)

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

    def trace_note(self, test_id: str, regions: Iterable[str]) -> str:
        """The lines a failure message adds so the developer can open the traces."""
        return trace_lines(self.trace_paths, test_id, regions)


def _kineto_tree(prof: Any) -> list[KinetoNode] | None:
    return kineto_nodes(getattr(prof.profiler, "kineto_results", None))
