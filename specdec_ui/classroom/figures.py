"""The Class page's figures: the class's answers, its pooled tokens against p and its pooled
tokens per round against E(alpha, K).

Pure functions of counts (no widgets, no store): each writes its chart's text alternative
(:func:`specdec_ui.kit.chart_text.text_meta`) from the numbers its traces draw. Nothing a
student sends is text: answers are choices or numbers, drawn as counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

import specdec_core as sc
from specdec_ui.kit.chart_text import fmt, listing, text_meta
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import COLORS, OUTLINE, make_figure

OTHER = "#7F7F7F"  # answers that are not the right one, and simulated counts
MAX_BINS = 10  # a number question's histogram


def _choice_bars(letters: Sequence[str], counts: Sequence[int], right: int) -> list[dict]:
    colours = [COLORS["accepted"] if i == right else OTHER for i in range(len(letters))]
    text = [f"{c} ✓ right" if i == right else str(c) for i, c in enumerate(counts)]
    return [
        {
            "type": "bar",
            "x": list(letters),
            "y": list(counts),
            "name": "answers",
            "marker": {"color": colours, "line": {"color": OUTLINE, "width": 1}},
            "text": text,
            "textposition": "outside",
        }
    ]


def choice_answers_figure(letters: Sequence[str], tally: Mapping[float, int], right: int):
    """Bars of how many students chose each letter; the right one coloured and marked ✓."""
    counts = [int(tally.get(float(i), 0)) for i in range(len(letters))]
    total, hits = sum(counts), counts[right]
    summary = (
        f"{total} answers: "
        + listing([f"{letters[i]} {c}" for i, c in enumerate(counts)])
        + f". The right answer is {letters[right]}, chosen by {hits}."
    )
    rows = [(letters[i], c, "yes" if i == right else "no") for i, c in enumerate(counts)]
    return make_figure(
        _choice_bars(letters, counts, right),
        title=f"The class's answers: {hits} of {total} chose the right one ({letters[right]})",
        height=360,
        xaxis={"title": {"text": "answer"}},
        yaxis={"title": {"text": "students"}, "rangemode": "tozero"},
        showlegend=False,
        meta=text_meta(summary, ("answer", "students", "right"), rows),
    )


def number_bins(values: np.ndarray, right: float, tolerance: float) -> np.ndarray:
    """Bin edges over the answers and the right answer (at least the tolerance wide)."""
    low, high = float(min(values.min(), right)), float(max(values.max(), right))
    width = max(high - low, 2 * tolerance, 1e-9)
    bins = int(min(MAX_BINS, max(1, np.unique(values).size)))
    return np.linspace(low - 0.05 * width, high + 0.05 * width, bins + 1)


def number_answers_figure(tally: Mapping[float, int], right: float, tolerance: float):
    """A histogram of the numbers sent, the right answer a line; the count within
    ``tolerance`` of it in the title."""
    values = np.array(sorted(tally), dtype=float)
    weights = np.array([tally[v] for v in values], dtype=float)
    hits = int(sum(c for v, c in tally.items() if abs(v - right) <= tolerance + 1e-12))
    total = int(weights.sum())
    if total == 0:
        values, weights = np.array([right]), np.array([0.0])
    edges = number_bins(values, right, tolerance)
    counts, _ = np.histogram(values, bins=edges, weights=weights)
    centres = (edges[:-1] + edges[1:]) / 2
    bars = {
        "type": "bar",
        "x": centres.tolist(),
        "y": counts.tolist(),
        "width": float(edges[1] - edges[0]) * 0.9,
        "name": "answers",
        "marker": {"color": OTHER},
    }
    line = {
        "type": "scatter",
        "x": [right, right],
        "y": [0, max(float(counts.max()), 1.0)],
        "mode": "lines",
        "name": f"right answer {fmt(right)}",
        "line": {"color": COLORS["accepted"], "width": 4, "dash": "dash"},
    }
    summary = (
        f"{total} answers, {hits} within ±{fmt(tolerance)} of the right answer {fmt(right)}; "
        f"answers from {fmt(float(values.min()))} to {fmt(float(values.max()))}."
    )
    rows = [
        (f"{fmt(a)} to {fmt(b)}", int(c)) for a, b, c in zip(edges, edges[1:], counts, strict=False)
    ]
    return make_figure(
        [bars, line],
        title=f"The class's answers: {hits} of {total} within ±{fmt(tolerance)} of {fmt(right)}",
        height=360,
        xaxis={"title": {"text": "answer sent"}},
        yaxis={"title": {"text": "students"}, "rangemode": "tozero"},
        meta=text_meta(summary, ("answers between", "students"), rows),
    )


def pool_tokens_figure(labels, p_target, emitted, fit: sc.GoodnessOfFit | None) -> go.Figure:
    """The class's pooled emitted tokens as shares beside the target p (diamonds)."""
    counts = np.asarray(emitted, dtype=float)
    total = counts.sum()
    shares = counts / total if total else np.zeros_like(counts)
    x = [plotly_escape(lab) for lab in labels]
    p_arr = np.asarray(p_target, dtype=float)
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": shares.tolist(),
            "name": "the class's tokens",
            "marker": {"color": OTHER},
        },
        {
            "type": "scatter",
            "x": x,
            "y": p_arr.tolist(),
            "mode": "markers",
            "name": "target p",
            "marker": {"color": COLORS["p"], "symbol": "diamond", "size": 14},
        },
    ]
    test = "no tokens yet" if fit is None else f"p-value {fmt(fit.p_value)}"
    summary = (
        f"{int(total)} pooled tokens; shares "
        + listing([f"{labels[i]} {fmt(s)}" for i, s in enumerate(shares)])
        + "; target p "
        + listing([f"{labels[i]} {fmt(v)}" for i, v in enumerate(p_arr)])
        + f"; chi-square {test}."
    )
    rows = [(labels[i], int(counts[i]), shares[i], p_arr[i]) for i in range(len(labels))]
    return make_figure(
        traces,
        title=f"Tokens against p: {test}",
        height=380,
        xaxis={"title": {"text": "token"}},
        yaxis={"title": {"text": "share of emitted tokens"}, "rangemode": "tozero"},
        meta=text_meta(summary, ("token", "pooled count", "share", "target p"), rows),
    )


def pool_lengths_figure(lengths, alpha: float, k: int) -> go.Figure:
    """The class's rounds by tokens emitted (1..K+1) beside the law alpha^n (1 - alpha)."""
    counts = np.asarray(lengths, dtype=float)[1 : k + 2]  # 1..K+1 tokens
    rounds = counts.sum()
    shares = counts / rounds if rounds else np.zeros_like(counts)
    law = sc.tokens_per_round_distribution(np.full(k, alpha))  # (K+1,)
    n = list(range(1, k + 2))
    mean = float((np.arange(1, k + 2) * counts).sum() / rounds) if rounds else float("nan")
    e = float(sc.expected_tokens(alpha, k))
    traces = [
        {
            "type": "bar",
            "x": n,
            "y": shares.tolist(),
            "name": "the class's rounds",
            "marker": {"color": OTHER},
        },
        {
            "type": "scatter",
            "x": n,
            "y": law.tolist(),
            "mode": "markers",
            "name": "theory",
            "marker": {"color": COLORS["theory"], "symbol": "diamond", "size": 14},
        },
    ]
    said = "no rounds yet" if not rounds else f"mean {mean:.2f}"
    mean_words = f", mean {mean:.2f} tokens a round" if rounds else ""
    summary = f"{int(rounds)} pooled rounds{mean_words}; E(alpha = {alpha:.2f}, K = {k}) = {e:.2f}."
    rows = [(i, int(c), s, t) for i, c, s, t in zip(n, counts, shares, law, strict=True)]
    return make_figure(
        traces,
        title=f"Tokens a round: {said}, E(alpha, K) = {e:.2f}",
        height=380,
        xaxis={"title": {"text": "tokens emitted in a round"}, "dtick": 1},
        yaxis={"title": {"text": "share of rounds"}, "rangemode": "tozero"},
        meta=text_meta(summary, ("tokens", "rounds", "share", "theory"), rows),
    )
