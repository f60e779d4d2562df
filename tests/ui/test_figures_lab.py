"""Figure and table builders of the losslessness lab: traces, values, presets."""

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui import presets
from specdec_ui.losslessness import figures as losslessness_figures
from specdec_ui.losslessness import verdict as losslessness_verdict

P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
LABELS = ("A", "B", "C", "D", "E")


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


@pytest.fixture(scope="module")
def run():
    result = sc.simulate_rounds(P, Q, 3, 20_000, rng=np.random.default_rng(1))
    return result, sc.losslessness_test(result)


def test_overlap_area_is_alpha():
    fig = losslessness_figures.overlap_figure(P, Q, LABELS)
    names = [t.name for t in fig.data]
    assert names[:2] == ["target p", "draft q"]
    overlap = fig.data[2]
    np.testing.assert_allclose(overlap.y, np.minimum(P, Q))
    assert sum(overlap.y) == pytest.approx(sc.acceptance_rate(P, Q)) == pytest.approx(0.85)
    assert "0.850" in overlap.name and "0.850" in fig.layout.title.text
    np.testing.assert_allclose(_trace(fig, "target p").y, P)


def test_labels_are_escaped_for_plotly():
    fig = losslessness_figures.overlap_figure([0.5, 0.5], [0.5, 0.5], ("<b>x</b>", "a&b"))
    assert list(fig.data[0].x) == ["&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]


def test_token_histogram_values(run):
    result, _ = run
    fig = losslessness_figures.token_histogram_figure(result, LABELS)
    sim = _trace(fig, "simulated")
    counts = result.emitted_counts
    np.testing.assert_allclose(sim.y, counts / counts.sum())
    np.testing.assert_allclose(_trace(fig, "target p (lossless)").y, P)  # i.i.d. rows: p itself
    np.testing.assert_allclose(_trace(fig, "draft q").y, Q)
    np.testing.assert_allclose(sim.y, P, atol=0.01)  # lossless: close to p


def test_token_histogram_shows_the_bias_of_a_broken_variant():
    result = sc.simulate_rounds(
        P, Q, 3, 20_000, rng=np.random.default_rng(1), variant="accept_if_p_ge_q"
    )
    sim = _trace(losslessness_figures.token_histogram_figure(result, LABELS), "simulated")
    assert np.abs(np.array(sim.y) - P).max() > 0.03


def test_tokens_per_round_against_theory(run):
    result, _ = run
    fig = losslessness_figures.tokens_per_round_figure(result)
    sim, theory = _trace(fig, "simulated"), _trace(fig, "theory")
    assert list(sim.x) == [1, 2, 3, 4]
    assert sum(sim.y) == pytest.approx(1.0)
    alpha = 0.85
    np.testing.assert_allclose(
        theory.y, [1 - alpha, alpha * (1 - alpha), alpha**2 * (1 - alpha), alpha**3]
    )
    np.testing.assert_allclose(sim.y, theory.y, atol=0.015)


def test_tables_and_csv(run):
    result, report = run
    tokens = losslessness_figures.token_table(result, report, LABELS)
    assert list(tokens["token"]) == list(LABELS)
    assert tokens["emitted"].sum() == result.emitted_counts.sum()
    rounds = losslessness_figures.rounds_table(result)
    assert rounds["rounds"].sum() == 20_000
    assert rounds["expected rounds"].sum() == pytest.approx(20_000)
    settings = {"variant": "correct", "K": 3, "rounds simulated": 20_000, "seed": 1}
    csv = losslessness_verdict.results_csv_table(result, LABELS, None, settings)
    assert len(csv) == len(LABELS) + 4
    assert set(csv["table"]) == {"tokens", "tokens per round"}
    assert (csv["seed"] == 1).all() and (csv["variant"] == "correct").all()
    assert (csv["K"] == 3).all() and (csv["rounds simulated"] == 20_000).all()


def test_presets_are_valid_pairs_with_matching_labels():
    assert presets.DEFAULT_LAB_PRESET in presets.LAB_PRESETS
    alphas = {}
    for key, preset in presets.LAB_PRESETS.items():
        p = sc.parse_distribution(preset.p_text)
        q = sc.parse_distribution(preset.q_text, name="q")
        assert p.size == q.size == len(preset.labels), key
        alphas[key] = sc.acceptance_rate(p, q)
    assert alphas["000"] == pytest.approx(0.85)
    assert alphas["003-I"] == pytest.approx(0.5)
    assert alphas["close"] == pytest.approx(0.95)
    assert alphas["far"] == pytest.approx(0.2)
    assert alphas["equal"] == pytest.approx(1.0)


def test_default_run_fits_the_limits():
    assert presets.MIN_ROUNDS <= presets.DEFAULT_ROUNDS <= presets.MAX_ROUNDS_PAGE <= sc.MAX_ROUNDS
