"""Issue 33, items 2 and 19 (AppTest proofs; the Serving lab's questions, item 1, are in
tests/app/test_page_serving.py).

2. The Losslessness lab's question 2 with "Bug: resample from p": the answer's numbers are
   those of the chart, which counts every emitted token (the bonus tokens, from p, too),
   and it says what a drafted position alone emits.
19. The Model pair lab's measured speedup names its pair, not the Serving lab's ◆ one.
"""

from __future__ import annotations

import numpy as np
import pytest

import specdec_core as sc
import specdec_core.lm as lm
from specdec_ui import page_questions
from specdec_ui.losslessness import figures as lab_figures
from specdec_ui.model_pairs import work as model_pairs_work
from specdec_ui.presets import DEFAULT_K, DEFAULT_ROUNDS, LAB_PRESETS
from specdec_ui.runtime import shared_work
from tests.app.conftest import open_page
from tests.model_pair_fakes import fake_speed, hold_speed
from tests.ui.waiting import wait_until

LAB = "pages/scripts/losslessness.py"
MODEL_PAIRS = "pages/scripts/model_pairs.py"
PRESET = LAB_PRESETS["000"]
P = np.array(sc.parse_distribution(PRESET.p_text))
Q = np.array(sc.parse_distribution(PRESET.q_text))


def _bug_question() -> page_questions.Question:
    return page_questions.questions_for(LAB)[1]


def _chart_law() -> np.ndarray:
    """The share of each token among all emitted tokens, position by position: position j
    (0..K-1) is reached in alpha^j of the rounds and emits the rule's law there; the bonus
    position K is reached in alpha^K and emits p (the bug does not touch it)."""
    alpha = sc.acceptance_rate(P, Q)
    reached = alpha ** np.arange(DEFAULT_K + 1)  # (K+1,)
    law = sc.emitted_distribution("resample_from_p", P, Q)
    rows = np.vstack([np.tile(law, (DEFAULT_K, 1)), P])  # (K+1, V)
    counts = (reached[:, None] * rows).sum(axis=0)
    return counts / counts.sum()


def test_the_bug_answer_gives_the_shares_the_chart_settles_at():
    q, law = _bug_question(), _chart_law()
    assert q.fact("B shown") == pytest.approx(law[1]) and q.fact("A shown") == pytest.approx(law[0])
    assert f"**B {law[1]:.3g}**" in q.answer and f"**A {law[0]:.3g}**" in q.answer
    assert q.fact("rounds") == DEFAULT_ROUNDS and f"{DEFAULT_ROUNDS:,} rounds" in q.answer


def test_the_lab_chart_of_the_bug_draws_bars_within_noise_of_the_answer():
    """The chart the student reads (the lab's own figure builder over the core's Monte Carlo,
    the page's default K and rounds, seed 0): its bars for A and B lie within 4 standard
    errors of the answer's shares, and the per-position law (K = 1, no bonus counted in the
    answer's first numbers) would not."""
    result = sc.simulate_rounds(
        P, Q, DEFAULT_K, DEFAULT_ROUNDS, rng=np.random.default_rng(0), variant="resample_from_p"
    )
    fig = lab_figures.token_histogram_figure(result, PRESET.labels)
    bars = np.asarray(next(t for t in fig.data if t.name == "simulated").y)
    total = result.emitted_counts.sum()
    q = _bug_question()
    for i, name in ((0, "A"), (1, "B")):
        shown = q.fact(f"{name} shown")
        se = np.sqrt(shown * (1 - shown) / total)
        assert abs(bars[i] - shown) < 4 * se, (name, bars[i], shown)
        assert abs(bars[i] - q.fact(name)) > 4 * se  # what one drafted position emits
    assert f"B {q.fact('B'):.4g} of the time" in q.answer  # and the answer says which is which
    assert "At a drafted position" in q.answer and "counts every emitted token" in q.answer


def test_the_lab_page_shows_the_new_answer():
    at = open_page(LAB, {"present": "1"})
    assert not at.exception
    assert _bug_question().answer in [m.value for m in at.markdown]


# --- item 19: the Model pair lab's measured speedup names its pair ----------------------------


@pytest.fixture
def held_speed():
    """A held measurement of the default run (nothing is measured in the test)."""
    wait_until(
        lambda: shared_work.snapshot("background") == (0, 0), "the background lane to idle", 180
    )
    model_pairs_work.HOLD.clear()
    request = model_pairs_work.RunRequest(
        pair=model_pairs_work.DEFAULT_PAIR,
        prompt=model_pairs_work.DEFAULT_PROMPT,
        k=model_pairs_work.DEFAULT_K,
        temperature=0.0,
        n_tokens=model_pairs_work.DEFAULT_TOKENS,
        seed=0,
    )
    hold_speed(request, fake_speed(1.38))
    yield
    model_pairs_work.HOLD.clear()


def test_the_model_pair_labs_speedup_names_its_pair_and_not_the_serving_labs(held_speed):
    at = open_page(MODEL_PAIRS)
    assert not at.exception
    said = " ".join(c.value for c in at.caption)
    label = lm.PAIRS[model_pairs_work.DEFAULT_PAIR].label
    assert f"exactly the run above (pair: {label}, not the Serving lab's ◆ one;" in said
