"""Issue 28, item 2 in AppTest: on every page every chart reaches the browser with its text
alternative, the summary its builder wrote (``alt``: the chart's accessible name) and its
numbers as a table in the expander under it."""

from __future__ import annotations

import re

import pytest

from specdec_ui.kit.presenter import DATA_LABEL
from specdec_ui.registry import available_pages

from .conftest import figures, open_page

GENERIC = "A chart of"  # the words chart_text falls back on when a builder wrote none


def _plain(label: str) -> str:
    return re.sub(r"\*\*|\\", "", label)


@pytest.mark.parametrize("page", available_pages(), ids=lambda p: p.url_path or "home")
def test_every_chart_has_its_summary_and_its_table(page):
    at = open_page("app.py" if page.is_home else page.path)
    assert not at.exception
    charts = at.get("plotly_chart")
    no_chart = ("Self_test", "Teach_with_it", "Class")  # a class draws once it has answers
    assert charts or page.url_path in no_chart, f"{page.title}: no chart drawn"
    for chart, spec in zip(charts, figures(at), strict=True):
        alt = chart.proto.alt
        assert len(alt) > 30, (page.title, alt)
        summary = (
            spec["layout"]["meta"]["text_alternative"]["summary"]
            if ("text_alternative" in (spec["layout"].get("meta") or {}))
            else ""
        )
        assert alt.startswith(
            summary.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        )
    tables = [e for e in at.get("expander") if _plain(e.proto.label) == DATA_LABEL]
    assert len(tables) == len(charts), (page.title, len(tables), len(charts))
    for box in tables:
        assert box.get("table"), f"{page.title}: a data expander without its table"


def test_the_round_pages_charts_carry_their_builders_own_words():
    at = open_page("pages/scripts/round.py")
    alts = [c.proto.alt for c in at.get("plotly_chart")]
    assert all(GENERIC not in alt for alt in alts), alts
    assert any("p (target): A 0.4" in alt for alt in alts), alts
