"""What Dynamo said while a measurement ran: graph-break and recompile reasons.

Counts come from the profile (analysis.compile_activity); the reasons only Dynamo knows.
Graph-break reasons, with the user's file:line, are caught from the method Dynamo calls to
log a break (torch 2.13 leaves its counters empty for some, e.g. a data-dependent branch);
its counters are the fallback. Either is seen when the break was compiled during this
measurement (usually the warm-up's first call). Recompile reasons
are caught from the function Dynamo calls when a guard fails; it is internal, so when it
moves the watch still counts nothing wrongly, it only loses the reasons. Recompiles before
``measuring()`` are the warm-up's: the first calls of a callable recompile a code object
another test compiled first (closures under one decorator share it), so they are reported,
never budgeted.

And what Dynamo does without a word: a torch.compile'd callable whose measured rounds ran
no compiled graph ran eagerly (ran_eagerly), as Dynamo runs a function that hit its
recompile limit earlier in the process, so that the op counts it leaves are explained.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any


class CompileWatch:
    def __init__(self) -> None:
        self.graph_break_reasons: list[str] = []
        self.recompile_reasons: list[str] = []
        self.recompiles = 0
        # Those before measuring(): reported, not counted in ``recompiles``.
        self.warmup_recompile_reasons: list[str] = []
        self._measuring = False
        self._before: dict[str, int] = {}
        self._module: Any = None
        self._original: Callable[..., Any] | None = None
        self._breaks: list[str] = []
        self._translator: Any = None
        self._log_break: Callable[..., Any] | None = None

    def __enter__(self) -> CompileWatch:
        # Nothing to watch unless the user's code has loaded Dynamo (importing it is slow).
        if "torch._dynamo" not in sys.modules:
            return self
        from torch._dynamo.utils import counters

        self._before = dict(counters["graph_break"])
        self._watch_breaks()
        module: Any = sys.modules.get("torch._dynamo.convert_frame")
        original = getattr(module, "get_and_maybe_log_recompilation_reasons", None)
        if module is not None and callable(original):
            self._module, self._original = module, original

            def recording(*args: Any, **kwargs: Any) -> Any:
                reasons = original(*args, **kwargs)
                # One reason per cache entry that failed: the first is the newest entry's.
                said = _guard_line(str(reasons[0])) if reasons else "reason not given"
                if self._measuring:
                    self.recompiles += 1
                    self.recompile_reasons.append(said)
                else:
                    self.warmup_recompile_reasons.append(said)
                return reasons

            module.get_and_maybe_log_recompilation_reasons = recording
        return self

    def measuring(self) -> None:
        """The warm-up is over: recompiles from here on are the measured rounds'."""
        self._measuring = True

    def notes(self) -> tuple[str, ...]:
        """What Dynamo said, a line each (the first few of each kind), for the region's
        detail section."""
        return (
            *(f"graph break: {r}" for r in self.graph_break_reasons),
            *_first(self.recompile_reasons, "recompiled: ", 10),
            *_first(self.warmup_recompile_reasons, "recompiled in warm-up (not budgeted): ", 3),
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._module is not None:
            self._module.get_and_maybe_log_recompilation_reasons = self._original
            self._module = None
        if self._translator is not None:
            self._translator.log_graph_break = self._log_break
            self._translator = None
        if self._breaks:
            self.graph_break_reasons.extend(dict.fromkeys(self._breaks))
        elif "torch._dynamo" in sys.modules:
            from torch._dynamo.utils import counters

            for reason, n in counters["graph_break"].items():
                if n > self._before.get(reason, 0):
                    self.graph_break_reasons.append(_first_line(reason))

    def _watch_breaks(self) -> None:
        module: Any = sys.modules.get("torch._dynamo.symbolic_convert")
        translator: Any = getattr(module, "InstructionTranslatorBase", None)
        original = getattr(translator, "log_graph_break", None)
        if not callable(original):
            return  # internal: when it moves, the counters still give the reason
        self._translator, self._log_break = translator, original

        def recording(tx: Any, code_options: Any, reason: str, exc: Any) -> Any:
            if not getattr(exc, "logged", False):
                # str(exc) is the text Dynamo's counters key on; reason adds a preamble.
                said = _first_line(str(exc) or reason)
                self._breaks.append(f"{said} at {_where(exc, code_options)}")
            return original(tx, code_options, reason, exc)

        translator.log_graph_break = recording


def ran_eagerly(fn: Any, name: str, compiled_regions: list[str], ops: int) -> tuple[str, ...]:
    """A note when ``fn`` is a torch.compile'd function or module whose measured rounds
    dispatched ops and ran no compiled graph; else nothing."""
    if compiled_regions or not ops or "torch._dynamo" not in sys.modules:
        return ()
    # torch.compiler.disable's wrapper carries the same attribute: eager by the user's word.
    if getattr(fn, "_torchdynamo_orig_callable", None) is None or getattr(
        fn, "_torchdynamo_disable", False
    ):
        return ()
    return (
        f"torch.compile: {name!r} is compiled, but no compiled graph ran in its measured "
        "rounds: Dynamo ran it eagerly, as it does once a function has hit "
        "torch._dynamo.config.recompile_limit earlier in this process (another test may "
        "have called it with many shapes or constants), or where compilation is disabled; "
        "its ops are the eager ones",
    )


def _first(reasons: list[str], prefix: str, most: int) -> list[str]:
    # A callable that recompiles on every call gives a reason per call.
    lines = [prefix + r for r in reasons[:most]]
    return [*lines, f"{prefix}+{len(reasons) - most} more"] if len(reasons) > most else lines


def _where(exc: Any, code_options: Any) -> str:
    """The user's file:line of a break: the innermost frame Dynamo was tracing."""
    stack = getattr(exc, "real_stack", None)
    if not stack:
        import torch._guards

        stack = torch._guards.TracingContext.extract_stack()
    if stack:
        filename, line = stack[-1].filename, stack[-1].lineno
    else:
        filename, line = code_options["co_filename"], code_options["co_firstlineno"]
    return f"{_short(str(filename))}:{line}"


def _short(filename: str) -> str:
    # A path under the working directory reads as the test ids do.
    rel = os.path.relpath(filename) if os.path.isabs(filename) else filename
    return filename if rel.startswith("..") else rel


def _first_line(reason: str) -> str:
    # Dynamo's reasons run to a dozen lines of hints; the first says what broke.
    lines = [line.strip() for line in reason.strip().splitlines() if line.strip()]
    head = lines[0] if lines else reason
    explanation = next((line for line in lines if line.startswith("Explanation:")), "")
    return f"{head} ({explanation})" if explanation else head


def _guard_line(reason: str) -> str:
    # "2/0: n == 1      # return x * n  # file.py:11 in g\nUser stack trace: ..." -> one line.
    first = reason.strip().splitlines()[0] if reason.strip() else reason
    return " ".join(first.split())
