"""Figure and table builders of the Variants lab: traces, values, presets."""

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core import variants_tree as vt
from specdec_ui.losslessness import verdict as losslessness_verdict
from specdec_ui.presets import VARIANT_PRESETS
from specdec_ui.variants import figures as variants_figures
from specdec_ui.variants import table as variants_table

P3 = np.array([0.5, 0.3, 0.2])
Q3 = np.array([0.2, 0.2, 0.6])


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_presets_make_their_points():
    rescue = VARIANT_PRESETS["rescue"]
    p, q = sc.parse_distribution(rescue.p_text), sc.parse_distribution(rescue.q_text)
    beta = vr.multidraft_acceptance(p, q, np.array([1, 2]))
    np.testing.assert_allclose(beta, [0.5, 0.675])  # the numbers the lesson quotes
    disjoint = VARIANT_PRESETS["disjoint"]
    p, q = sc.parse_distribution(disjoint.p_text), sc.parse_distribution(disjoint.q_text)
    np.testing.assert_allclose(vr.multidraft_acceptance(p, q, np.arange(1, 9)), 0.6)
    flat = VARIANT_PRESETS["typical-flat"]
    p, q = sc.parse_distribution(flat.p_text), sc.parse_distribution(flat.q_text)
    e = sc.emitted_distribution("typical_acceptance", p, q)
    assert vr.total_variation(e, p) == pytest.approx(0.4)
    assert vr.typical_threshold(p) == pytest.approx(0.06)
    for preset in VARIANT_PRESETS.values():
        assert len(preset.labels) == sc.parse_distribution(preset.p_text).size
        assert preset.variant in variants_table.VARIANTS


def test_residual_chain_shows_each_target_and_the_candidates():
    step = vr.multidraft_step([0.7, 0.3, 0, 0], [0.25] * 4, [2, 0], uniforms=[0.1, 0.99])
    assert variants_table.chain_decisions(step) == 2  # C rejected, A kept: no final sample
    first = variants_figures.residual_chain_figure(step, 0, "ABCD")
    assert [t.name for t in first.data][:2] == ["p_1 (target)", "draft q"]
    assert "rejected" in first.layout.title.text
    second = variants_figures.residual_chain_figure(step, 1, "ABCD")
    np.testing.assert_allclose(_trace(second, "p_2 (residual)").y, [0.9, 0.1, 0, 0])
    assert _trace(second, "p_2 (residual)").opacity == 1.0
    assert _trace(second, "p_1 (target)").opacity < 1.0
    assert "kept" in second.layout.title.text
    lines = variants_table.chain_lines(step, 1, "ABCD")
    assert "residual p_2" in lines[1] and lines[-1].endswith("kept.")


def test_all_rejected_has_a_final_decision():
    step = vr.multidraft_step(P3, Q3, [2], uniforms=[0.9], final_token=0)
    assert variants_table.chain_decisions(step) == 2
    assert (
        "sample of p_2 gives A"
        in variants_figures.residual_chain_figure(step, 1, "ABC").layout.title.text
    )


def test_tree_figure_colours_the_walk():
    tree = vt.DraftTree(parents=(-1, -1, 1), tokens=(2, 0, 1))
    result = vt.verify_tree(P3, Q3, tree, uniforms=[0.5, 0.9, 0.9, 0.6])
    start = variants_figures.tree_figure(result, 0, "ABC")
    assert _trace(start, "… not checked yet").x.__len__() == 3
    end = variants_figures.tree_figure(result, len(result.node_steps), "ABC")
    assert len(_trace(end, "✓ kept").x) == 2  # the path: A, then B
    assert len(_trace(end, "✗ rejected").x) == 1  # C at depth 1
    bonus = _trace(end, "★ bonus token")
    assert bonus.text[-1] == "B" and bonus.x == (2, 3)  # from the leaf at depth 2, beside it
    assert end.layout.title.text == "3 tokens emitted: A, B, B (bonus)"
    assert any("bonus" in line for line in variants_table.tree_lines(result, 2, "ABC"))


def test_a_resample_after_rejected_children_is_drawn_right_of_every_node():
    """Issue 25: the resampled token of a walk that stopped at depth 1 (its children all
    rejected) was drawn on top of those children, at depth 2."""
    tree = vt.DraftTree(parents=(-1, 0, 0), tokens=(0, 2, 2))
    result = vt.verify_tree(P3, Q3, tree, uniforms=[0.1, 0.99, 0.99, 0.5])
    assert result.final_kind == "resample" and len(result.path) == 1
    fig = variants_figures.tree_figure(result, len(result.node_steps), "ABC")
    star = _trace(fig, "↻ resampled token")
    nodes = [x for t in fig.data if t.name not in ("edges", star.name) for x in t.x]
    assert star.x[-1] == tree.max_depth + 1 > max(nodes)
    assert fig.layout.height >= variants_figures.MIN_TREE_HEIGHT


def test_typical_figure_marks_the_threshold():
    fig = variants_figures.typical_figure([0.9, 0.05, 0.03, 0.02], [0.25] * 4, 1, 0.09, 0.3, "ABCD")
    line = [t for t in fig.data if t.name.startswith("threshold")][0]
    assert line.y == (pytest.approx(0.09), pytest.approx(0.09))
    bars = fig.data[0]
    assert list(bars.marker.color).count(variants_figures.COLORS["accepted"]) == 1  # only A passes


def test_onehot_figure_shows_equal_rules():
    fig = variants_figures.onehot_figure(
        vr.onehot_general_rule(P3, 1), vr.onehot_match_rule(P3, 1), "ABC"
    )
    np.testing.assert_allclose(fig.data[0].y, fig.data[1].y)
    np.testing.assert_allclose(fig.data[0].y, [0.5 / 0.7, 0, 0.2 / 0.7])
    assert fig.data[2].y == (pytest.approx(0.3), pytest.approx(0.3))


def test_candidates_and_tree_width_charts():
    fig = variants_figures.candidates_figure(P3, Q3, 2, 3)
    tokens = _trace(fig, "E[tokens per round], K = 2")
    np.testing.assert_allclose(tokens.y, vr.multidraft_expected_tokens(P3, Q3, 2, np.arange(1, 9)))
    assert tokens.y[0] == pytest.approx(1 + 0.6 + 0.36)
    # issue 25: beta_m has its own panel below (0..1), not a second axis over the same one
    top, bottom = fig.layout.yaxis.domain, fig.layout.yaxis2.domain
    assert bottom[1] < top[0] and fig.layout.yaxis2.overlaying is None
    assert list(fig.layout.yaxis2.tickvals) == [0, 0.5, 1]
    width = variants_figures.tree_width_figure(P3, Q3, 2, 2)
    tree = _trace(width, "tree of depth 2")
    assert tree.y[1] == pytest.approx(2.3376)
    assert list(tree.customdata) == [2, 6, 12, 20]
    chain = _trace(width, "chain with as many drafted tokens")
    assert chain.y[1] == pytest.approx((1 - 0.6**7) / 0.4)


def _inputs(variant, **changes) -> variants_table.Inputs:
    values = dict(
        variant=variant, p_target=np.array(P3), q_draft=np.array(Q3), labels=("A", "B", "C"),
        m=2, widths=None, token=0, k=4, epsilon=0.09, delta=0.3, broken=False, seed=0,
        rounds=1000,
    )  # fmt: skip
    return variants_table.Inputs(**{**values, **changes})


def test_simulation_and_expected_tokens_of_a_tree_and_a_one_hot_draft():
    tree = _inputs("tree", widths=(3, 1), k=5)
    assert variants_table.simulation(tree) == variants_table.Simulation(
        "tree", 2, {"branching": (3, 1)}
    )
    assert variants_table.simulation(_inputs("deterministic")).variant == "deterministic"
    broken = _inputs("multi_draft", broken=True)
    assert variants_table.simulation(broken) == variants_table.Simulation(
        "multi_draft_no_residual", 4, {"n_candidates": 2}
    )
    ours, basic, drafted = variants_table.expected(_inputs("tree", widths=(2, 2)))
    assert (ours, drafted) == (pytest.approx(2.3376), 6)
    assert basic == pytest.approx((1 - 0.6**7) / 0.4)


def test_csv_table_has_tokens_rounds_and_settings():
    result = sc.simulate_rounds(
        P3, Q3, 2, 5000, rng=np.random.default_rng(0), variant="multi_draft", n_candidates=2
    )
    frame = losslessness_verdict.results_csv_table(
        result, "ABC", P3, {"variant": "multi_draft", "seed": 0}
    )
    assert list(frame["table"]).count("tokens") == 3
    assert list(frame["table"]).count("tokens per round") == 3
    assert frame["observed"][:3].sum() == result.emitted_counts.sum()
    assert set(frame["variant"]) == {"multi_draft"}


def test_labels_are_escaped_for_plotly():
    step = vr.multidraft_step([0.5, 0.5], [0.5, 0.5], [0], uniforms=[0.1])
    fig = variants_figures.residual_chain_figure(step, 0, ("<b>x</b>", "a&b"))
    assert list(fig.data[0].x) == ["&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]
    assert losslessness_verdict.p_value_text(0.0) == "< 1e-300"
