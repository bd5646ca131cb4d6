"""Headless Chromium for the tests that check pictures are drawn: where elements landed
(a test-only copy of the page with a script that writes their page coordinates into the
title, read back with --dump-dom) and what colour the pixels there are (--screenshot).

The report itself has no script; only the probed copy does."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

WIDTH = 1280

# Writes {scrollWidth, clientWidth, scrollHeight, items: [...]} into document.title: each
# rendered element matching the selectors with its classes, data-status, fill and stroke, its box,
# and for lines and polylines their points, all in page pixels (through getScreenCTM).
_PROBE = """
<script>
(function () {
  var d = document.documentElement;
  var out = {scrollWidth: d.scrollWidth, clientWidth: d.clientWidth,
             scrollHeight: d.scrollHeight, items: []};
  function page(svgEl, x, y) {
    var p = svgEl.ownerSVGElement.createSVGPoint();
    p.x = x; p.y = y;
    var q = p.matrixTransform(svgEl.getScreenCTM());
    return [q.x + window.scrollX, q.y + window.scrollY];
  }
  document.querySelectorAll(%s).forEach(function (el) {
    // Not rendered: inside a closed <details> (laid out, but hidden).
    if (el.checkVisibility && !el.checkVisibility()) return;
    var r = el.getBoundingClientRect();
    var item = {cls: el.getAttribute('class') || el.tagName, tag: el.tagName, id: el.id,
                status: el.getAttribute('data-status'), label: el.getAttribute('data-label'),
                fill: el.getAttribute('fill'), stroke: el.getAttribute('stroke'),
                box: [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height],
                points: []};
    if (el.tagName === 'line') {
      item.points = [page(el, el.x1.baseVal.value, el.y1.baseVal.value),
                     page(el, el.x2.baseVal.value, el.y2.baseVal.value)];
    } else if (el.tagName === 'polyline') {
      for (var i = 0; i < el.points.numberOfItems; i++) {
        var p = el.points.getItem(i);
        item.points.push(page(el, p.x, p.y));
      }
    } else if (el.tagName === 'circle') {
      item.points = [page(el, el.cx.baseVal.value, el.cy.baseVal.value)];
    }
    out.items.push(item);
  });
  document.title = JSON.stringify(out);
})();
</script>
"""


def executable() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


# Skips on a developer's machine without chromium only: .ci/run fails when it cannot
# install it, so no browser test skips in CI.
skip_without = pytest.mark.skipif(
    executable() is None, reason="chromium is not installed (.ci/run installs it)"
)


def _run(args: list[str], tmp: Path) -> str:
    chromium = executable()
    assert chromium is not None
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--force-device-scale-factor=1",
            f"--user-data-dir={tmp / 'chromium-profile'}",
            *args,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, HOME=str(tmp)),
    )
    return done.stdout


@dataclass(frozen=True)
class Layout:
    scroll_width: int
    client_width: int
    scroll_height: int
    items: list[dict[str, Any]]

    def of(self, cls: str) -> list[dict[str, Any]]:
        return [i for i in self.items if cls in str(i["cls"]).split()]


def probe(page: Path, tmp: Path, selectors: str, *, height: int, hide_scrollbars: bool) -> Layout:
    probed = tmp / f"probed-{page.stem}.html"
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text  # the report itself stays script-free
    probed.write_text(text.replace("</body>", _PROBE % json.dumps(selectors) + "</body>"))
    args = [f"--window-size={WIDTH},{height}", "--dump-dom", probed.as_uri()]
    if hide_scrollbars:
        args.insert(0, "--hide-scrollbars")
    dom = _run(args, tmp)
    found = re.search(r"<title>(.*?)</title>", dom, re.DOTALL)
    assert found is not None, dom[:500]
    data = json.loads(html.unescape(found.group(1)))
    return Layout(data["scrollWidth"], data["clientWidth"], data["scrollHeight"], data["items"])


def screenshot(page: Path, tmp: Path, height: int) -> Any:
    shot = tmp / f"shot-{page.stem}.png"
    _run(
        [
            "--hide-scrollbars",
            f"--window-size={WIDTH},{height}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        tmp,
    )
    return Image.open(shot).convert("RGB")


def look(page: Path, tmp: Path, selectors: str) -> tuple[Layout, Layout, Any]:
    """The page at 1280 px as a reader sees it (scrollbars shown: the width check), then
    tall enough for all of it, scrollbars hidden: where each element is, and the pixels."""
    seen = probe(page, tmp, selectors, height=900, hide_scrollbars=False)
    tall = max(900, min(seen.scroll_height + 20, 12000))
    placed = probe(page, tmp, selectors, height=tall, hide_scrollbars=True)
    return seen, placed, screenshot(page, tmp, tall)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def colour_near(img: Any, x: float, y: float, want: str, radius: int = 2) -> bool:
    """Whether the exact colour ``want`` is on screen within ``radius`` px of (x, y)."""
    target = rgb(want)
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            px, py = round(x) + dx, round(y) + dy
            if 0 <= px < img.width and 0 <= py < img.height and img.getpixel((px, py)) == target:
                return True
    return False
