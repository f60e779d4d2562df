"""Presenter view: the chart restyling (pure) and the switch's state rules (AppTest)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

import specdec_core as sc
from specdec_ui.kit.presenter import PRESENTER_CSS, PRESENTER_KEYS_JS, parse_present
from specdec_ui.kit.theme import PRESENTER_FONT_SIZE, PRESENTER_LINE_WIDTH, presenter_figure
from specdec_ui.losslessness import figures as losslessness_figures
from specdec_ui.round import figures as round_figures
from specdec_ui.speedup import figures as speedup_figures
from tests.contrast import contrast

P_000 = [0.40, 0.25, 0.20, 0.10, 0.05]
Q_000 = [0.30, 0.35, 0.15, 0.15, 0.05]
LABELS = ["A", "B", "C", "D", "E"]


def _figures() -> dict[str, go.Figure]:
    """One figure of each kind the pages draw (bars, lines, heatmap, chips, coin)."""
    result = sc.simulate_rounds(P_000, Q_000, 3, 2_000, rng=np.random.default_rng(0))
    return {
        "coin": round_figures.coin_figure(0.6, 0.3, title="coin"),
        "pq": round_figures.pq_figure(LABELS, P_000, Q_000, highlight=1, title="p and q"),
        "chips": round_figures.chips_figure(
            LABELS, [0, 1, 2], ["accepted", "rejected", "discarded"], []
        ),
        "speedup_k": speedup_figures.speedup_vs_k_figure(0.8, 0.05, 1.0, k_current=3, k_max=10),
        "heatmap": speedup_figures.speedup_heatmap_figure(0.05, 1.0),
        "timeline": speedup_figures.timeline_figure(3, c_q=1.0, c_p=4.0),
        "overlap": losslessness_figures.overlap_figure(P_000, Q_000, LABELS),
        "histogram": losslessness_figures.token_histogram_figure(result, LABELS),
    }


def _font_sizes(spec, path="") -> list[tuple[str, float]]:
    """Every explicit font size in a figure spec, with where it was found."""
    out = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "template":  # plotly's/Streamlit's defaults, overridden by the layout
                continue
            where = f"{path}.{key}"
            if key in ("font", "tickfont", "textfont") and isinstance(value, dict):
                out.append((where, value.get("size")))
            out += _font_sizes(value, where)
    elif isinstance(spec, list):
        for i, value in enumerate(spec):
            out += _font_sizes(value, f"{path}[{i}]")
    return out


def _axes(layout: dict) -> list[str]:
    return [k for k in layout if k.startswith(("xaxis", "yaxis"))]


@pytest.mark.parametrize("name", list(_figures()))
def test_every_chart_text_is_at_least_18_px_in_presenter_view(name):
    fig = _figures()[name]
    before = json.loads(fig.to_json())
    spec = json.loads(presenter_figure(fig, theme_type="dark").to_json())
    sizes = _font_sizes(spec)
    assert sizes, "no font found: the walk is broken"
    small = [(where, size) for where, size in sizes if not size or size < 18]
    assert not small, small
    layout = spec["layout"]
    for axis in _axes(layout):  # every axis draws its ticks and title at the presenter size
        assert layout[axis]["tickfont"]["size"] >= PRESENTER_FONT_SIZE
        assert layout[axis]["title"]["font"]["size"] >= PRESENTER_FONT_SIZE
    assert json.loads(fig.to_json()) == before  # pure: the page's figure is unchanged


def test_axes_the_layout_does_not_name_get_the_presenter_size_too():
    # Issue 33, item 5: the overlap chart names only its y axis; its x axis (the token
    # labels) took Streamlit's chart theme, 12.75 px, in presenter view.
    overlap = _figures()["overlap"]
    assert "tickfont" not in (overlap.to_plotly_json()["layout"].get("xaxis") or {})
    layout = json.loads(presenter_figure(overlap, theme_type="light").to_json())["layout"]
    assert layout["xaxis"]["tickfont"]["size"] >= PRESENTER_FONT_SIZE
    assert layout["xaxis"]["tickfont"]["color"] == "#000000"  # the ink, not the theme's grey
    two = go.Figure(
        [go.Bar(x=["a"], y=[1]), go.Bar(x=["b"], y=[2], xaxis="x2", yaxis="y3")],
        layout={"legend": {"title": {"text": "kind"}}},
    )
    layout = json.loads(presenter_figure(two, theme_type=None).to_json())["layout"]
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis3"):  # the traces' axes, named or not
        assert layout[axis]["tickfont"]["size"] >= PRESENTER_FONT_SIZE, axis
    assert layout["legend"]["title"]["font"]["size"] >= PRESENTER_FONT_SIZE


def test_the_pages_own_charts_are_smaller_than_that():
    # Proof the size check can fail: the normal view has text below 18 px (or unset).
    spec = json.loads(_figures()["coin"].to_json())
    assert any(not size or size < 18 for _, size in _font_sizes(spec))


def test_lines_get_thicker_and_marker_text_keeps_its_ink():
    spec = json.loads(presenter_figure(_figures()["speedup_k"], theme_type="dark").to_json())
    line = next(t for t in spec["data"] if t["name"] == "speedup")
    assert line["line"]["width"] >= PRESENTER_LINE_WIDTH
    chips = json.loads(presenter_figure(_figures()["chips"], theme_type="dark").to_json())
    # Chip text sits on a light fill: it stays black in dark mode.
    assert all(t["textfont"]["color"] == "#000000" for t in chips["data"])


def test_dark_theme_swaps_ink_that_would_vanish():
    coin = _figures()["coin"]
    dark = json.loads(presenter_figure(coin, theme_type="dark").to_json())
    light = json.loads(presenter_figure(coin, theme_type="light").to_json())
    u_dark = next(t for t in dark["data"] if t["type"] == "scatter")
    u_light = next(t for t in light["data"] if t["type"] == "scatter")
    # The coin's label "u = 0.3" sits on the page background, above the diamond: it sets no
    # colour of its own (issue 18: black vanished in dark mode), so it takes the ink.
    assert "color" not in u_light["textfont"] and "color" not in u_dark["textfont"]
    assert u_dark["marker"]["color"] == "#FFFFFF"
    assert dark["layout"]["font"]["color"] == "#FFFFFF"
    assert light["layout"]["font"]["color"] == "#000000"
    unknown = json.loads(presenter_figure(coin, theme_type=None).to_json())
    assert "color" not in unknown["layout"]["font"]  # Streamlit's theme ink is kept


@pytest.mark.parametrize(
    ("raw", "value"),
    [("1", True), ("true", True), (" On ", True), ("0", False), ("no", False)]
    + [(None, None), ("", None), ("2", None), ("<b>", None)],
)
def test_parse_present(raw, value):
    assert parse_present(raw) is value


def test_static_css_and_script_hold_no_format_fields():
    # Module constants, never formatted: no {placeholders}, no string concatenation at run time.
    for text in (PRESENTER_CSS, PRESENTER_KEYS_JS):
        assert "%s" not in text and "{0" not in text and "{}" not in text
    assert PRESENTER_CSS.startswith("<style>") and PRESENTER_CSS.endswith("</style>")
    assert "--specdec-presenter" in PRESENTER_CSS and "--specdec-presenter" in PRESENTER_KEYS_JS


def _switch_app():
    import streamlit as st

    from specdec_ui.kit import presenter

    on = presenter.presenter_toggle()
    presenter.sync_link()
    presenter.presenter_style()
    st.write("presenting" if on else "normal")


def _run(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_function(_switch_app, default_timeout=30)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def test_link_turns_presenter_view_on_and_the_toggle_off_removes_it():
    at = _run({"present": "1"})
    assert not at.exception
    assert at.markdown[0].value == "presenting"
    assert at.toggle(key="presenter_toggle").value is True
    at.toggle(key="presenter_toggle").set_value(False).run()
    assert at.markdown[0].value == "normal"
    assert "present" not in at.query_params
    at.toggle(key="presenter_toggle").set_value(True).run()
    assert at.markdown[0].value == "presenting"
    assert at.query_params["present"] == "1"


def test_normal_view_by_default_and_for_a_bad_value():
    for query in (None, {"present": "maybe"}):
        at = _run(query)
        assert not at.exception
        assert at.markdown[0].value == "normal"
        assert at.toggle(key="presenter_toggle").value is False


def test_shared_figures_outline_in_a_grey_that_reads_on_both_themes():
    # Issue 18: figures are shared by every session, whatever its theme; black vanished on
    # Streamlit's dark background (#0E1117), so outlines and marks on the page use OUTLINE.
    from specdec_ui.kit.theme import OUTLINE

    for background in ("#FFFFFF", "#0E1117"):
        assert contrast(OUTLINE, background) >= 4.0, background
    assert contrast("#000000", "#0E1117") < 1.5  # the old black: proof the check can fail
    pq = round_figures.pq_figure(LABELS, P_000, Q_000, highlight=1, title="p and q")
    outlined = [t for t in pq.data if max(t.marker.line.width) > 0]
    assert outlined and all(t.marker.line.color == OUTLINE for t in outlined)
    coin = next(t for t in _figures()["coin"].data if t.type == "scatter")
    assert coin.textfont.color is None  # the label takes the theme's text colour
