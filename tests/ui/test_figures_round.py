"""figures_round: traces, values, the highlighted token, escaping of labels."""

from __future__ import annotations

import json

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui.kit.theme import COLORS, PATTERN
from specdec_ui.round import figures as round_figures
from specdec_ui.round.story import build_story, spec_from_scenario

LABELS = ("A", "B", "C", "D", "E")
P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
HOSTILE = ("<img src=x onerror=1>", "<script>x</script>", "C", "D", "E")


def by_name(fig) -> dict:
    return {t.name: t for t in fig.data}


def test_pq_figure_values_colours_and_highlight():
    fig = round_figures.pq_figure(LABELS, P, Q, highlight=1, title="Position 2")
    q_bar, p_bar = fig.data
    assert (q_bar.name, p_bar.name) == ("q (draft)", "p (target)")
    assert list(q_bar.y) == pytest.approx(Q) and list(p_bar.y) == pytest.approx(P)
    assert q_bar.marker.color == COLORS["q"] and p_bar.marker.color == COLORS["p"]
    assert q_bar.marker.pattern.shape == PATTERN["q"]
    assert list(p_bar.marker.opacity) == [
        round_figures.DIM,
        1.0,
        round_figures.DIM,
        round_figures.DIM,
        round_figures.DIM,
    ]
    assert list(p_bar.marker.line.width) == [0, 3, 0, 0, 0]
    assert list(fig.layout.xaxis.ticktext) == ["A", "<b>B</b>", "C", "D", "E"]
    assert fig.layout.xaxis.type == "category"
    (note,) = fig.layout.annotations
    assert note.x == "B" and note.text == "drafted"
    assert fig.layout.title.text == "Position 2"
    assert list(p_bar.text) == ["0.40", "0.25", "0.20", "0.10", "0.05"]


def test_pq_figure_without_highlight_or_q():
    fig = round_figures.pq_figure(LABELS, P)
    assert [t.name for t in fig.data] == ["p (target)"]
    assert list(fig.data[0].marker.opacity) == [1.0] * 5
    assert not fig.layout.annotations


def test_residual_figure_seed_000_values():
    fig = round_figures.residual_figure(
        LABELS, P, Q, normalised=True, highlight=0, mark_text="resampled"
    )
    traces = by_name(fig)
    assert list(traces["max(0, p − q)"].y) == pytest.approx([0.10, 0, 0.05, 0, 0])
    assert list(traces["p_adj = max(0, p − q) / Z"].y) == pytest.approx([2 / 3, 0, 1 / 3, 0, 0])
    assert traces["max(0, p − q)"].marker.color == COLORS["residual"]
    assert list(traces["q (draft)"].y) == pytest.approx(Q)
    assert fig.layout.annotations[0].text == "resampled"
    plain = round_figures.residual_figure(LABELS, P, Q)
    assert "p_adj = max(0, p − q) / Z" not in by_name(plain)


def test_residual_figure_cell_f_and_zero_mass():
    fig = round_figures.residual_figure(
        ("A", "B", "C"), [0.5, 0.2, 0.3], [0.1, 0.6, 0.3], normalised=True
    )
    traces = by_name(fig)
    assert list(traces["max(0, p − q)"].y) == pytest.approx([0.4, 0, 0])
    assert list(traces["p_adj = max(0, p − q) / Z"].y) == pytest.approx([1, 0, 0])
    same = round_figures.residual_figure(("A", "B"), [0.5, 0.5], [0.5, 0.5], normalised=True)
    assert list(by_name(same)["p_adj = max(0, p − q) / Z"].y) == [0.5, 0.5]  # falls back to p


def test_coin_figure_zones_and_coin():
    fig = round_figures.coin_figure(0.25 / 0.30, 0.72)
    keep, reject, coin = fig.data
    assert keep.x[0] == pytest.approx(0.8333, abs=1e-4)
    assert reject.x[0] == pytest.approx(1 - 0.8333, abs=1e-4)
    assert keep.marker.color == COLORS["accepted"] and reject.marker.color == COLORS["rejected"]
    assert reject.marker.pattern.shape == "x"  # a second cue besides colour
    assert "keep" in keep.name and "reject" in reject.name
    assert coin.x == (0.72,) and coin.text == ("u = 0.72",)
    assert fig.layout.barmode == "stack" and tuple(fig.layout.xaxis.range) == (0, 1)
    assert len(round_figures.coin_figure(0.5).data) == 2  # before the coin is drawn


def test_chips_figure_statuses_positions_and_legend():
    fig = round_figures.chips_figure(
        LABELS,
        (0, 1, 2),
        ("accepted", "rejected", "discarded"),
        ((0, 0, "accepted"), (1, 0, "resampled")),
    )
    traces = {t.name: t for t in fig.data}
    assert set(traces) == {
        "✓ kept",
        "✗ rejected",
        "– discarded",
        "↻ resampled",
        "★ bonus",
        "… not checked yet",
    }
    kept = traces["✓ kept"]
    assert list(kept.x) == [1, 1] and list(kept.y) == ["drafts", "output"]
    assert list(traces["↻ resampled"].x) == [2] and list(traces["↻ resampled"].y) == ["output"]
    assert list(traces["✗ rejected"].text) == ["✗<br>B"]
    assert traces["✗ rejected"].marker.color == COLORS["rejected"]
    assert traces["★ bonus"].x == ()
    assert fig.layout.legend.itemsizing == "constant" and fig.layout.showlegend


def test_chips_truncate_long_labels_but_hover_shows_all():
    labels = ("averyveryverylongtoken", "B")
    fig = round_figures.chips_figure(labels, (0,), ("accepted",), ((0, 0, "accepted"),))
    kept = {t.name: t for t in fig.data}["✓ kept"]
    assert kept.text[0] == "✓<br>averyv…"
    assert kept.customdata[0] == "averyveryverylongtoken"


def test_every_builder_escapes_labels():
    p = np.array([0.4, 0.1, 0.2, 0.2, 0.1])
    figs = [
        round_figures.pq_figure(HOSTILE, p, Q, highlight=0),
        round_figures.residual_figure(HOSTILE, p, Q, normalised=True, highlight=1, mark_text="x"),
        round_figures.chips_figure(
            HOSTILE, (0, 1), ("accepted", "rejected"), ((0, 0, "accepted"),)
        ),
    ]
    for fig in figs:
        text = json.dumps(fig.to_plotly_json(), ensure_ascii=False)
        assert "<img" not in text and "<script" not in text
        assert "&lt;img src=x onerror=1&gt;" in text


@pytest.mark.parametrize("key", ["000-round", "000-rejection", "003-B", "003-C", "003-F"])
def test_step_figures_follow_the_story(key):
    story = build_story(spec_from_scenario(sc.SCENARIOS[key]))
    for step in story.steps:
        main, coin = round_figures.step_figures(story, step.index)
        names = [t.name for t in main.data]
        if step.kind in ("ratio", "coin"):
            assert coin is not None
            s = next(x for x in story.result.steps if x.position == step.position)
            assert coin.data[0].x[0] == pytest.approx(s.acceptance_probability)
            assert (len(coin.data) == 3) == (step.kind == "coin")
        else:
            assert coin is None
        if step.kind in ("residual", "normalise", "resample"):
            assert "max(0, p − q)" in names
            assert ("p_adj = max(0, p − q) / Z" in names) == (step.kind != "residual")
        elif step.kind == "bonus":
            assert names == ["p (target)"]
        elif step.kind in ("draft", "ratio", "coin", "discard"):
            drafted = story.result.draft_tokens[step.position]
            assert main.layout.xaxis.ticktext[drafted].startswith("<b>")
            assert list(main.data[-1].y) == pytest.approx(story.p_rows[step.position])
