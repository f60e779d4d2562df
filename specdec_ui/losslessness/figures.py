"""Figures and tables of the losslessness lab.

Pure functions of a :class:`specdec_core.SimulationResult` (or of p and q):
they return plotly figures and pandas tables and never read widgets. The
lab's presets and limits live in :mod:`specdec_ui.presets`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import specdec_core as sc
from specdec_ui.kit.chart_text import fmt, listing, text_meta
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import COLORS, PATTERN, draft_markers, make_figure

SIMULATED = "#7F7F7F"  # neutral grey for simulated counts (the theme's colours are concepts)
SHOWN_TOKENS = 8  # a summary names every token up to this many, else the five largest


def _per_token(labels, values) -> str:
    """ "A 0.4, B 0.25 and C 0.35" (past SHOWN_TOKENS tokens: the five largest)."""
    v = np.asarray(values, dtype=float)
    if len(v) <= SHOWN_TOKENS:
        return listing([f"{labels[i]} {fmt(v[i])}" for i in range(len(v))])
    top = np.argsort(v)[::-1][:5]
    return "largest " + ", ".join(f"{labels[i]} {fmt(v[i])}" for i in top)


def overlap_figure(p_target, q_draft, labels) -> go.Figure:
    """p and q overlaid, with the overlap min(p, q) outlined: its area is alpha.

    Traces (in order): "target p", "draft q", "overlap min(p, q)" whose
    y-values sum to alpha = 1 - TV(p, q).
    """
    p_arr, q_arr = np.asarray(p_target, float), np.asarray(q_draft, float)
    x = [plotly_escape(lab) for lab in labels]
    overlap = np.minimum(p_arr, q_arr)  # (V,)
    alpha = float(overlap.sum())
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": p_arr,
            "name": "target p",
            "opacity": 0.55,
            "width": 0.8,
            "marker": {"color": COLORS["p"]},
        },
        {
            "type": "bar",
            "x": x,
            "y": q_arr,
            "name": "draft q",
            "opacity": 0.55,
            "width": 0.8,
            "marker": {"color": COLORS["q"], "pattern": {"shape": PATTERN["q"]}},
        },
        {
            "type": "bar",
            "x": x,
            "y": overlap,
            "width": 0.8,
            "name": f"overlap min(p, q): total alpha = {alpha:.3f}",
            "marker": {
                "color": "rgba(0,0,0,0)",
                "line": {"color": COLORS["accepted"], "width": 4},
                "pattern": {"shape": "x", "fgcolor": COLORS["accepted"]},
            },
            "hovertemplate": "%{x}: min(p, q) = %{y:.3f}<extra></extra>",
        },
    ]
    summary = (
        f"Target p and draft q over {len(labels)} tokens, overlaid, with their overlap "
        f"min(p, q) outlined. p: {_per_token(labels, p_arr)}; q: {_per_token(labels, q_arr)}. "
        f"The overlap sums to alpha = {alpha:.3f} (= 1 - TV(p, q))."
    )
    return make_figure(
        traces,
        title=f"alpha = sum min(p, q) = 1 - TV(p, q) = {alpha:.3f}: the overlap",
        meta=text_meta(summary),
        barmode="overlay",
        yaxis={"title": {"text": "probability"}, "rangemode": "tozero"},
    )


def token_histogram_figure(result: sc.SimulationResult, labels) -> go.Figure:
    """Share of each emitted token in the simulation against p and q.

    Traces: "simulated" (bars, share of all emitted tokens), "target p
    (lossless)" (diamonds: expected_counts / total, with +-3 standard-error
    whiskers), "draft q" (open circles, the draft's own distribution).
    """
    x = [plotly_escape(lab) for lab in labels]
    observed = result.emitted_counts.astype(float)  # (V,)
    total = observed.sum()
    expected = result.expected_counts / total  # (V,)
    se = np.sqrt(expected * (1 - expected) / total)
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": observed / total,
            "name": "simulated",
            "marker": {"color": SIMULATED},
            "customdata": observed,
            "hovertemplate": "%{x}: %{y:.4f} (%{customdata:,.0f} tokens)<extra></extra>",
        },
        {
            "type": "scatter",
            "x": x,
            "y": expected,
            "mode": "markers",
            "name": "target p (lossless)",
            "marker": {
                "symbol": "diamond",
                "size": 16,
                "color": COLORS["p"],
                "line": {"width": 1, "color": "#333333"},
            },
            "error_y": {"type": "data", "array": 3 * se, "visible": True, "color": COLORS["p"]},
            "customdata": result.expected_counts,
            "hovertemplate": "%{x}: p share %{y:.4f}, expected %{customdata:,.0f} tokens"
            " (whiskers: +-3 standard errors)<extra></extra>",
        },
        draft_markers(x, result.q_rows.mean(axis=0)),
    ]
    share = observed / total
    gap = int(np.argmax(np.abs(share - expected)))
    summary = (
        f"Share of each token among the {int(total):,} emitted tokens, against the target p "
        f"(and the draft q). Simulated: {_per_token(labels, share)}; p: "
        f"{_per_token(labels, expected)}. The largest gap is at {labels[gap]}: "
        f"{fmt(share[gap])} simulated against {fmt(expected[gap])} (±3 standard errors: "
        f"±{fmt(3 * se[gap])})."
    )
    return make_figure(
        traces,
        title=f"Emitted tokens ({int(total):,}) against the target p",
        meta=text_meta(summary),
        yaxis={"title": {"text": "share of emitted tokens"}, "rangemode": "tozero"},
    )


def tokens_per_round_figure(result: sc.SimulationResult) -> go.Figure:
    """Histogram of tokens per round (1..K+1) against the theory's law.

    Traces: "simulated" (bars, share of rounds), "theory" (markers:
    ``tokens_per_round_distribution(result.alphas)``).
    """
    k = result.k_drafts
    n = np.arange(1, k + 2)
    counts = np.bincount(result.tokens_per_round, minlength=k + 2)[1:]  # (K+1,)
    law = sc.tokens_per_round_distribution(result.alphas)  # (K+1,)
    traces = [
        {
            "type": "bar",
            "x": n,
            "y": counts / result.n_rounds,
            "name": "simulated",
            "marker": {"color": SIMULATED},
            "customdata": counts,
            "hovertemplate": "%{x} tokens: %{y:.4f} (%{customdata:,} rounds)<extra></extra>",
        },
        {
            "type": "scatter",
            "x": n,
            "y": law,
            "mode": "markers+lines",
            "name": "theory",
            "marker": {"symbol": "diamond", "size": 14, "color": COLORS["theory"]},
            "line": {"dash": "dot", "color": COLORS["theory"]},
        },
    ]
    shares = counts / result.n_rounds
    pairs = [f"{i} tokens {fmt(shares[i - 1])} (theory {fmt(law[i - 1])})" for i in n]
    summary = (
        f"Share of the {result.n_rounds:,} rounds (K = {k}) that emitted 1 to {k + 1} tokens, "
        f"simulated against the theory: {listing(pairs, limit=9)}. Mean tokens per round: "
        f"{fmt(float((n * shares).sum()))} simulated, {fmt(float((n * law).sum()))} in theory."
    )
    return make_figure(
        traces,
        title=f"Tokens per round over {result.n_rounds:,} rounds (K = {k})",
        meta=text_meta(summary),
        xaxis={"title": {"text": "tokens emitted in the round"}, "dtick": 1},
        yaxis={"title": {"text": "share of rounds"}, "rangemode": "tozero"},
    )


NOISE_Z = 3.0  # the band is +-3 standard deviations: a correct run leaves it ~0.3 % per token


def lossless_noise_sd(result: sc.SimulationResult) -> np.ndarray:
    """(V,) standard deviation of each token's emitted share under a lossless sampler.

    Given the rounds that reached position j (``reached_j``), a lossless sampler emits
    there a Multinomial(reached_j, p_j) count, so Var(count_x) = sum_j reached_j
    p_j(x) (1 - p_j(x)); the share divides by the N tokens emitted in all.
    """
    var = (result.reached[:, None] * result.p_rows * (1.0 - result.p_rows)).sum(axis=0)  # (V,)
    return np.sqrt(var) / result.reached.sum()


def difference_figure(result: sc.SimulationResult, labels) -> go.Figure:
    """Simulated share minus p's share per token, inside the correct sampler's noise band.

    The band is +-``NOISE_Z`` standard deviations (``lossless_noise_sd``): a correct run
    stays inside it, while a bug of a few hundredths sticks out of it (issue 10: the bars
    of the histogram looked the same to the eye). Traces: "noise band", "simulated − p".
    """
    x = [plotly_escape(lab) for lab in labels]
    total = result.reached.sum()
    diff = result.emitted_counts / total - result.expected_counts / total  # (V,)
    band = NOISE_Z * lossless_noise_sd(result)  # (V,)
    outside = np.abs(diff) > band
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": 2 * band,
            "base": -band,
            "name": f"noise of the correct algorithm (±{NOISE_Z:g} sd)",
            "marker": {"color": COLORS["discarded"], "opacity": 0.35},
            "hovertemplate": "%{x}: band ±%{customdata:.4f}<extra></extra>",
            "customdata": band,
        },
        {
            "type": "scatter",
            "x": x,
            "y": diff,
            "mode": "markers",
            "name": "simulated − p",
            "marker": {
                "symbol": ["x" if o else "circle" for o in outside],
                "size": 16,
                "color": [COLORS["rejected"] if o else COLORS["q"] for o in outside],
                "line": {"width": 2},
            },
            "hovertemplate": "%{x}: simulated − p = %{y:+.4f}<extra></extra>",
        },
    ]
    reach = float(max(np.abs(diff).max(), band.max())) * 1.3
    worst = int(np.argmax(np.abs(diff) / np.maximum(band, 1e-300)))
    out_words = (
        f"{listing([str(labels[i]) for i in np.flatnonzero(outside)])} lie outside the band: "
        "the output does not follow p"
        if outside.any()
        else "every token lies inside the band, as a correct run does"
    )
    summary = (
        f"Simulated share minus p's share for each of {len(labels)} tokens, inside the noise "
        f"band of a correct run (±{NOISE_Z:g} standard deviations): {out_words}. Largest "
        f"against its band: {labels[worst]}, {diff[worst]:+.4f} (band ±{band[worst]:.4f})."
    )
    return make_figure(
        traces,
        title="Simulated share minus p, with the noise of a correct run",
        meta=text_meta(summary),
        xaxis={"title": {"text": "token"}, "type": "category"},
        yaxis={"title": {"text": "simulated − p"}, "range": [-reach, reach], "zeroline": True},
        barmode="overlay",
    )


# How token_table and rounds_table show on screen (kit.tables; the CSV keeps every digit)
TOKEN_TABLE_FORMATS = {
    "target p": "%.4f",
    "draft q": "%.4f",
    "expected (lossless)": "{:,.1f}",
    "emitted share": "%.4f",
}
ROUNDS_TABLE_FORMATS = {"expected rounds": "{:,.1f}", "share": "%.4f", "theory": "%.4f"}


def token_table(result: sc.SimulationResult, report: sc.LosslessnessReport, labels) -> pd.DataFrame:
    """One row per token: p, q, observed and expected counts, shares."""
    observed = result.emitted_counts
    total = int(observed.sum())
    return pd.DataFrame(
        {
            "token": list(labels),
            "target p": result.p_rows[0],
            "draft q": result.q_rows[0],
            "emitted": observed,
            "expected (lossless)": report.tokens.expected,
            "emitted share": observed / total,
        }
    )


def rounds_table(result: sc.SimulationResult) -> pd.DataFrame:
    """One row per round length n = 1..K+1: rounds observed and expected."""
    k = result.k_drafts
    counts = np.bincount(result.tokens_per_round, minlength=k + 2)[1:]
    law = sc.tokens_per_round_distribution(result.alphas)
    return pd.DataFrame(
        {
            "tokens in round": np.arange(1, k + 2),
            "rounds": counts,
            "expected rounds": law * result.n_rounds,
            "share": counts / result.n_rounds,
            "theory": law,
        }
    )
