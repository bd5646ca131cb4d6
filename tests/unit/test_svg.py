"""The SVG building blocks: scales, ticks, elision and label placement."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

import pytest

from pytest_neuronperf.reports.charts import svg


def test_log_scale_puts_each_decade_the_same_distance_apart() -> None:
    scale = svg.LogScale(0.01, 100.0, 70.0, 470.0)
    assert scale(0.01) == pytest.approx(70.0) and scale(100.0) == pytest.approx(470.0)
    # Four decades over 400 px: 100 px each, whatever the decade.
    for v in (0.01, 0.1, 1.0, 10.0):
        assert scale(v * 10) - scale(v) == pytest.approx(100.0)
    assert scale(math.sqrt(10)) == pytest.approx(scale(1.0) + 50.0)
    assert scale.ticks() == [0.01, 0.1, 1.0, 10.0, 100.0]


def test_a_y_log_scale_runs_upwards() -> None:
    scale = svg.LogScale(1e6, 1e12, 400.0, 10.0)
    assert scale(1e6) == 400.0 and scale(1e12) == pytest.approx(10.0)
    assert scale(1e9) == pytest.approx(205.0)


def test_decades_enclose_the_values_with_room() -> None:
    assert svg.decades([0.142, 0.485, 11.9], pad=3.0) == (0.01, 100.0)
    assert svg.decades([2.7e9, 1.8e11], pad=3.0) == (1e8, 1e12)
    # Zero and negative values cannot sit on a log axis: they are left out.
    assert svg.decades([0.0, -1.0, 5.0], pad=1.0) == (1.0, 10.0)
    assert svg.decades([]) == (1.0, 10.0)


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert svg.nice_ticks(0, 40, 4) == [0, 10, 20, 30, 40]
    assert svg.nice_ticks(0, 1.3, 4) == [0, 0.5, 1.0]
    lo, hi = svg.nice_range([15.1, 19.7], include_zero=True)
    assert lo == 0 and hi >= 19.7 and hi == 20
    lo, hi = svg.nice_range([5.0, 5.0])
    assert lo < 5.0 < hi


def test_labels_never_overlap_while_there_is_room() -> None:
    labels = svg.Labels(800.0, 400.0)
    boxes = []
    for i in range(12):
        x, y, anchor = labels.place(400.0, 200.0, f"region_{i}")
        w = len(f"region_{i}") * svg.CHAR_W
        left = x if anchor == "start" else x - w
        boxes.append((left, y - svg.FONT, left + w, y + 2))
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_elements_escape_what_they_are_given_and_parse_as_xml() -> None:
    doc = svg.svg(
        100,
        50,
        [svg.text(1, 2, "a < b & 'c'"), svg.el("circle", svg.title("x<y"), cx=1.0, cy=2, r=3)],
        'label "q"',
    )
    root = ET.fromstring(doc)
    assert root.get("width") == "100" and root.get("aria-label") == 'label "q"'
    ns = "{http://www.w3.org/2000/svg}"
    assert next(root.iter(f"{ns}text")).text == "a < b & 'c'"
    circle = next(root.iter(f"{ns}circle"))
    assert circle.get("cx") == "1.0" and circle.get("cy") == "2"


def test_si_prefixes() -> None:
    assert svg.si(1.5e9, "FLOP/s") == "1.5 GFLOP/s"
    assert svg.si(0.01) == "10 m"
    assert svg.si(100.0) == "100"
    assert svg.si(0.0, "B") == "0 B"
