"""Names derived from test ids, regions and callables: file names, modules, measurements,
and the one way a long name is cut to fit (terminal, HTML and charts alike)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

ELLIPSIS = "…"


def safe_filename(text: str) -> str:
    """A name any file system accepts, still recognisable to a person."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return cleaned[:150] or "region"


def elide(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters by replacing its middle with an ellipsis."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    head = width // 2
    tail = width - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def elide_test_id(test_id: str, width: int) -> str:
    """A test id cut to ``width``: the file and test name kept whole where they fit, the
    parameters elided in the middle (their start and end tell cases apart best); else the
    test name kept, with the end of its file's path and a few characters of parameters."""
    if len(test_id) <= width:
        return test_id
    base, bracket, params = test_id.partition("[")
    if bracket and len(base) + 6 <= width:
        return f"{base}[{elide(params, width - len(base) - 1)}"
    file, sep, name = base.partition("::")
    suffix = f"{sep}{name}" + (f"[{elide(params, 6)}" if bracket else "")
    if sep and len(suffix) + 4 <= width:
        return ELLIPSIS + file[len(file) - (width - len(suffix) - 1) :] + suffix
    return elide(test_id, width)


def module_of(test_id: str) -> str:
    """``tests/test_x.py::test_y[p]`` -> ``tests/test_x.py``."""
    return test_id.split("::", 1)[0]


# torch's C builtins carry the name of the binding they live in, not the one users call:
# ``torch.exp.__qualname__`` is ``_VariableFunctionsClass.exp``, ``F.gelu`` lives in
# ``torch._C._nn``. Module -> (public prefix, the binding's own prefix on the name).
_TORCH_BINDINGS = {
    "torch._C._nn": ("torch.nn.functional.", ""),
    "torch._C._linalg": ("torch.linalg.", "linalg_"),
    "torch._C._special": ("torch.special.", "special_"),
    "torch._C._fft": ("torch.fft.", "fft_"),
}


def callable_name(fn: Callable[..., Any]) -> str:
    """The name a measurement of ``fn`` gets when the test gives none: its qualified name,
    torch builtins by the name they are called by (``torch.exp``, ``torch.Tensor.add``)."""
    if type(fn).__name__ in ("OpOverload", "OpOverloadPacket"):
        return f"torch.ops.{fn}"  # str() is "aten.mul.Tensor"; the qualname is pybind's
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None and hasattr(fn, "func"):  # functools.partial
        return callable_name(fn.func)
    text = str(name or type(fn).__name__)
    module = getattr(fn, "__module__", None)
    if text.startswith("_VariableFunctionsClass."):
        return "torch." + text.removeprefix("_VariableFunctionsClass.")
    if text.startswith("TensorBase."):
        return "torch.Tensor." + text.removeprefix("TensorBase.")
    if module in _TORCH_BINDINGS and "." not in text:
        public, own = _TORCH_BINDINGS[module]
        return public + text.removeprefix(own)
    return text
