"""Frozen dataclasses to JSON-ready dicts and back, driven by their fields: strict going in.

A field is declared once, on its dataclass: its name is the key, its type says how the value
is written and what is accepted back, its default says whether the key may be missing, and
``rule(...)`` in its metadata adds what the type cannot say (a least value, samples that must
be there). So a new field is added in one place and every file and report that holds the
class reads and writes it. Going in, every value is checked: whole numbers are ints (not
bools, not floats), numbers are finite and at least 0 unless a rule says otherwise, strings
are strings; the first bad value raises DecodeError naming its path (``host_us.samples[3]``).
Keys a class does not know are ignored, as files from a newer minor version may add some."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Generic, Literal, Self, TypeVar, get_args, get_origin, get_type_hints

from .errors import NeuronPerfError
from .stats import SUMMARY_KEYS, Stats

T = TypeVar("T")

_MISSING: Any = dataclasses.MISSING
# Rule.omit when no value is left out (None may be one that is).
_KEEP: Any = object()


class DecodeError(NeuronPerfError, ValueError):
    """A value that is not what its field declares; the message names the field's path."""


@dataclasses.dataclass(frozen=True)
class Rule:
    """What a field's type does not say. Numbers and samples are at least ``minimum``
    (greater, with ``exclusive``); ``nonempty`` samples hold at least one value. A field
    equal to ``omit`` is left out when written (it must equal the default, which a missing
    key reads back as). ``encode``/``decode`` replace the codec for one field whose layout
    is not its type's (decode gets the raw value and the field's path)."""

    minimum: float = 0.0
    exclusive: bool = False
    nonempty: bool = False
    omit: Any = _KEEP
    encode: Callable[[Any], Any] | None = None
    decode: Callable[[Any, str], Any] | None = None


_DEFAULT_RULE = Rule()


def rule(**kwargs: Any) -> dict[str, Rule]:
    """``field(metadata=rule(minimum=1))``."""
    return {"codec": Rule(**kwargs)}


class Codec(Generic[T]):
    """The codec of one dataclass. ``omit_none`` leaves out fields whose value is None
    (a file then stays as short as what was measured); ``rules`` override the fields'
    own rules for this codec only (a file that lays one field out its own way)."""

    def __init__(
        self, cls: type[T], *, omit_none: bool = False, rules: Mapping[str, Rule] | None = None
    ) -> None:
        self.cls = cls
        self.omit_none = omit_none
        self._rules = dict(rules or {})
        self._fields: list[tuple[str, Any, Rule, Any]] | None = None

    def fields(self) -> list[tuple[str, Any, Rule, Any]]:
        """(name, type, rule, default) per field; resolved on first use, when every type
        the hints name has been defined."""
        if self._fields is None:
            hints = get_type_hints(self.cls)
            out = []
            for f in dataclasses.fields(self.cls):  # type: ignore[arg-type]
                if not f.init:
                    continue
                default = f.default
                if f.default_factory is not _MISSING:
                    default = f.default_factory
                r = self._rules.get(f.name) or f.metadata.get("codec", _DEFAULT_RULE)
                out.append((f.name, hints[f.name], r, default))
            self._fields = out
        return self._fields

    def encode(self, obj: T) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, _, r, _ in self.fields():
            value = getattr(obj, name)
            if (value is None and self.omit_none) or (r.omit is not _KEEP and value == r.omit):
                continue
            out[name] = r.encode(value) if r.encode is not None else encode_value(value)
        return out

    def decode(self, data: Any, path: str = "") -> T:
        if not isinstance(data, Mapping):
            raise DecodeError(f"{path or 'the value'} must be an object, got {_show(data)}")
        kwargs: dict[str, Any] = {}
        for name, tp, r, default in self.fields():
            where = f"{path}.{name}" if path else name
            if name not in data:
                if default is _MISSING:
                    raise DecodeError(f"{where} is missing")
                kwargs[name] = default() if callable(default) else default
                continue
            raw = data[name]
            kwargs[name] = r.decode(raw, where) if r.decode else decode_value(raw, tp, r, where)
        return self.cls(**kwargs)


_CODECS: dict[type, Codec[Any]] = {}


def codec_of(cls: type[T]) -> Codec[T]:
    """The plain codec of a dataclass (null written for None), shared per class."""
    found = _CODECS.get(cls)
    if found is None:
        found = _CODECS[cls] = Codec(cls)
    return found


class Coded:
    """``to_dict``/``from_dict`` through the class's plain codec, for a dataclass base."""

    def to_dict(self) -> dict[str, Any]:
        return codec_of(type(self)).encode(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self:
        return codec_of(cls).decode(d)


def encode_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, str):
        return value
    if isinstance(value, Stats):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): encode_value(v) for k, v in sorted(value.items())}
    if isinstance(value, tuple | list):
        return [encode_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return codec_of(type(value)).encode(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode_value(raw: Any, tp: Any, r: Rule, where: str) -> Any:
    origin = get_origin(tp)
    if origin is types.UnionType or origin is typing.Union:
        options = get_args(tp)
        if raw is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return decode_value(raw, option, r, where)
            except DecodeError as exc:
                errors.append(str(exc))
        raise DecodeError(errors[0] if len(errors) == 1 else f"{where}: {'; or '.join(errors)}")
    if origin is Literal:
        if raw in get_args(tp) and isinstance(raw, str | int):
            return raw
        allowed = ", ".join(repr(a) for a in get_args(tp))
        raise DecodeError(f"{where} must be one of {allowed}, got {_show(raw)}")
    if origin is dict:
        key_tp, value_tp = get_args(tp)
        if not isinstance(raw, Mapping):
            raise DecodeError(f"{where} must be an object, got {_show(raw)}")
        return {
            decode_value(k, key_tp, _DEFAULT_RULE, f"{where} key"): decode_value(
                v, value_tp, r, f"{where}[{k!r}]"
            )
            for k, v in raw.items()
        }
    if origin is tuple:
        item_tp = get_args(tp)[0]
        if not isinstance(raw, list):
            raise DecodeError(f"{where} must be a list, got {_show(raw)}")
        return tuple(decode_value(v, item_tp, r, f"{where}[{i}]") for i, v in enumerate(raw))
    if tp is Stats:
        return _stats(raw, r, where)
    if tp is bool:
        if not isinstance(raw, bool):
            raise DecodeError(f"{where} must be true or false, got {_show(raw)}")
        return raw
    if tp is int:
        if isinstance(raw, bool) or not isinstance(raw, int) or not _at_least(raw, r):
            raise DecodeError(f"{where} must be a whole number {_bound(r)}, got {_show(raw)}")
        return raw
    if tp is float:
        return _number(raw, r, where)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(raw)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in tp)
            raise DecodeError(f"{where} must be one of {allowed}, got {_show(raw)}") from None
    if tp is str:
        if not isinstance(raw, str):
            raise DecodeError(f"{where} must be a string, got {_show(raw)}")
        return raw
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return codec_of(tp).decode(raw, where)
    raise TypeError(f"{where}: no codec for {tp!r}")


def _number(raw: Any, r: Rule, where: str) -> float:
    if not _is_number(raw, r):
        raise DecodeError(f"{where} must be a finite number {_bound(r)}, got {_show(raw)}")
    return float(raw)


def _is_number(raw: Any, r: Rule) -> bool:
    return (
        not isinstance(raw, bool)
        and isinstance(raw, int | float)
        and math.isfinite(raw)
        and _at_least(raw, r)
    )


def _stats(raw: Any, r: Rule, where: str) -> Stats:
    """Round samples; the summary written beside them (median, min, max, iqr, n) is kept
    and written back where it agrees with them, so that a file read and written again is
    unchanged (Stats.to_dict)."""
    if not isinstance(raw, Mapping):
        raise DecodeError(f"{where} must be an object with 'samples', got {_show(raw)}")
    samples = raw.get("samples")
    if not isinstance(samples, list):
        raise DecodeError(f"{where}.samples must be a list of numbers, got {_show(samples)}")
    if r.nonempty and not samples:
        raise DecodeError(f"{where} samples must not be empty")
    # One pass over the whole list where every sample is a plain number (a file's usual
    # case: a 1,000-entry baseline holds 70,000); the one at fault is found otherwise.
    plain = all(type(v) is float or type(v) is int for v in samples)
    if not (
        plain and all(map(math.isfinite, samples)) and (not samples or _at_least(min(samples), r))
    ):
        for i, v in enumerate(samples):
            if not _is_number(v, r):
                raise DecodeError(
                    f"{where} samples must all be {_bound(r)} and finite, got {_show(v)} at [{i}]"
                )
    values = tuple(map(float, samples))
    # Kept as the file wrote it; Stats.to_dict writes it back only where it still agrees
    # with the samples, so the check costs a write, not every load.
    shown = {k: raw[k] for k in SUMMARY_KEYS if k in raw}
    return Stats(values, shown=shown or None)


def _at_least(value: float, r: Rule) -> bool:
    return value > r.minimum if r.exclusive else value >= r.minimum


def _bound(r: Rule) -> str:
    return f"{'>' if r.exclusive else '>='} {r.minimum:g}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
