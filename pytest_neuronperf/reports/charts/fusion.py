"""The fusion view: regions that are variants of one computation, side by side.

Variants are regions whose names share a prefix (``rmsnorm_naive`` / ``_fused`` /
``_compiled``: the name up to its last ``_``, ``.``, ``-`` or ``/``) or the regions one test
measured. Each group draws device µs and host µs (median, quartiles as a whisker) and ops
per row, and against the fastest variant on the time the gate judges, whether each is
slower outside the noise (bootstrap interval of the ratio of medians, stats.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from ...model import Measurement, Record
from ...names import elide
from ...stats import MIN_ROUNDS, Stats, quantile, ratio_interval
from ...words import counted
from ..status import colour, gated_metric, status_of
from . import svg

# An op count that moved against the baseline: (fewer, more).
CHANGED = (svg.BETTER, svg.WORSE)
LABEL_W, PANEL_W, RANK_W, ROW_H, HEAD_H = 330, 230, 170, 22, 22
_SEPARATORS = re.compile(r"[_.\-/]")


@dataclass(frozen=True)
class Group:
    title: str
    why: str
    members: tuple[Record, ...]


@dataclass(frozen=True)
class Rank:
    """A variant against the fastest of its group on the gated time."""

    ratio: float  # its median over the fastest's
    low: float | None  # the interval's low end; None: too few rounds to judge

    @property
    def text(self) -> str:
        if self.ratio <= 1.0:
            return "fastest"
        if self.low is None:
            return f"×{self.ratio:.2f} (unjudged)"
        return f"×{self.ratio:.2f} " + ("slower" if self.low > 1 else "(within noise)")


def family(region: str) -> str:
    """``rmsnorm_naive`` -> ``rmsnorm``; a name without a separator is its own family."""
    cuts = [m.start() for m in _SEPARATORS.finditer(region)]
    return region[: cuts[-1]] if cuts and cuts[-1] > 0 else region


def groups(records: Sequence[Record]) -> list[Group]:
    """Declared variants (``variant_of``) first; the name prefix groups only the rest."""
    declared: dict[str, list[Record]] = {}
    by_family: dict[str, list[Record]] = {}
    for r in records:
        if r.measurement.variant_of:
            declared.setdefault(r.measurement.variant_of, []).append(r)
        else:
            by_family.setdefault(family(r.measurement.region), []).append(r)
    out: list[Group] = []
    covered: list[set[int]] = []
    for title, found, why in (
        ("{}", declared, "grouped by variant_of={!r}"),
        ("{}_*", by_family, "grouped by name prefix {!r}"),
    ):
        for name, members in found.items():
            if len({r.measurement.region for r in members}) < 2:
                continue
            out.append(Group(title.format(name), why.format(name), tuple(members)))
            covered.append({id(r) for r in members})
    by_test: dict[str, list[Record]] = {}
    for r in records:
        by_test.setdefault(r.measurement.test_id, []).append(r)
    for test_id, members in by_test.items():
        if len({r.measurement.region for r in members}) < 2:
            continue
        if any({id(r) for r in members} <= c for c in covered):
            continue  # already side by side in a family
        out.append(Group(test_id, "regions of one test", tuple(members)))
    return out


def gated(group: Group) -> tuple[str, Callable[[Measurement], Stats]]:
    """The name and getter of the time the gate judges for this group's backend."""
    if gated_metric(group.members[0]) == "host_us":
        return "host µs", lambda m: m.host_us
    return "device µs", lambda m: m.device_us


def ranks(group: Group) -> list[Rank]:
    _, times = gated(group)
    stats = [times(r.measurement) for r in group.members]
    fastest = min(stats, key=lambda s: s.median)
    return [_rank(fastest, s) for s in stats]


def _rank(fast: Stats, slow: Stats) -> Rank:
    if slow is fast or slow.median <= fast.median:
        return Rank(1.0, None)
    if fast.median <= 0:
        return Rank(float("inf"), None)
    if fast.n < MIN_ROUNDS or slow.n < MIN_ROUNDS:
        return Rank(slow.median / fast.median, None)
    ratio, low, _ = ratio_interval(fast.samples, slow.samples)
    return Rank(ratio, low)


def labels(members: Sequence[Record]) -> list[str]:
    regions = [r.measurement.region for r in members]
    out = []
    for r in members:
        m = r.measurement
        label = m.region
        if regions.count(m.region) > 1:
            # The same region from two tests: the test tells the rows apart.
            label += " · " + m.test_id.rsplit("::", 1)[-1]
        out.append(elide(label, 46))
    return out


def verdict(group: Group) -> str:
    """One line of HTML: which variant is fastest on the gated time, which has fewest ops."""
    what, times = gated(group)
    names = labels(group.members)
    rs = ranks(group)
    best = next(j for j, r in enumerate(rs) if r.ratio <= 1.0)
    rows = [r.measurement for r in group.members]
    fewest = min(m.ops for m in rows)
    lean = ", ".join(escape(names[j]) for j, m in enumerate(rows) if m.ops == fewest)
    return (
        f"Fastest on {what} (the time the gate judges here): "
        f"<b>{escape(names[best])}</b>, {times(rows[best]).median:,.1f} µs. "
        f"Fewest ops ({fewest}): {lean}."
    )


def _quartiles(s: Stats) -> tuple[float, float]:
    v = sorted(s.samples)
    return (quantile(v, 0.25), quantile(v, 0.75)) if v else (0.0, 0.0)


def _time_panel(
    rows: Sequence[Record],
    x0: float,
    head: str,
    fill: str,
    get: Callable[[Measurement], Stats],
    cls: str,
    names: Sequence[str],
) -> list[str]:
    body = [svg.text(x0, 14, head, fill=svg.AXIS, font_weight="bold")]
    stats = [get(r.measurement) for r in rows]
    peak = max([_quartiles(s)[1] for s in stats] + [s.median for s in stats] + [1e-9])
    scale = svg.LinearScale(0.0, peak, x0, x0 + PANEL_W - 64)
    best = min(range(len(rows)), key=lambda j: stats[j].median)
    for j, s in enumerate(stats):
        y = HEAD_H + j * ROW_H
        w = max(1.0, scale(s.median) - x0)
        body.append(
            svg.el(
                "rect",
                svg.title(f"{names[j]}: {head} median {s.median:,.1f} over {s.n} rounds"),
                class_=cls,
                x=x0,
                y=y + 3,
                width=w,
                height=ROW_H - 8,
                fill=fill,
            )
        )
        q1, q3 = _quartiles(s)
        end = x0 + w
        if s.n > 1 and q3 > q1:
            cy = y + 3 + (ROW_H - 8) / 2
            body.append(
                svg.el(
                    "line",
                    x1=scale(q1),
                    y1=cy,
                    x2=scale(q3),
                    y2=cy,
                    stroke=svg.INK,
                    stroke_width=1.5,
                )
            )
            end = max(end, scale(q3))
        weight = "bold" if j == best and len(rows) > 1 else None
        body.append(svg.text(end + 4, y + ROW_H - 8, f"{s.median:,.1f}", font_weight=weight))
    return body


def chart(group: Group, was: Mapping[tuple[str, str], int] | None = None) -> str:
    """``was``: the baseline's op count per (test id, region), shown where it changed."""
    rows = group.members
    names = labels(rows)
    width = LABEL_W + 3 * PANEL_W + RANK_W
    height = HEAD_H + ROW_H * len(rows) + 6
    body: list[str] = []
    body += _time_panel(
        rows, LABEL_W, "device µs", svg.DEVICE, lambda m: m.device_us, "fusion-device", names
    )
    body += _time_panel(
        rows, LABEL_W + PANEL_W, "host µs", svg.HOST, lambda m: m.host_us, "fusion-host", names
    )
    body += _ops_panel(rows, LABEL_W + 2 * PANEL_W, names, was or {})
    body += _rank_panel(group, LABEL_W + 3 * PANEL_W)
    body += _row_labels(rows, names)
    return svg.svg(width, height, body, f"fusion view {group.title}", class_="fusion")


def _ops_panel(
    rows: Sequence[Record], x0: float, names: Sequence[str], was: Mapping[tuple[str, str], int]
) -> list[str]:
    """Ops per row as bars, with kernels, and the baseline's count where it moved."""
    body = [svg.text(x0, 14, "ops (kernels)", fill=svg.AXIS, font_weight="bold")]
    most = max([r.measurement.ops for r in rows] + [1])
    scale = svg.LinearScale(0.0, float(most), x0, x0 + PANEL_W - 110)
    for j, r in enumerate(rows):
        m = r.measurement
        y = HEAD_H + j * ROW_H
        w = max(1.0, scale(float(m.ops)) - x0)
        body.append(
            svg.el(
                "rect",
                svg.title(f"{names[j]}: {counted(m.ops, 'op')}, {counted(m.kernels, 'kernel')}"),
                class_="fusion-ops",
                x=x0,
                y=y + 3,
                width=w,
                height=ROW_H - 8,
                fill=svg.SLATE,
            )
        )
        before = was.get((m.test_id, m.region), m.ops)
        label = f"{m.ops} ({m.kernels})" + (f", was {before}" if before != m.ops else "")
        body.append(
            svg.text(
                x0 + w + 4,
                y + ROW_H - 8,
                label,
                fill=None if before == m.ops else CHANGED[before < m.ops],
                font_weight=None if before == m.ops else "bold",
                class_="fusion-ops-label",
            )
        )
    return body


def _rank_panel(group: Group, x0: float) -> list[str]:
    """Each row against the fastest variant on the gated time."""
    what, _ = gated(group)
    body = [svg.text(x0, 14, f"vs fastest, {what}", fill=svg.AXIS, font_weight="bold")]
    for j, rank in enumerate(ranks(group)):
        fastest = rank.ratio <= 1.0
        body.append(
            svg.text(
                x0,
                HEAD_H + j * ROW_H + ROW_H - 8,
                rank.text,
                fill=svg.BETTER if fastest else svg.INK,
                font_weight="bold" if fastest else None,
                class_="fusion-rank",
            )
        )
    return body


def _row_labels(rows: Sequence[Record], names: Sequence[str]) -> list[str]:
    """Each row's status dot and name, the full test id and region on hover."""
    body: list[str] = []
    for j, r in enumerate(rows):
        y = HEAD_H + j * ROW_H
        status = status_of(r)
        body.append(
            svg.el(
                "circle",
                svg.title(status),
                class_="fusion-status",
                data_status=status,
                cx=8,
                cy=y + ROW_H / 2 - 1,
                r=5,
                fill=colour(status),
            )
        )
        full = f"{r.measurement.test_id} [{r.measurement.region}]"
        body.append(
            svg.el("text", escape(names[j]) + svg.title(full), x=20, y=y + ROW_H - 8, font_size=12)
        )
    return body
