"""Names of the ``record_function`` markers the Runner puts around what it measures.

A marker carries the region's name so that a saved trace is self-describing: Perfetto shows
``neuronperf#3.0 rmsnorm_naive`` instead of an opaque number, and the offline report finds
the region (and its rounds) by the name the test gave it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "neuronperf#"
PRIME = "prime"
# What torch names a torch.compile'd graph's span: ``Torch-Compiled Region: 0/0``.
COMPILED_PREFIX = "Torch-Compiled Region"

_PATTERN = re.compile(rf"^{re.escape(PREFIX)}(\d+)(?:\.(\d+|{PRIME}))?(?: (.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Marker:
    seq: int
    round: int | None  # None: a ``with region()`` block, which runs once; or the prime round
    region: str
    prime: bool = False


def marker_name(seq: int, region: str, round: int | str | None = None) -> str:
    suffix = "" if round is None else f".{round}"
    return f"{PREFIX}{seq}{suffix} {region}"


def parse_marker(name: str) -> Marker | None:
    """The marker behind an annotation name, or None for any other annotation. Traces
    written before markers carried names read as region ``neuronperf#<seq>``."""
    if not name.startswith(PREFIX):
        return None
    m = _PATTERN.match(name)
    if m is None:
        return None
    seq = int(m.group(1))
    rnd = m.group(2)
    region = m.group(3) if m.group(3) is not None else f"{PREFIX}{seq}"
    if rnd == PRIME:
        return Marker(seq, None, region, prime=True)
    return Marker(seq, None if rnd is None else int(rnd), region)
