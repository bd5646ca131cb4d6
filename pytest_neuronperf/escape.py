"""Text from names (tests, regions, ops, kernels, devices, branches) made safe for where it
goes: a terminal, GitHub-flavoured Markdown, XML 1.0. A name is data; none of these may
read it as a command, markup, a link or a mention."""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, and the Unicode controls that reorder or hide text
# (bidirectional overrides and isolates, as in "trojan source").
_UNICODE_CONTROLS = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_TERMINAL = re.compile(f"[\x00-\x08\x0b-\x1f{_UNICODE_CONTROLS}]")  # all but \t and \n
_ANY_CONTROL = re.compile(f"[\x00-\x1f{_UNICODE_CONTROLS}]")
# What XML 1.0 allows: tab, newline, carriage return and everything from space on but
# the surrogates and U+FFFE, U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What can start markup inside a line: code, emphasis, links and images, HTML and
# autolinks, entities, strikethrough, math. An underscore inside a word cannot (x86_64).
_INLINE = re.compile(r"([\\`*\[\]<&~$])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What can start a block where a line starts: a heading, list, quote, rule or table.
_LEADING = re.compile(r"^(?:([-#>+=|])|(\d+)([.)])(?=\s|$))")
_ZWSP = "\u200b"


def terminal(text: str) -> str:
    """``text`` with every control character but newline and tab shown as its escape
    (``\\x1b``): an op name cannot retitle the window, clear the screen or move the cursor."""
    return _TERMINAL.sub(_escaped, text)


def _escaped(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def xml(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (most C0 controls, lone surrogates,
    U+FFFE/U+FFFF); the writer escapes ``<`` and ``&`` itself."""
    return _NOT_XML.sub("", text)


def _one_line(text: str) -> str:
    """Newlines as spaces, other control characters (``\\r`` included) removed."""
    return _ANY_CONTROL.sub("", text.replace("\r\n", " ").replace("\n", " "))


def md_text(text: str) -> str:
    """``text`` as literal GitHub-flavoured Markdown on one line: what could start markup
    backslash-escaped (no emphasis, link, HTML, entity, heading or list), ``@`` and ``#``
    kept from starting a mention or an issue reference, no bare URL."""
    line = _one_line(text)
    lead = _LEADING.match(line)
    prefix = ""
    if lead is not None and lead[1] and _INLINE.match(line) is None:
        prefix, line = "\\" + lead[1], line[1:]
    elif lead is not None and lead[2]:
        prefix, line = f"{lead[2]}\\{lead[3]}", line[lead.end() :]
    escaped = prefix + _INLINE.sub(lambda m: "\\" + m.group(), line)
    # GitHub finds mentions, references and URLs in the rendered text, after the escapes.
    escaped = escaped.replace("@", "@" + _ZWSP).replace("#", "#" + _ZWSP)
    return escaped.replace("://", ":" + _ZWSP + "//").replace("www", "ww" + _ZWSP + "w")


def md_code(text: str) -> str:
    """``text`` as a Markdown code span on one line: fenced by one backtick more than its
    longest run, padded where it starts or ends with a backtick or a space (CommonMark).
    Inside a table cell its pipes still need ``md_cell``."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_cell(markdown: str) -> str:
    """Markdown (already escaped) fit for a GFM table cell: a pipe would end the cell, even
    inside a code span; a newline would end the table."""
    return re.sub(r"(?<!\\)\|", r"\\|", _one_line(markdown))
