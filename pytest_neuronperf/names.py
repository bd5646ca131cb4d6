"""Names derived from test ids, regions and callables: file names, modules, measurements,
and the one way a long name is cut to fit (terminal, HTML and charts alike)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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


def elide_test_id(test_id: str, width: int, beside: Sequence[str] = ()) -> str:
    """A test id cut to ``width``. Its parts give way in this order: the parameters it
    shares with the ids ``beside`` it (other cases of the same test), its file's folders,
    the start of its file's name, the parameters where it differs, then the middle of the
    test's name; what is cut of each is one ellipsis. A test with no other case beside it
    gives up the middle of its parameters first."""
    if len(test_id) <= width:
        return test_id
    file, sep, rest = test_id.partition("::")
    if not sep:
        return elide(test_id, width)
    name, bracket, params = rest.partition("[")
    siblings = _siblings(test_id, beside)
    pieces = {"file": file, "name": sep + name, "open": bracket}
    pieces.update(_params_apart(params.removesuffix("]"), siblings))
    pieces["close"] = "]" if params.endswith("]") else ""
    basename = len(file.rpartition("/")[2])
    shared = ("head", 1, False), ("tail", 1, False)
    for key, least, keep_tail in (
        *(shared if siblings else [("apart", 6, False)]),
        ("file", basename + 1, True),
        ("file", 4, True),
        ("apart", 6, False),
        ("name", 8, False),
    ):
        over = sum(len(p) for p in pieces.values()) - width
        if over <= 0:
            break
        text = pieces[key]
        if len(text) > least:
            pieces[key] = _cut(text, max(least, len(text) - over), keep_tail)
    short = "".join(pieces.values())
    return short if len(short) <= width else elide(short, width)


def _siblings(test_id: str, beside: Sequence[str]) -> list[str]:
    """The parameters of the other cases of the same test among ``beside``."""
    base = test_id.partition("[")[0]
    return [
        other.partition("[")[2].removesuffix("]")
        for other in beside
        if other != test_id and other.partition("[")[0] == base and "[" in other
    ]


def _params_apart(params: str, siblings: Sequence[str]) -> dict[str, str]:
    """``params`` as head, apart and tail: apart is the words where it differs from any of
    its siblings, head and tail what it shares with all of them."""
    if not siblings:
        return {"head": "", "apart": params, "tail": ""}
    start = min(_common_prefix(params, s) for s in siblings)
    end = len(params) - min(_common_prefix(params[::-1], s[::-1]) for s in siblings)
    start = min(start, end)
    while start > 0 and params[start - 1] not in _WORD_ENDS:
        start -= 1
    while end < len(params) and params[end] not in _WORD_ENDS:
        end += 1
    return {"head": params[:start], "apart": params[start:end], "tail": params[end:]}


_WORD_ENDS = frozenset("-[]_/:,.= ")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _cut(text: str, width: int, keep_tail: bool) -> str:
    """``text`` in ``width`` characters (at least 1), an ellipsis where it was cut: its
    start (a file's folders) or its middle."""
    if len(text) <= width:
        return text
    if keep_tail or width < 3:
        return ELLIPSIS + text[len(text) - width + 1 :] if width > 1 else ELLIPSIS
    return elide(text, width)


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
