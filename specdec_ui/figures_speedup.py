"""Figures and tables of the speedup explorer (and the home page's timeline).

Pure functions of numbers: they call the closed-form theory in
:mod:`specdec_core.theory` and return plotly figures or pandas tables; they
never read widgets. Presets of the speedup page live here too, so that the
page, its tests and the benchmark share them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import specdec_core as sc

from .theme import COLORS, base_layout

K_MAX_PAGE = 32  # K offered by the speedup page (slider, speedup-vs-K chart, optimum)
HEATMAP_ALPHAS = 200  # alpha grid of the heatmap (the core benchmark measures 200 x 64)
HEATMAP_K_MAX = 64
TABLE_K = (1, 2, 4, 8)  # K values always in the ms-per-token table
CURVE_K = (1, 2, 4, 8)  # K values of the curves versus alpha


@dataclass(frozen=True)
class SpeedPreset:
    """Inputs of the speedup page: alpha, K, draft and target step costs."""

    key: str
    label: str
    alpha: float
    k: int
    c_q: float
    c_p: float
    source: str
    lesson: str = ""
    table_k: tuple[int, ...] = ()
    paper: dict | None = None  # a row of Leviathan et al. 2023 Table 4


def _speed_presets() -> dict[str, SpeedPreset]:
    out: dict[str, SpeedPreset] = {}
    h = sc.SCENARIOS["003-H"]
    out["003-H"] = SpeedPreset("003-H", "Seed 003 Ex 8: latency budget (alpha 0.7, 5 ms / 40 ms)",
                               h.alpha, 4, h.c_q, h.c_p, "seed 003, Ex 8", h.lesson, h.k_values)
    g = sc.SCENARIOS["003-G"]
    out["003-G"] = SpeedPreset("003-G", "Seed 003 Ex 7: the ceiling (alpha = 1, free draft, K = 4)",
                               g.alpha, g.k_values[0], g.c_q, g.c_p, "seed 003, Ex 7", g.lesson,
                               g.k_values)
    for i, row in enumerate(sc.PUBLISHED_SPEEDUPS, start=1):
        key = f"table4-{i}"
        label = (f"Leviathan et al. 2023 Table 4: {row['task']}, {row['draft']} draft, "
                 f"T = {row['temperature']}")
        # c = c_q / c_p; a target step of 100 time units makes c_q = 100 c.
        out[key] = SpeedPreset(key, label, row["alpha"], row["k"], round(100 * row["c"], 6), 100.0,
                               f"Leviathan et al. 2023, Table 4, row {i}", paper=dict(row),
                               table_k=(row["k"],))
    return out


SPEED_PRESETS: dict[str, SpeedPreset] = _speed_presets()
DEFAULT_SPEED_PRESET = "003-H"


def speedup_vs_k_figure(alpha: float, c_q: float, c_p: float, *, k_current: int | None = None,
                        k_max: int = K_MAX_PAGE) -> go.Figure:
    """Speedup for K = 1..k_max at one alpha; the best K (core ``optimal_k``) starred.

    Traces: "speedup" (line), "best K" (star), "your K" (circle, if given),
    and a dotted line at speedup 1 (no gain).
    """
    ks = np.arange(1, k_max + 1)  # (k_max,)
    s = sc.speedup(alpha, ks, c_q, c_p)  # (k_max,)
    best = sc.optimal_k(alpha, c_q, c_p, k_max=k_max)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ks, y=s, mode="lines+markers", name="speedup",
                             line={"color": COLORS["q"]},
                             hovertemplate="K = %{x}<br>speedup %{y:.3f}x<extra></extra>"))
    fig.add_trace(go.Scatter(x=[best], y=[s[best - 1]], mode="markers+text", name="best K",
                             marker={"symbol": "star", "size": 20, "color": COLORS["bonus"],
                                     "line": {"width": 1.5, "color": COLORS["rejected"]}},
                             text=[f"best K = {best}"], textposition="top center"))
    if k_current is not None and 1 <= k_current <= k_max:
        fig.add_trace(go.Scatter(x=[k_current], y=[s[k_current - 1]], mode="markers",
                                 name="your K", marker={"symbol": "circle-open", "size": 18,
                                                        "color": COLORS["p"],
                                                        "line": {"width": 3}}))
    fig.add_hline(y=1.0, line_dash="dot", line_color=COLORS["discarded"],
                  annotation_text="no gain (1x)", annotation_position="bottom right")
    base_layout(fig, title=f"Speedup versus K at alpha = {alpha:.2f}")
    fig.update_xaxes(title="K (draft tokens per round)")
    fig.update_yaxes(title="speedup (x)")
    return fig


def _alpha_grid(n: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n)


def expected_tokens_figure(k_values=CURVE_K, *, alpha_current: float | None = None,
                           n: int = 101) -> go.Figure:
    """E[tokens per round] versus alpha for several K, each with its ceiling K + 1.

    Traces: "K = k" curves, "ceiling K+1 = k+1" dashed lines, "floor: 1 token"
    (nothing kept: still one token, the resample).
    """
    a = _alpha_grid(n)
    fig = go.Figure()
    for k in k_values:
        fig.add_trace(go.Scatter(x=a, y=sc.expected_tokens(a, k), mode="lines", name=f"K = {k}",
                                 legendgroup=f"k{k}"))
        fig.add_trace(go.Scatter(x=[0, 1], y=[k + 1, k + 1], mode="lines",
                                 name=f"ceiling K+1 = {k + 1}", legendgroup=f"k{k}",
                                 line={"dash": "dash", "width": 1}, showlegend=False))
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 1], mode="lines", name="floor: 1 token",
                             line={"dash": "dot", "color": COLORS["discarded"]}))
    if alpha_current is not None:
        fig.add_vline(x=alpha_current, line_dash="dot", line_color=COLORS["p"],
                      annotation_text=f"alpha = {alpha_current:.2f}")
    base_layout(fig, title="Expected tokens per round (dashed: the ceiling K + 1)")
    fig.update_xaxes(title="alpha (acceptance rate)", range=[0, 1])
    fig.update_yaxes(title="E[tokens per round]")
    return fig


def speedup_vs_alpha_figure(c_q: float, c_p: float, k_values=CURVE_K, *,
                            alpha_current: float | None = None, n: int = 101) -> go.Figure:
    """Speedup versus alpha for several K, with the floor and ceiling of each K.

    Floor (alpha -> 0): c_p / (K c_q + c_p); ceiling (alpha -> 1):
    (K + 1) c_p / (K c_q + c_p), which is K + 1 when the draft is free.
    Traces: "K = k", "floor K = k", "ceiling K = k".
    """
    a = _alpha_grid(n)
    fig = go.Figure()
    for k in k_values:
        floor = c_p / (k * c_q + c_p)
        fig.add_trace(go.Scatter(x=a, y=sc.speedup(a, k, c_q, c_p), mode="lines", name=f"K = {k}",
                                 legendgroup=f"k{k}"))
        fig.add_trace(go.Scatter(x=[0, 1], y=[floor, floor], mode="lines", name=f"floor K = {k}",
                                 legendgroup=f"k{k}", showlegend=False,
                                 line={"dash": "dot", "width": 1}))
        fig.add_trace(go.Scatter(x=[0, 1], y=[(k + 1) * floor] * 2, mode="lines",
                                 name=f"ceiling K = {k}", legendgroup=f"k{k}", showlegend=False,
                                 line={"dash": "dash", "width": 1}))
    fig.add_hline(y=1.0, line_dash="dot", line_color=COLORS["discarded"],
                  annotation_text="no gain (1x)", annotation_position="top left")
    if alpha_current is not None:
        fig.add_vline(x=alpha_current, line_dash="dot", line_color=COLORS["p"],
                      annotation_text=f"alpha = {alpha_current:.2f}")
    base_layout(fig, title="Speedup (dotted: floor at alpha = 0, dashed: ceiling at alpha = 1)")
    fig.update_xaxes(title="alpha (acceptance rate)", range=[0, 1])
    fig.update_yaxes(title="speedup (x)")
    return fig


def speedup_heatmap_figure(c_q: float, c_p: float, *, n_alpha: int = HEATMAP_ALPHAS,
                           k_max: int = HEATMAP_K_MAX, current: tuple[float, int] | None = None
                           ) -> go.Figure:
    """Heatmap of speedup over alpha x K, with the best K for each alpha as a line.

    z has shape (k_max, n_alpha): row K-1, column alpha. Traces: "speedup"
    (heatmap, colour-blind safe Cividis), "best K" (line), "you are here".
    """
    a = _alpha_grid(n_alpha)  # (n_alpha,)
    ks = np.arange(1, k_max + 1)  # (k_max,)
    z = sc.speedup(a[None, :], ks[:, None], c_q, c_p)  # (k_max, n_alpha)
    best = sc.optimal_k(a, c_q, c_p, k_max=k_max)  # (n_alpha,)
    fig = go.Figure()
    fig.add_trace(go.Heatmap(x=a, y=ks, z=z, name="speedup", colorscale="Cividis",
                             colorbar={"title": {"text": "speedup"}},
                             hovertemplate="alpha %{x:.3f}<br>K = %{y}<br>speedup %{z:.2f}x"
                             "<extra></extra>"))
    fig.add_trace(go.Scatter(x=a, y=best, mode="lines", name="best K",
                             line={"color": COLORS["bonus"], "width": 3}))
    if current is not None:
        fig.add_trace(go.Scatter(x=[current[0]], y=[current[1]], mode="markers",
                                 name="you are here", marker={"symbol": "x", "size": 14,
                                                              "color": COLORS["rejected"],
                                                              "line": {"width": 2}}))
    base_layout(fig, title=f"Speedup over alpha and K (c = c_q / c_p = {c_q / c_p:.3g})",
                height=420)
    fig.update_xaxes(title="alpha (acceptance rate)")
    fig.update_yaxes(title="K")
    return fig


def time_table(alpha: float, k_values, c_q: float, c_p: float) -> pd.DataFrame:
    """The latency table of seed 003 Ex 8, one row per K (sorted, unique).

    Columns: K, cost per round = K c_q + c_p, E[tokens] = (1 - alpha^(K+1)) /
    (1 - alpha), time per token = cost / E, speedup = c_p / (time per token).
    Unrounded: the page rounds for display.
    """
    ks = np.array(sorted({int(k) for k in k_values}))
    e = np.atleast_1d(sc.expected_tokens(alpha, ks))
    tpt = np.atleast_1d(sc.time_per_token(alpha, ks, c_q, c_p))
    return pd.DataFrame({
        "K": ks,
        "cost per round": ks * c_q + c_p,
        "E[tokens per round]": e,
        "time per token": tpt,
        "speedup (x)": np.atleast_1d(sc.speedup(alpha, ks, c_q, c_p)),
    })


def published_table() -> pd.DataFrame:
    """Leviathan et al. 2023 Table 4 next to the formula on its rounded inputs.

    "formula" = (1 - alpha^(K+1)) / ((1 - alpha)(K c + 1)) rounded to 0.1;
    the paper computed from unrounded alpha and c, so a few rows differ by 0.1.
    """
    rows = []
    for i, r in enumerate(sc.PUBLISHED_SPEEDUPS, start=1):
        formula = float(sc.speedup(r["alpha"], r["k"], r["c"], 1.0))
        rows.append({
            "row": i, "task": r["task"], "draft": r["draft"], "T": r["temperature"],
            "K": r["k"], "alpha": r["alpha"], "c": r["c"],
            "formula": round(formula, 1), "paper expected": r["expected"],
            "paper measured": r["measured"],
            "formula - paper expected": round(round(formula, 1) - r["expected"], 1),
        })
    return pd.DataFrame(rows)


def timeline_figure(k: int = 3, *, c_q: float = 1.0, c_p: float = 4.0,
                    n_accepted: int | None = None) -> go.Figure:
    """The picture of one round: K cheap draft steps, then ONE target pass over K+1.

    Upper row "speculative": K draft boxes (width c_q) then a target box
    (width c_p) that checks every draft and adds one token. Lower row
    "target alone": one target box per token. ``n_accepted`` (default K)
    sets how many tokens the round emits (n_accepted + 1).
    """
    k = sc.check_k(k)
    n_acc = k if n_accepted is None else int(n_accepted)
    if not 0 <= n_acc <= k:
        raise sc.InvalidParameterError(f"n_accepted = {n_acc} must lie in 0..{k}.")
    n_out = n_acc + 1
    fig = go.Figure()
    y_spec, y_plain = "speculative round", "target alone"

    def box(x0, width, y, color, text, name, show):
        fig.add_trace(go.Bar(x=[width], base=[x0], y=[y], orientation="h", name=name,
                             marker={"color": color, "line": {"width": 1, "color": "#333333"}},
                             text=[text], textposition="inside", insidetextanchor="middle",
                             legendgroup=name, showlegend=show, hoverinfo="name"))

    for i in range(k):
        box(i * c_q, c_q, y_spec, COLORS["q"], f"draft {i + 1}", "draft step (cheap, q)", i == 0)
    box(k * c_q, c_p, y_spec, COLORS["p"], f"verify {k} + 1", "target pass (p)", True)
    for i in range(n_out):
        box(i * c_p, c_p, y_plain, COLORS["p"], f"token {i + 1}", "target pass (p)", False)
    kept = "all kept + bonus" if n_acc == k else f"{n_acc} kept + 1 resampled"
    fig.add_annotation(x=k * c_q + c_p, y=y_spec, text=f"  {n_out} tokens ({kept})",
                       showarrow=False, xanchor="left")
    fig.add_annotation(x=n_out * c_p, y=y_plain, text=f"  {n_out} tokens", showarrow=False,
                       xanchor="left")
    base_layout(fig, title="Same tokens, less time: the draft proposes, the target verifies once",
                height=260)
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title="time", showticklabels=False, range=[0, n_out * c_p * 1.35])
    fig.update_yaxes(autorange="reversed")
    return fig
