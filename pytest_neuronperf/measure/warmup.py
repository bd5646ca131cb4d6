"""Warm-up: the calls before the measured ones, where compilation and caches happen.

This module's one job is the unmeasured start of a callable's measurement: timing each
warm-up call (the first is where torch.compile compiles; its time is reported, never
budgeted), then settling until calls stop faulting pages (settle.py), and refusing a
callable whose result is lazy, since its work had not run when it returned.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from .errors import MeasureError
from .progress import Writer, phase
from .settle import Settled, page_faults, settle


@dataclass(frozen=True)
class WarmUp:
    """What warming up took: the first call's µs (where torch.compile compiles), all the
    warm-up calls' µs, and the settling after them."""

    first_call_us: float
    warmup_us: float
    settled: Settled


def warm_up(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    sync: Callable[[], None],
    warmup: int,
    name: str,
    what: str,
    progress: Writer | None,
) -> WarmUp:
    """``warmup`` timed calls, then calls until the allocator settles (settle.py); raises
    MeasureError if the first call's result is lazy."""
    clock = time.perf_counter_ns
    first_call_us = warmup_us = 0.0
    faults = page_faults or (lambda: 0)
    warmup_faults: list[int] = []
    for i in range(warmup):
        label = "first call (torch.compile compiles here)" if i == 0 else f"warm-up {i + 1}"
        with phase(progress, f"{what} {label}"):
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
    return WarmUp(first_call_us, warmup_us, settled)


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
