"""A fixed intra-op thread count while host-timed code is measured (docs/threads.md).

Measured on a busy 2-core VM with torch's default of 2 threads: a parallel op waits for a
core another process holds, so calls took whole multiples of the 4 ms scheduler tick, and
a 12 µs ``(x*2.0).sum()`` over 64K floats had window medians of 40-56 ms; it also runs 3
kernels on 2 threads and 2 on one. ``torch.utils.benchmark.Timer`` defaults to one thread
for the same reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Concatenate, ParamSpec, Protocol, TypeVar

# The environment key a measurement and its baseline entry carry the count under.
THREADS_KEY = "threads"


@contextmanager
def fixed_threads(count: int | None) -> Iterator[None]:
    """``torch.set_num_threads(count)`` for the block, the caller's count restored after it,
    whatever the block raised. None leaves the count alone."""
    if count is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if before != count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


class _HasThreads(Protocol):
    threads: int | None


_S = TypeVar("_S", bound=_HasThreads)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def at_fixed_threads(
    method: Callable[Concatenate[_S, _P], _R],
) -> Callable[Concatenate[_S, _P], _R]:
    """A method of an object with a ``threads`` attribute, run inside fixed_threads."""

    @functools.wraps(method)
    def run(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with fixed_threads(self.threads):
            return method(self, *args, **kwargs)

    return run
