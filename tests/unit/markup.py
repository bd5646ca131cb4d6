"""What the Markdown tests share: names an attacker would choose, and the check that a
rendering (markdown-it-py, HTML on, tables) holds no element, link or mention from them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

# What an attacker names a region, a test, an op or a branch.
HOSTILE = (
    "@octocat",
    "#1",
    "<img src=x onerror=alert(1)>",
    "[link](http://evil.example)",
    "![pixel](http://evil.example/p.png)",
    "http://evil.example/x",
    "www.evil.example",
    "<https://evil.example>",
    "`code` ``` x `",
    "a|b",
    "x\r| injected | row |",
    "x\n\n# heading",
    "</details><details open>",
    "**bold** _em_ ~~s~~",
    "&amp; &#64;everyone",
    "\x1b]0;pwned\x07\x1b[2J",
    "<!-- hidden -->",
    "<script>alert(1)</script>",
    "\\",
    " x ",
    "- item",
    "> quote",
    "[ref]: http://evil.example",
    "\u202egnp.exe",
)
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]|(?<![\w&])#[0-9]|://|www\.")


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def walk(tokens: list[Token]) -> Iterator[Token]:
    for t in tokens:
        yield t
        yield from walk(t.children or [])


def shape(markdown: str) -> list[str]:
    """The element kinds of a rendering, runs of text as one: what the template made."""
    out: list[str] = []
    for t in walk(parser().parse(markdown)):
        kind = t.type if t.type not in ("text", "text_special") else "text"
        if kind == "inline" or (kind == "text" and out and out[-1] == "text"):
            continue
        out.append(kind if kind not in ("html_inline", "html_block") else f"{kind}:{t.content}")
    return out


def assert_inert(markdown: str, benign: str) -> None:
    """``markdown`` has the elements of ``benign`` (the same template with plain names)
    and no mention, reference or URL in its text."""
    assert shape(markdown) == shape(benign)
    for t in walk(parser().parse(markdown)):
        if t.type == "text":
            assert MENTION.search(t.content) is None, t.content
