"""Figure and table builders of the speedup explorer: traces, values, presets."""

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui import presets
from specdec_ui.speedup import figures as speedup_figures


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_time_table_reproduces_seed_003_ex8():
    table = speedup_figures.time_table(0.7, (8, 2, 4, 4), 5.0, 40.0)
    assert list(table["K"]) == [2, 4, 8]  # sorted, unique
    assert list(table["cost per round"]) == [50.0, 60.0, 80.0]
    np.testing.assert_allclose(table["E[tokens per round]"], [2.19, 2.7731, 3.1988], atol=5e-5)
    assert list(table["time per token"].round(2)) == [22.83, 21.64, 25.01]
    assert table.loc[table["time per token"].idxmin(), "K"] == 4
    assert round(float(table.loc[1, "speedup (x)"]), 2) == 1.85


def test_speedup_vs_k_marks_the_core_optimum():
    fig = speedup_figures.speedup_vs_k_figure(0.7, 5.0, 40.0, k_current=2, k_max=16)
    curve = _trace(fig, "speedup")
    assert list(curve.x) == list(range(1, 17))
    np.testing.assert_allclose(curve.y, sc.speedup(0.7, np.arange(1, 17), 5.0, 40.0))
    best = _trace(fig, "best K")
    assert list(best.x) == [4] and best.y[0] == pytest.approx(1.8487, abs=1e-4)
    assert list(_trace(fig, "your K").x) == [2]


def test_speedup_vs_k_without_current_k_has_no_marker():
    fig = speedup_figures.speedup_vs_k_figure(0.5, 1.0, 10.0, k_max=presets.SPEED_K_MAX)
    assert "your K" not in {t.name for t in fig.data}
    assert list(_trace(fig, "best K").x) == [
        sc.optimal_k(0.5, 1.0, 10.0, k_max=presets.SPEED_K_MAX)
    ]


def test_expected_tokens_curves_reach_their_ceiling_and_floor():
    fig = speedup_figures.expected_tokens_figure((1, 4), alpha_current=0.3, n=11)
    for k in (1, 4):
        curve = _trace(fig, f"K = {k}")
        assert curve.y[0] == pytest.approx(1.0)  # alpha = 0: only the resampled token
        assert curve.y[-1] == pytest.approx(k + 1)  # alpha = 1: all kept plus the bonus
        assert list(_trace(fig, f"ceiling K+1 = {k + 1}").y) == [k + 1, k + 1]
        assert _trace(fig, f"ceiling K+1 = {k + 1}").line.color == curve.line.color
    assert list(_trace(fig, "floor: 1 token").y) == [1, 1]


def test_speedup_vs_alpha_floor_and_ceiling():
    fig = speedup_figures.speedup_vs_alpha_figure(5.0, 40.0, (2, 8), n=21)
    for k in (2, 8):
        floor = 40.0 / (k * 5.0 + 40.0)
        curve = _trace(fig, f"K = {k}")
        assert curve.y[0] == pytest.approx(floor)
        assert curve.y[-1] == pytest.approx((k + 1) * floor)
        assert _trace(fig, f"floor K = {k}").y[0] == pytest.approx(floor)
        assert _trace(fig, f"ceiling K = {k}").y[0] == pytest.approx((k + 1) * floor)


def test_free_draft_ceiling_is_k_plus_one():
    """Seed 003 Ex 7: with c_q = 0 and alpha -> 1, the speedup is K + 1 = 5 at K = 4."""
    fig = speedup_figures.speedup_vs_alpha_figure(0.0, 10.0, (4,), n=5)
    assert _trace(fig, "K = 4").y[-1] == pytest.approx(5.0)
    assert _trace(fig, "floor K = 4").y[0] == pytest.approx(1.0)


def test_heatmap_grid_and_best_k_line():
    fig = speedup_figures.speedup_heatmap_figure(5.0, 40.0, n_alpha=200, k_max=64, current=(0.7, 4))
    heat = _trace(fig, "speedup")
    z = np.array(heat.z)
    assert z.shape == (64, 200)
    alphas = np.array(heat.x)
    j = int(np.argmin(np.abs(alphas - 0.7)))
    assert z[3, j] == pytest.approx(sc.speedup(alphas[j], 4, 5.0, 40.0))
    best = np.array(_trace(fig, "best K").y)
    np.testing.assert_array_equal(best, np.argmax(z, axis=0) + 1)
    assert list(_trace(fig, "you are here").x) == [0.7]


def test_published_table_matches_the_paper_within_rounding():
    table = speedup_figures.published_table()
    assert len(table) == len(sc.PUBLISHED_SPEEDUPS) == 12
    row1 = table.iloc[0]
    assert (row1["alpha"], row1["K"], row1["c"], row1["formula"]) == (0.75, 7, 0.02, 3.2)
    diffs = table["formula - paper expected"].abs()
    assert diffs.max() <= 0.1 + 1e-9
    assert 1 <= int((diffs > 0.05).sum()) <= 3  # the paper rounds from unrounded inputs


def test_presets_cover_the_seed_and_every_table4_row():
    assert presets.DEFAULT_SPEED_PRESET in presets.SPEED_PRESETS
    h = presets.SPEED_PRESETS["003-H"]
    assert (h.alpha, h.k, h.c_q, h.c_p, h.table_k) == (0.7, 4, 5.0, 40.0, (2, 4, 8))
    g = presets.SPEED_PRESETS["003-G"]
    assert (g.alpha, g.k, g.c_q) == (1.0, 4, 0.0)
    rows = [p for p in presets.SPEED_PRESETS.values() if p.paper is not None]
    assert len(rows) == 12
    for preset in rows:
        assert preset.c_q / preset.c_p == pytest.approx(preset.paper["c"])
        assert preset.k == preset.paper["k"] and preset.alpha == preset.paper["alpha"]


def test_k_colors_are_distinct():
    colors = speedup_figures.k_colors((1, 2, 4, 8))
    assert len(set(colors.values())) == 4
    assert len(speedup_figures.k_colors((3,))) == 1


@pytest.mark.parametrize("n_accepted, expected_tokens", [(None, 4), (1, 2), (0, 1)])
def test_timeline_counts_boxes(n_accepted, expected_tokens):
    fig = speedup_figures.timeline_figure(3, c_q=1.0, c_p=4.0, n_accepted=n_accepted)
    spec = [t for t in fig.data if t.y[0] == "speculative round"]
    plain = [t for t in fig.data if t.y[0] == "target alone"]
    assert len(spec) == 3 + 1  # three draft steps, one target pass
    assert len(plain) == expected_tokens  # the target alone needs one pass per token
    assert sum(t.x[0] for t in spec) == pytest.approx(3 * 1.0 + 4.0)


def test_timeline_rejects_bad_counts():
    with pytest.raises(sc.InvalidParameterError):
        speedup_figures.timeline_figure(3, n_accepted=4)
    with pytest.raises(sc.InvalidParameterError):
        speedup_figures.timeline_figure(0)
