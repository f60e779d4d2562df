"""Issue 28, item 2: every chart's text alternative says what the chart draws.

The words and the table come from the figure builders themselves (``layout.meta``, read by
:func:`specdec_ui.kit.chart_text.chart_text`); these tests hold them to the drawn data on the
seeds' worked examples: the bars' values, the leftover max(0, p - q) and its Z, the coin's
verdict, the chips, the best K, alpha, and the losslessness verdict of a correct and of a
broken sampler.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import specdec_core as sc
from specdec_ui.kit.chart_text import (
    MAX_TABLE_ROWS,
    chart_text,
    fmt,
    generic_summary,
    listing,
    text_meta,
    trace_table,
    with_text,
)
from specdec_ui.kit.theme import STATUS_WORD
from specdec_ui.losslessness import figures as losslessness_figures
from specdec_ui.round import figures as round_figures
from specdec_ui.round.story import build_story, spec_from_scenario
from specdec_ui.speedup import figures as speedup_figures

ROUND_KEYS = [k for k, s in sc.SCENARIOS.items() if type(s).__name__ == "RoundScenario"]
LABELS = ("A", "B", "C", "D", "E")
P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # seed 000
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
HOSTILE = ("<img src=x onerror=1>", "<script>x</script>", "C", "D", "E")
ROOT = Path(__file__).resolve().parents[2]


def _row(text, first: str) -> dict[str, str]:
    """The table row whose first cell is ``first``, as {column: cell}."""
    (row,) = [r for r in text.rows if r[0] == first]
    return dict(zip(text.columns, row, strict=True))


@pytest.mark.parametrize("key", ROUND_KEYS)
def test_every_step_of_every_seed_round_says_what_its_bars_draw(key):
    story = build_story(spec_from_scenario(sc.SCENARIOS[key]))
    for step in story.steps:
        main, coin = round_figures.step_figures(story, step.index)
        text = chart_text(main)
        bars = [t for t in main.data if t.type == "bar"]
        assert text.columns == ("token", *(t.name for t in bars))
        for bar in bars:
            for label, value in zip(story.labels, bar.y, strict=True):
                assert _row(text, label)[bar.name] == fmt(value), (key, step.kind, bar.name)
        p_bar = next(t for t in bars if t.name == "p (target)")
        said = ", ".join(f"{lab} {fmt(v)}" for lab, v in zip(story.labels, p_bar.y, strict=True))
        assert said.rsplit(", ", 1)[0] in text.summary, (key, step.kind, text.summary)
        if coin is not None:
            a = coin.data[0].x[0]
            assert f"split at a = {fmt(a)}" in chart_text(coin).summary


def test_seed_000_rejection_names_the_leftover_and_its_normalisation():
    fig = round_figures.residual_figure(
        LABELS, P, Q, normalised=True, highlight=0, mark_text="resampled"
    )
    summary = chart_text(fig).summary
    assert "The leftover is 0.1 at A and 0.05 at C and 0 elsewhere; its total Z = 0.15." in summary
    assert "p_adj = leftover / Z is A 0.667, B 0, C 0.333, D 0 and E 0." in summary
    assert "Token A (resampled): leftover 0.1." in summary
    before = chart_text(
        round_figures.residual_figure(LABELS, P, Q, highlight=1, mark_text="rejected")
    )
    assert "p_adj" not in before.summary and "Token B (rejected): leftover 0." in before.summary


def test_the_drafted_token_and_its_p_and_q_are_named():
    text = chart_text(round_figures.pq_figure(LABELS, P, Q, highlight=1, title="Position 2"))
    assert text.summary.startswith("Position 2: bars of q (draft) and p (target) over 5 tokens.")
    assert "Token B (drafted): q 0.3, p 0.25." in text.summary
    bonus = chart_text(round_figures.pq_figure(LABELS, P, highlight=0, mark_text="bonus"))
    assert "q (draft)" not in bonus.summary and "Token A (bonus): p 0.4." in bonus.summary


@pytest.mark.parametrize(("a", "u", "verdict"), [(0.6, 0.2, "kept"), (0.6, 0.6, "rejected")])
def test_the_coin_says_where_it_landed(a, u, verdict):
    """u < a keeps (u = a rejects: the coin rule in docs/CHOICES.md)."""
    text = chart_text(round_figures.coin_figure(a, u))
    assert f"The coin u = {fmt(u)} lands" in text.summary
    assert text.summary.endswith(f"the draft is {verdict}.")
    assert _row(text, "coin u")["from"] == fmt(u)
    assert "lands" not in chart_text(round_figures.coin_figure(a)).summary  # not thrown yet


def test_the_chips_list_the_drafts_and_the_output_of_the_round():
    story = build_story(spec_from_scenario(sc.SCENARIOS["000-rejection"]))
    last = story.step(len(story.steps) - 1)
    fig = round_figures.chips_figure(
        story.labels, story.result.draft_tokens, last.draft_status, last.emitted
    )
    text = chart_text(fig)
    drafts = [
        f"{story.labels[t]} ({STATUS_WORD[s]})"
        for t, s in zip(story.result.draft_tokens, last.draft_status, strict=True)
    ]
    output = [f"{story.labels[t]} ({STATUS_WORD[s]})" for _, t, s in last.emitted]
    assert text.summary == (
        f"Drafts: {listing(drafts, limit=20)}. Output so far: {listing(output, limit=20)}."
    )
    assert "rejected" in text.summary and "resampled" in text.summary


def test_the_speedup_curve_names_its_best_k_as_the_core_computes_it():
    alpha, c_q, c_p = 0.8, 1.0, 10.0
    fig = speedup_figures.speedup_vs_k_figure(alpha, c_q, c_p, k_current=3, k_max=8)
    best = sc.optimal_k(alpha, c_q, c_p, k_max=8)
    s = sc.speedup(alpha, np.arange(1, 9), c_q, c_p)
    text = chart_text(fig)
    assert f"best {fmt(s[best - 1])}x at K = {best}" in text.summary
    assert f"Your K = 3 gives {fmt(s[2])}x." in text.summary
    assert _row(text, str(best))["marked"] == "best K"
    assert [r[1] for r in text.rows] == [fmt(v) for v in fig.data[0].y]


def test_the_timeline_counts_the_time_of_both_rows():
    text = chart_text(speedup_figures.timeline_figure(3, c_q=1.0, c_p=4.0, n_accepted=2))
    assert "3 tokens (2 kept + 1 resampled) in 7 units" in text.summary
    assert "The target alone needs 3 passes, 12 units" in text.summary
    assert len(text.rows) == 3 + 1 + 3


def test_the_overlap_chart_says_alpha():
    text = chart_text(losslessness_figures.overlap_figure(P, Q, LABELS))
    assert f"alpha = {np.minimum(P, Q).sum():.3f}" in text.summary
    assert "p: A 0.4, B 0.25, C 0.2, D 0.1 and E 0.05" in text.summary


@pytest.mark.parametrize(("variant", "inside"), [("correct", True), ("resample_from_p", False)])
def test_the_difference_chart_says_whether_the_output_follows_p(variant, inside):
    """Seeded: 200,000 rounds of seed 000's p and q, K = 3; the broken sampler must show."""
    result = sc.simulate_rounds(P, Q, 3, 200_000, rng=np.random.default_rng(28), variant=variant)
    summary = chart_text(losslessness_figures.difference_figure(result, LABELS)).summary
    assert ("every token lies inside the band" in summary) == inside, summary
    assert ("lie outside the band: the output does not follow p" in summary) == (not inside)


def test_tokens_per_round_words_hold_the_simulated_and_theory_shares():
    result = sc.simulate_rounds(P, Q, 2, 50_000, rng=np.random.default_rng(1))
    fig = losslessness_figures.tokens_per_round_figure(result)
    summary = chart_text(fig).summary
    for n, share in zip(fig.data[0].x, fig.data[0].y, strict=True):
        assert f"{n} tokens {fmt(share)}" in summary


def test_labels_a_student_typed_stay_escaped_in_the_figure_and_come_back_as_typed():
    fig = round_figures.pq_figure(HOSTILE, P, Q, highlight=0)
    raw = json.dumps(fig.to_plotly_json(), ensure_ascii=False)
    assert "<img" not in raw and "<script" not in raw
    text = chart_text(fig)
    assert "Token <img src=x onerror=1> (drafted)" in text.summary
    assert {r[0] for r in text.rows} == set(HOSTILE)


def test_a_figure_without_words_is_described_from_its_traces():
    fig = go.Figure(
        [go.Bar(x=["A", "B"], y=[0.25, 0.75], name="p"), go.Scatter(x=[1.5], y=[2.0], name="m")],
        layout={"title": {"text": "Two bars"}, "xaxis": {"title": {"text": "token"}}},
    )
    summary = generic_summary(fig)
    assert summary.startswith("Two bars. A chart of bars and lines (p and m)")
    assert "p: A 0.25 and B 0.75" in summary
    columns, rows = trace_table(fig)
    assert columns == ("token", "p", "m")
    assert rows == [("A", "0.25", ""), ("B", "0.75", ""), ("1.5", "", "2")]


def test_a_long_curve_keeps_evenly_spaced_rows_and_says_so():
    x = np.linspace(0, 1, 201)
    fig = go.Figure(go.Scatter(x=x, y=x**2, name="curve"))
    text = chart_text(fig)
    assert len(text.rows) == MAX_TABLE_ROWS
    assert text.rows[0] == ("0", "0") and text.rows[-1] == ("1", "1")
    assert text.note == f"{MAX_TABLE_ROWS} of 201 rows, evenly spaced."
    assert "201 points from 0 at 0 to 1 at 1, highest 1 at 1" in text.summary


def test_a_builders_own_words_and_table_win_and_survive_a_copy():
    fig = with_text(go.Figure(go.Bar(x=["A"], y=[1.0])), "Own words: 1.", ("k", "v"), [(1, 0.5)])
    copy = go.Figure(fig.to_plotly_json())  # what st.plotly_chart and presenter view do
    assert chart_text(copy).summary == "Own words: 1."
    assert chart_text(copy).rows == (("1", "0.5"),)
    assert text_meta("a  b\n c") == {"text_alternative": {"summary": "a b c"}}


def test_no_app_source_holds_a_control_character():
    """A form feed in a non-raw string turned "\\frac" into a KaTeX error on screen."""
    bad = [
        f"{path.relative_to(ROOT)}:{i}"
        for folder in ("specdec_ui", "specdec_core", "pages")
        for path in (ROOT / folder).rglob("*.py")
        for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
        if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", line)
    ]
    assert not bad, bad
