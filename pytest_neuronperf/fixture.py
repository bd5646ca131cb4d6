"""The object the ``neuron_profile`` fixture hands a test."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from .measure import distributed as dist_measure
from .measure.errors import MeasureError
from .measure.group import group
from .measure.runner import Runner
from .measure.window import WindowPlan
from .model import Measurement
from .names import callable_name as _callable_name

_NOT_MEASURED = (
    "nothing was measured: this test has no neuron_budget marker and --neuron-profile is off, "
    "so neuron_profile only ran the code. Add @pytest.mark.neuron_budget(...) to always "
    "measure it, run with --neuron-profile, or check neuron_profile.enabled first"
)


class NeuronProfile:
    """Measure a callable (``neuron_profile(fn, *args)``) or a block
    (``with neuron_profile.region(name):``). When disabled, both just run the code."""

    def __init__(
        self,
        *,
        test_id: str,
        enabled: bool,
        runner: Callable[[], Runner],
        rounds: int,
        warmup: int,
        recheck: Callable[[Measurement], str | None] | None = None,
        window: Callable[[str], WindowPlan] | None = None,
        memory: Callable[[str], bool] | None = None,
    ) -> None:
        self.test_id = test_id
        # Whether a region's memory is profiled: a budget, a baseline or the setting asks.
        self._memory = memory
        # How a region's host time is sampled: a window only where a time is judged.
        self._window = window
        # Says how a measurement's host time regressed against its baseline (None: it did
        # not), so that the runner confirms it on a second look.
        self._recheck = recheck
        self.enabled = enabled
        self._runner = runner
        self.rounds = rounds
        self.warmup = warmup
        self.measurements: list[Measurement] = []
        self._warned_reuse = False
        # Per region (its unique name): the computation it was declared a variant of.
        self._variants: dict[str, str] = {}
        # Called with each new measurement (pytest-benchmark interop).
        self.listeners: list[Callable[[Measurement], None]] = []

    def __repr__(self) -> str:
        # pytest prints a failing test's arguments: a short line, not a class path.
        state = "on" if self.enabled else "off"
        return f"<neuron_profile {state}, {len(self.measurements)} measured>"

    def _record(self, measurement: Measurement) -> None:
        if variant_of := self._variants.get(measurement.region, ""):
            measurement = replace(measurement, variant_of=variant_of)
        self.measurements.append(measurement)
        for listener in self.listeners:
            listener(measurement)

    def __call__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        name: str | None = None,
        rounds: int | None = None,
        warmup: int | None = None,
        variant_of: str = "",
        **kwargs: Any,
    ) -> Any:
        """Call ``fn(*args, **kwargs)`` over warm-up and measured rounds; return its result.
        ``name``, ``rounds``, ``warmup`` and ``variant_of`` are ours: pass a function's own
        arguments of those names through :meth:`measure`."""
        __tracebackhide__ = True
        return self.measure(
            fn, args, kwargs, name=name, rounds=rounds, warmup=warmup, variant_of=variant_of
        )

    def measure(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        name: str | None = None,
        rounds: int | None = None,
        warmup: int | None = None,
        variant_of: str = "",
    ) -> Any:
        """``variant_of``: the computation this region is one way of doing (the report's
        fusion view groups regions by it before their names)."""
        __tracebackhide__ = True
        kwargs = kwargs or {}
        if not callable(fn):
            raise TypeError(f"neuron_profile: expected a callable, got {type(fn).__name__}")
        _check_variant("neuron_profile", variant_of)
        if not self.enabled:
            return fn(*args, **kwargs)
        region = self._declare(self._unique(name or _callable_name(fn)), variant_of)
        if group() is not None or _torchrun_world() > 1:
            return self._measure_rank(fn, args, kwargs, region, rounds, warmup)
        try:
            result, measurement = self._runner().measure_callable(
                fn,
                args,
                kwargs,
                test_id=self.test_id,
                name=region,
                warmup=self.warmup if warmup is None else warmup,
                rounds=self.rounds if rounds is None else rounds,
                recheck=self._recheck,
                window=self._window(region) if self._window is not None else None,
                memory=self._memory is not None and self._memory(region),
            )
        except BaseException as exc:
            # The same exception, without the plugin's frames between the test and the
            # user's code (warm-up, threads, runner): as pytest hides its own.
            exc.with_traceback(without_our_frames(exc.__traceback__))
            raise
        self._record(measurement)
        return result

    def _measure_rank(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        region: str,
        rounds: int | None,
        warmup: int | None,
    ) -> Any:
        """Under a process group (torchrun): this rank in lockstep with the others, every
        rank's figures gathered through the group, the region recorded as one."""
        if group() is None:
            raise MeasureError(
                f"neuron_profile({region!r}): torchrun started {_torchrun_world()} ranks but "
                "torch.distributed is not initialised in this one; call "
                "torch.distributed.init_process_group() first (a session fixture in conftest.py)"
            )
        runner = self._runner()
        result, mine = dist_measure.measure_rank(
            fn,
            args,
            kwargs,
            backend=runner.backend,
            environment=runner.environment,
            test_id=self.test_id,
            name=region,
            seq=runner._seq_no(),
            rounds=self.rounds if rounds is None else rounds,
            warmup=self.warmup if warmup is None else warmup,
        )
        self._record(dist_measure.combine(dist_measure.gather(mine)))
        return result

    def distributed(
        self,
        fn: Callable[..., Any],
        *args: Any,
        world_size: int = 2,
        backend: str = "gloo",
        name: str | None = None,
        rounds: int | None = None,
        warmup: int | None = None,
        timeout: float = 120.0,
        **kwargs: Any,
    ) -> list[Measurement]:
        """Spawn ``world_size`` ranks, each with the process group initialised (``backend``:
        gloo on CPU, nccl on CUDA), measure ``fn(*args, **kwargs)`` on every rank in lockstep
        and record the region once (its heaviest rank's figures, every rank's summary);
        return each rank's Measurement. ``fn`` and its arguments must pickle (a module-level
        function). A rank that raises, dies or outlasts ``timeout`` seconds fails the test,
        and every rank is stopped. When measuring is off, each rank just runs ``fn`` once."""
        from .measure.spawn import RankJob, check_request, free_port, run_ranks

        if not callable(fn):
            raise TypeError(f"neuron_profile.distributed: expected a callable, got {fn!r}")
        check_request(world_size, backend, timeout)
        region = self._unique(name or _callable_name(fn))
        runner = self._runner() if self.enabled else None
        job = RankJob(
            fn=fn,
            args=args,
            kwargs=kwargs,
            test_id=self.test_id,
            name=region,
            seq=runner._seq_no() if runner is not None else 0,
            rounds=self.rounds if rounds is None else rounds,
            warmup=self.warmup if warmup is None else warmup,
            backend=backend,
            world_size=world_size,
            port=free_port(),
            timeout_s=float(timeout),
            measure=self.enabled,
            # One intra-op thread a rank: the ranks share the machine's cores.
            threads=1 if backend == "gloo" else None,
        )
        per_rank = run_ranks(job)
        if per_rank:
            self._record(dist_measure.combine(per_rank))
        return per_rank

    @contextmanager
    def region(self, name: str, variant_of: str = "") -> Iterator[None]:
        """Profile one execution of the block as the measurement ``name``; ``variant_of`` as
        for :meth:`measure`."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"neuron_profile.region: expected a non-empty name, got {name!r}")
        _check_variant("neuron_profile.region", variant_of)
        if not self.enabled:
            yield
            return
        region = self._declare(self._unique(name), variant_of)
        memory = self._memory is not None and self._memory(region)
        try:
            with self._runner().region(
                region, test_id=self.test_id, on_done=self._record, memory=memory
            ):
                yield
        except BaseException as exc:
            exc.with_traceback(without_our_frames(exc.__traceback__))
            raise

    @property
    def last(self) -> Measurement:
        """The most recent measurement of this test (innermost-last for nested regions)."""
        if not self.measurements:
            raise MeasureError(
                _NOT_MEASURED if not self.enabled else "nothing measured yet in this test"
            )
        return self.measurements[-1]

    def __getitem__(self, name: str) -> Measurement:
        for m in self.measurements:
            if m.region == name:
                return m
        if not self.enabled:
            raise MeasureError(_NOT_MEASURED)
        known = ", ".join(repr(m.region) for m in self.measurements) or "none"
        raise KeyError(f"no measurement named {name!r} in this test (measured: {known})")

    def _declare(self, region: str, variant_of: str) -> str:
        if variant_of:
            self._variants[region] = variant_of
        return region

    def _unique(self, name: str) -> str:
        # Two measurements of one name would collide in baselines and reports.
        taken = {m.region for m in self.measurements}
        if name not in taken:
            return name
        i = 2
        while f"{name}#{i}" in taken:
            i += 1
        unique = f"{name}#{i}"
        if not self._warned_reuse:
            # A warning, not an error: a loop over sizes that measures one callable is
            # legitimate; but its baseline keys then follow the order of the calls.
            self._warned_reuse = True
            warnings.warn(
                f"neuron_profile: {name!r} is measured again in this test, as {unique!r} "
                "(further reuses are numbered alike, without another warning); its "
                "baseline key then depends on call order: give each measurement its own "
                "name=...",
                UserWarning,
                stacklevel=4,
            )
        return unique


_PACKAGE = str(Path(__file__).parent) + os.sep


def without_our_frames(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` with the entries of this package's code unlinked; the user's stay in order."""
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    if not kept:
        return None
    for entry, after in zip(kept, [*kept[1:], None], strict=True):
        entry.tb_next = after
    return kept[0]


def _torchrun_world() -> int:
    """WORLD_SIZE as torchrun sets it for each rank (0 when not under a launcher)."""
    import os

    try:
        return int(os.environ.get("WORLD_SIZE", "0")) if "LOCAL_RANK" in os.environ else 0
    except ValueError:
        return 0


def benchmark_extra_info(benchmark: Any) -> Callable[[Measurement], None]:
    """A listener that files each measurement under ``benchmark.extra_info["neuronperf"]``."""

    def add(m: Measurement) -> None:
        info = benchmark.extra_info.setdefault("neuronperf", {})
        info[m.region] = {
            "ops": m.ops,
            "kernels": m.kernels,
            "device_us_median": round(m.device_us.median, 3),
            "host_us_median": round(m.host_us.median, 3),
            "rounds": m.rounds,
            "device_kind": m.device_kind,
            "op_counts": dict(sorted(m.op_counts.items())),
        }

    return add


def _check_variant(where: str, variant_of: object) -> None:
    if not isinstance(variant_of, str):
        raise TypeError(f"{where}: variant_of must be a string, got {variant_of!r}")
