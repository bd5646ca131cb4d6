"""The fusion view's groups (reports/charts/fusion.py): declared variants (``variant_of``)
beat name prefixes, and each group says which rule made it. Real records of the RMSNorm
example (tests/data), renamed and declared here."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_neuronperf.model import Record
from pytest_neuronperf.reports import html
from pytest_neuronperf.reports.charts import fusion
from pytest_neuronperf.reports.json import load

DATA = Path(__file__).parent.parent / "data" / "report_v1_rmsnorm.json"


def _named(*pairs: tuple[str, str]) -> list[Record]:
    """Real records, one per (region, variant_of), each its own test (no per-test group)."""
    real = list(load(DATA).records)
    return [
        replace(
            r,
            measurement=replace(
                r.measurement, region=region, variant_of=variant_of, test_id=f"t.py::test_{j}"
            ),
        )
        for j, (r, (region, variant_of)) in enumerate(zip(real, pairs, strict=False))
    ]


def test_a_whole_model_declared_apart_leaves_its_layers_prefix_group() -> None:
    # Undeclared, the prefix rule puts a whole model beside one of its layers...
    undeclared = _named(("llama_fwd", ""), ("llama_block", ""))
    assert [g.why for g in fusion.groups(undeclared)] == ["grouped by name prefix 'llama'"]
    # ...a declaration takes the model out of it, and no group is left.
    assert fusion.groups(_named(("llama_fwd", "llama_model"), ("llama_block", ""))) == []


def test_declared_variants_group_across_names_and_say_why() -> None:
    records = _named(
        ("naive_attention", "attention"),
        ("sdpa", "attention"),
        ("rmsnorm_naive", ""),
        ("rmsnorm_fused", ""),
    )
    found = [
        (g.title, g.why, [r.measurement.region for r in g.members]) for g in fusion.groups(records)
    ]
    assert found == [
        ("attention", "grouped by variant_of='attention'", ["naive_attention", "sdpa"]),
        ("rmsnorm_*", "grouped by name prefix 'rmsnorm'", ["rmsnorm_naive", "rmsnorm_fused"]),
    ]


def test_a_declared_region_leaves_its_prefix_family() -> None:
    records = _named(("rmsnorm_naive", "norm"), ("rmsnorm_fused", ""), ("rmsnorm_x", ""))
    assert [(g.title, len(g.members)) for g in fusion.groups(records)] == [("rmsnorm_*", 2)]


def test_the_page_shows_the_rule_escaped() -> None:
    records = _named(("a_x", "<b>attn</b>"), ("b_y", "<b>attn</b>"))
    page = html.render(records)
    assert "grouped by variant_of=&#x27;&lt;b&gt;attn&lt;/b&gt;&#x27;" in page
    assert "<b>attn</b>" not in page
