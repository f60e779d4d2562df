"""Speedup explorer: seed 003 Ex 8 by default, presets, sliders, links."""

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui import presets
from specdec_ui.kit.text import md_escape
from specdec_ui.speedup import figures as speedup_figures
from tests.app.conftest import figures, open_page
from tests.app.shown_tables import shown_table

PAGE = "pages/scripts/speedup.py"


def _optimum(at) -> str:
    return at.get_by_key("speed_optimum").children[0].value


def _table(at):
    return shown_table(at, "ms / token").value


def _trace(fig, name):
    return next(t for t in fig["data"] if t.get("name") == name)


def test_default_is_seed_003_ex8():
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    assert at.selectbox(key="speed_preset").value == "003-H"
    assert _optimum(at) == "Best K = 4 (speedup 1.85x)"
    table = _table(at)
    rows = {
        int(k): round(float(t), 2) for k, t in zip(table["K"], table["ms / token"], strict=True)
    }
    assert (rows[2], rows[4], rows[8]) == (22.83, 21.64, 25.01)
    assert min(rows, key=rows.get) == 4
    latex = " ".join(el.value for el in at.latex)
    assert "2.773" in latex and "1.849" in latex and "21.64" in latex
    assert len(figures(at)) == 4


def test_charts_mark_the_optimum_and_the_heatmap_grid():
    at = open_page(PAGE)
    by_title = {f["layout"]["title"]["text"]: f for f in figures(at)}
    vs_k = next(f for t, f in by_title.items() if t.startswith("Speedup versus K"))
    assert _trace(vs_k, "best K")["x"] == [4]
    heat = next(f for t, f in by_title.items() if t.startswith("Speedup over alpha and K"))
    z = np.asarray(_trace(heat, "speedup")["z"])
    # K from 1 to 16, the range a student uses (issue 18), not 1 to 64
    assert z.shape == (presets.SPEED_HEATMAP_K, speedup_figures.HEATMAP_ALPHAS)
    best = np.asarray(_trace(heat, "best K")["y"])
    np.testing.assert_array_equal(best, np.argmax(z, axis=0) + 1)
    alphas = np.asarray(_trace(heat, "speedup")["x"])
    j = int(np.argmin(np.abs(alphas - 0.7)))
    assert best[j] == 4
    vs_alpha = next(f for t, f in by_title.items() if t.startswith("Speedup versus alpha"))
    assert {"K = 1", "K = 2", "K = 4", "K = 8"} <= {t["name"] for t in vs_alpha["data"]}


@pytest.mark.parametrize("preset", list(presets.SPEED_PRESETS))
def test_every_preset_renders(preset):
    at = open_page(PAGE)
    at.selectbox(key="speed_preset").set_value(preset).run()
    assert not at.exception and not at.error
    chosen = presets.SPEED_PRESETS[preset]
    assert at.slider(key="speed_alpha").value == chosen.alpha
    assert at.slider(key="speed_k").value == chosen.k
    best = sc.optimal_k(chosen.alpha, chosen.c_q, chosen.c_p, k_max=presets.SPEED_K_MAX)
    assert _optimum(at).startswith(f"Best K = {best} ")
    if chosen.paper is not None:
        text = " ".join(s.value for s in at.success)
        assert f"expected speedup is {chosen.paper['expected']}x" in text
        assert f"measured one {chosen.paper['measured']}x" in text


def test_table4_first_row_formula_matches_paper():
    at = open_page(PAGE, {"preset": "table4-1"})
    assert not at.exception
    text = " ".join(s.value for s in at.success)
    assert "rounded 3.2x" in text and "expected speedup is 3.2x" in text
    assert at.number_input(key="speed_c_q").value == pytest.approx(2.0)
    assert at.number_input(key="speed_c_p").value == pytest.approx(100.0)


def test_ex7_free_draft_reaches_the_ceiling():
    at = open_page(PAGE, {"preset": "003-G"})
    assert not at.exception
    assert at.metric[3].value == "5.00x"  # speedup at K = 4: K + 1
    assert (
        _optimum(at) == f"Best K = {presets.SPEED_K_MAX} (speedup {presets.SPEED_K_MAX + 1:.2f}x)"
    )
    note = " ".join(c.value for c in at.get_by_key("speed_optimum").children.values())
    # beside the best K: 32 is the slider's maximum, and a free draft has no cap
    assert "largest K offered (the slider's maximum), not a true optimum" in note
    assert "grows without limit" in note
    assert at.metric[4].delta == "the slider's maximum"


def test_moving_a_slider_switches_to_custom_and_updates_everything():
    at = open_page(PAGE)
    at.slider(key="speed_alpha").set_value(0.9).run()
    assert not at.exception
    assert at.selectbox(key="speed_preset").value == "custom"
    best = sc.optimal_k(0.9, 5.0, 40.0, k_max=presets.SPEED_K_MAX)
    assert _optimum(at) == f"Best K = {best} (speedup {sc.speedup(0.9, best, 5.0, 40.0):.2f}x)"
    assert at.query_params["preset"] == "custom" and at.query_params["alpha"] == "0.9"
    at.slider(key="speed_k").set_value(best).run()
    assert int(best) in list(_table(at)["K"])


def test_link_reopens_custom_settings():
    at = open_page(PAGE, {"alpha": "0.6", "k": "3", "c_q": "2", "c_p": "20"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="speed_preset").value == "custom"
    assert at.slider(key="speed_k").value == 3
    best = sc.optimal_k(0.6, 2.0, 20.0, k_max=presets.SPEED_K_MAX)
    assert _optimum(at).startswith(f"Best K = {best} ")
    assert "?preset=custom&alpha=0.6&k=3&c_q=2&c_p=20" in at.code[0].value


@pytest.mark.parametrize(
    "query, bad",
    [
        ({"alpha": "1.5"}, "alpha"),
        ({"alpha": "nan"}, "alpha"),
        ({"k": "0"}, "k"),
        ({"k": "abc"}, "k"),
        ({"c_p": "0"}, "c_p"),
        ({"c_q": "-1"}, "c_q"),
        ({"c_q": "1e400"}, "c_q"),
        ({"c_p": "0.0015"}, "c_p"),  # finer than the field's step (issue 33)
        ({"preset": "<script>alert(1)</script>"}, "preset"),
        ({"alpha": "9" * 5000}, "alpha"),
    ],
)
def test_bad_links_warn_and_fall_back(query, bad):
    at = open_page(PAGE, query)
    assert not at.exception
    assert len(at.warning) == 1 and f"'{md_escape(bad)}'" in at.warning[0].value
    assert "<script>" not in at.warning[0].value
    assert _optimum(at) == "Best K = 4 (speedup 1.85x)"  # the defaults


def test_warning_is_shown_once_and_the_page_keeps_working():
    at = open_page(PAGE, {"k": "999"})
    assert len(at.warning) == 1
    at.run()
    assert not at.warning and not at.exception


def test_csv_download_and_source_expander():
    at = open_page(PAGE)
    assert len(at.get("download_button")) == 1
    sources = " ".join(c.value for c in at.code)
    assert "def expected_tokens" in sources and "def optimal_k" in sources


def test_cost_fields_step_on_the_grid_of_their_minimum():
    """Issue 33, item 6: the browser checks value - min against the step; with c_p's
    minimum 0.001 and a step of 1 every whole number read "invalid". Both minimums now lie
    on the step's grid, and a cost off that grid is refused in words, not taken."""
    at = open_page(PAGE)
    for key in ("speed_c_q", "speed_c_p"):
        field = at.number_input(key=key)
        step, low = field.proto.step, field.proto.min
        assert step == pytest.approx(0.001)
        for value in (low, 1.0, 40.0, 0.5, 12.345, presets.MAX_COST):
            assert abs((value - low) / step - round((value - low) / step)) < 1e-6, (key, value)
    at.number_input(key="speed_c_p").set_value(12.345).run()
    assert not at.exception and not at.error
    assert "12.345" in at.latex[1].value
    at.number_input(key="speed_c_p").set_value(0.0015).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        md_escape(
            "c_p: 0.0015 ms is finer than the field's step; type the time in steps of "
            "0.001 ms (one microsecond), e.g. 0.002."
        )
    ]
