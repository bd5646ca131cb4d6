"""The two sides of a file with git conflict markers, each as the text it would be had
the merge taken that side everywhere (a diff3 base section is dropped)."""

from __future__ import annotations

import re

_START = re.compile(r"^<{7}(?: |$)")
_BASE = re.compile(r"^\|{7}(?: |$)")
_MIDDLE = re.compile(r"^={7}$")
_END = re.compile(r"^>{7}(?: |$)")


def sides(text: str) -> tuple[str, str] | None:
    """(ours, theirs) of a text holding at least one whole conflict hunk; None when it has
    none or its markers are not in order (a hand-edited or truncated file)."""
    ours: list[str] = []
    theirs: list[str] = []
    state = "both"
    hunks = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if state == "both" and _START.match(bare):
            state = "ours"
        elif state == "ours" and _BASE.match(bare):
            state = "base"
        elif state in ("ours", "base") and _MIDDLE.match(bare):
            state = "theirs"
        elif state == "theirs" and _END.match(bare):
            state, hunks = "both", hunks + 1
        elif state in ("both", "ours"):
            ours.append(line)
            if state == "both":
                theirs.append(line)
        elif state == "theirs":
            theirs.append(line)
    if state != "both" or hunks == 0:
        return None
    return "".join(ours), "".join(theirs)
