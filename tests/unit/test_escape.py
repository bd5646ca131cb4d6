"""Names made safe for where they go (issue 24 items 9-11): a terminal, GitHub-flavoured
Markdown rendered by markdown-it-py (HTML on, tables), XML 1.0 parsed by ElementTree."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from markup import HOSTILE, assert_inert, parser, walk

from pytest_neuronperf.escape import md_cell, md_code, md_text, terminal, xml


@pytest.mark.parametrize("payload", HOSTILE)
def test_md_text_renders_as_its_text_and_nothing_else(payload: str) -> None:
    template = "## {0}\n\n{0} and more\n\n| a | b |\n|---|---|\n| {1} | {2} |\n"
    hostile = template.format(
        md_text(payload), md_cell(md_text(payload)), md_cell(md_code(payload))
    )
    assert_inert(hostile, template.format("x", "x", "`x`"))
    html = parser().render(hostile)
    assert "<img" not in html and "<script" not in html and "<a " not in html


@pytest.mark.parametrize("payload", HOSTILE)
def test_md_code_keeps_the_text_in_one_code_span(payload: str) -> None:
    tokens = list(walk(parser().parse(f"- {md_code(payload)}\n")))
    spans = [t for t in tokens if t.type == "code_inline"]
    assert len(spans) == 1
    bare = re.sub(r"[\x00-\x1f\u202e]", "", payload.replace("\n", " "))
    assert spans[0].content.strip() == bare.strip() or not bare.strip()


def test_terminal_shows_control_characters_as_escapes() -> None:
    shown = terminal("relu\x1b]0;pwned\x07\x1b[2J\r\u202e\x9b\tx\ny")
    assert shown == "relu\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u202e\\x9b\tx\ny"
    assert terminal("aten::mm µs ×2") == "aten::mm µs ×2"


def test_xml_drops_what_xml_1_0_forbids() -> None:
    text = "r\x00\x01\x1b\x0b\x0c\ufffe\uffff\ud800 ok\t\n\u00e9\U0001f600"
    element = ET.Element("property", name=xml(text), value=xml(text))
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("name") == "r ok\t\n\u00e9\U0001f600"
