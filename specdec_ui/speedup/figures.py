"""Figures and tables of the speedup explorer (and the home page's timeline).

Pure functions of numbers: they call the closed-form theory in
:mod:`specdec_core.theory` and return plotly figures or pandas tables; they
never read widgets. The page's presets and limits live in
:mod:`specdec_ui.presets`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import specdec_core as sc
from specdec_ui.kit.chart_text import fmt, listing, text_meta
from specdec_ui.kit.theme import COLORS, make_figure
from specdec_ui.presets import HEATMAP_K_MAX

HEATMAP_ALPHAS = 200  # alpha grid of the heatmap (the core benchmark measures 200 x 64)
CURVE_K = (1, 2, 4, 8)  # default K values of the curves versus alpha


# Okabe & Ito colours that stay visible on a white and on a dark background (no black,
# no navy, no yellow): the K = 1 curve was Cividis navy, which vanished in dark mode.
K_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#999999")


def k_colors(k_values) -> dict[int, str]:
    """One colour per K for curves (Okabe-Ito, readable in light and dark themes)."""
    ks = sorted({int(k) for k in k_values})
    return {k: K_PALETTE[i % len(K_PALETTE)] for i, k in enumerate(ks)}


def _line_shape(across: str, at: float, color: str, dash: str) -> dict:
    """A line across the whole plot along axis ``across`` ("x": horizontal), at ``at`` on the
    other axis."""
    other = "y" if across == "x" else "x"
    return {
        "type": "line",
        f"{across}ref": "paper",
        f"{across}0": 0,
        f"{across}1": 1,
        f"{other}ref": other,
        f"{other}0": at,
        f"{other}1": at,
        "line": {"color": color, "dash": dash, "width": 1.5},
    }


def hline(
    y: float, text: str, *, color: str, dash: str = "dot", position: str = "right"
) -> tuple[dict, dict]:
    """A horizontal line across the plot and its label: (shape, annotation)."""
    shape = _line_shape("x", y, color, dash)
    label = {
        "xref": "paper",
        "x": 1 if position == "right" else 0,
        "yref": "y",
        "y": y,
        "xanchor": position,
        "yanchor": "bottom",
        "text": text,
        "showarrow": False,
    }
    return shape, label


def vline(
    x: float, text: str, *, color: str, dash: str = "dot", flip_at: float = 0.75
) -> tuple[dict, dict]:
    """A vertical line across the plot and its label at the top: (shape, annotation).

    The label sits right of the line, or left of it from ``x >= flip_at`` (in x units),
    so that it stays inside the plot. Leave headroom above the data (:data:`HEADROOM`):
    the label's band at the top must be empty, or it lies on the lines there.
    """
    shape = _line_shape("y", x, color, dash)
    label = {
        "yref": "paper",
        "y": 1,
        "xref": "x",
        "x": x,
        "xanchor": "left" if x < flip_at else "right",
        "yanchor": "top",
        "text": text,
        "showarrow": False,
    }
    return shape, label


HEADROOM = 1.35  # y range = highest line x this: an empty band at the top for vline labels
# (a quarter of the plot: the 20 px label of presenter view fits it in a two-row-legend chart)


def _best_k_marker(best: int, speedup_best: float, k_max: int) -> dict:
    """The star at the best K (near the right edge its label goes left, or it would be cut);
    its label may reach into the margin above the plot (a projector's 20 px text did not
    fit under the top of the axis and was cut there)."""
    return {
        "type": "scatter",
        "x": [best],
        "y": [speedup_best],
        "mode": "markers+text",
        "name": "best K",
        "text": [f"best K = {best}"],
        "textposition": "top left" if best > 0.75 * k_max else "top center",
        "cliponaxis": False,
        "marker": {
            "symbol": "star",
            "size": 20,
            "color": COLORS["bonus"],
            "line": {"width": 1.5, "color": COLORS["rejected"]},
        },
    }


def _your_k_marker(k_current: int, speedup_current: float) -> dict:
    return {
        "type": "scatter",
        "x": [k_current],
        "y": [speedup_current],
        "mode": "markers",
        "name": "your K",
        "marker": {"symbol": "circle-open", "size": 18, "color": COLORS["p"], "line": {"width": 3}},
    }


def speedup_vs_k_figure(
    alpha: float, c_q: float, c_p: float, *, k_current: int | None = None, k_max: int
) -> go.Figure:
    """Speedup for K = 1..k_max at one alpha; the best K (core ``optimal_k``) starred.

    Traces: "speedup" (line), "best K" (star), "your K" (circle, if given),
    and a dotted line at speedup 1 (no gain).
    """
    ks = np.arange(1, k_max + 1)  # (k_max,)
    s = sc.speedup(alpha, ks, c_q, c_p)  # (k_max,)
    best = sc.optimal_k(alpha, c_q, c_p, k_max=k_max)
    curve = {
        "type": "scatter",
        "x": ks,
        "y": s,
        "mode": "lines+markers",
        "name": "speedup",
        "line": {"color": COLORS["q"]},
        "hovertemplate": "K = %{x}<br>speedup %{y:.3f}x<extra></extra>",
    }
    traces = [curve, _best_k_marker(best, s[best - 1], k_max)]
    if k_current is not None and 1 <= k_current <= k_max:
        traces.append(_your_k_marker(k_current, s[k_current - 1]))
    shape, label = hline(1.0, "no gain (1x)", color=COLORS["discarded"])
    marks = {best: "best K", **({k_current: "your K"} if k_current in set(ks.tolist()) else {})}
    if k_current == best:
        marks[best] = "best K and your K"
    summary = (
        f"Speedup versus K at alpha = {alpha:.2f} (c_q = {fmt(c_q)}, c_p = {fmt(c_p)}): "
        f"{fmt(s[0])}x at K = 1, best {fmt(s[best - 1])}x at K = {best}, "
        f"{fmt(s[-1])}x at K = {k_max}."
    )
    if k_current is not None and 1 <= k_current <= k_max:
        summary += f" Your K = {k_current} gives {fmt(s[k_current - 1])}x."
    rows = [(int(k), s[i], marks.get(int(k), "")) for i, k in enumerate(ks)]
    return make_figure(
        traces,
        title=f"Speedup versus K at alpha = {alpha:.2f}",
        meta=text_meta(summary, ("K", "speedup (x)", "marked"), rows),
        shapes=[shape],
        annotations=[label],
        xaxis={"title": {"text": "K (draft tokens per round)"}},
        yaxis={"title": {"text": "speedup (x)"}, "range": [0, max(float(s.max()), 1.0) * HEADROOM]},
    )


def _alpha_grid(n: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, n)


def _alpha_marker(alpha_current: float | None) -> tuple[list, list]:
    if alpha_current is None:
        return [], []
    shape, label = vline(alpha_current, f" alpha = {alpha_current:.2f} ", color=COLORS["p"])
    return [shape], [label]


def _k_curve(x: np.ndarray, y: np.ndarray, k: int, color: str) -> dict:
    """The curve of one K versus alpha (its legend entry groups its floor and ceiling)."""
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": f"K = {k}",
        "legendgroup": f"k{k}",
        "line": {"color": color, "width": 3},
    }


def _k_level(y: float, name: str, k: int, color: str, dash: str) -> dict:
    """A thin horizontal line across alpha in [0, 1] (the floor or ceiling of one K)."""
    return {
        "type": "scatter",
        "x": [0, 1],
        "y": [y, y],
        "mode": "lines",
        "name": name,
        "legendgroup": f"k{k}",
        "showlegend": False,
        "line": {"dash": dash, "width": 1, "color": color},
    }


def _line_key(name: str, dash: str) -> dict:
    """A legend entry only (no data): what a dash style means, so the title stays short
    enough for a phone (a title with the key in brackets was cut at 390 px)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "name": name,
        "line": {"dash": dash, "width": 2, "color": COLORS["discarded"]},
        "hoverinfo": "skip",
    }


def expected_tokens_figure(
    k_values=CURVE_K, *, alpha_current: float | None = None, n: int = 101
) -> go.Figure:
    """E[tokens per round] versus alpha for several K, each with its ceiling K + 1.

    Traces: "K = k" curves, "ceiling K+1 = k+1" dashed lines, "floor: 1 token"
    (nothing kept: still one token, the resample).
    """
    a = _alpha_grid(n)
    colors = k_colors(k_values)
    max_k = max(int(k) for k in k_values)
    traces = []
    for k in k_values:
        traces.append(_k_curve(a, sc.expected_tokens(a, k), k, colors[k]))
        traces.append(_k_level(k + 1, f"ceiling K+1 = {k + 1}", k, colors[k], "dash"))
    traces.append(
        {
            "type": "scatter",
            "x": [0, 1],
            "y": [1, 1],
            "mode": "lines",
            "name": "floor: 1 token",
            "line": {"dash": "dot", "color": COLORS["discarded"]},
        }
    )
    traces.append(_line_key("dashed: ceiling K + 1", "dash"))
    shapes, labels = _alpha_marker(alpha_current)
    ks = [int(k) for k in k_values]
    grid = _table_alphas(alpha_current)
    rows = [(x, *(float(sc.expected_tokens(x, k)) for k in ks)) for x in grid]
    summary = (
        f"Expected tokens per round against alpha for K = {listing([str(k) for k in ks])}: "
        "1 token at alpha = 0 (the floor: the resample), rising to the ceiling K + 1 at "
        "alpha = 1."
    )
    if alpha_current is not None:
        at = ", ".join(f"{fmt(sc.expected_tokens(alpha_current, k))} for K = {k}" for k in ks)
        summary += f" At your alpha = {fmt(alpha_current)}: {at}."
    return make_figure(
        traces,
        title="Expected tokens per round",
        meta=text_meta(summary, ("alpha", *(f"K = {k}" for k in ks)), rows),
        shapes=shapes,
        annotations=labels,
        xaxis={"title": {"text": "alpha (acceptance rate)"}, "range": [0, 1]},
        # headroom over the highest ceiling: the alpha label is not drawn on a dashed line
        yaxis={"title": {"text": "E[tokens per round]"}, "range": [0, HEADROOM * (max_k + 1)]},
    )


def speedup_vs_alpha_figure(
    c_q: float, c_p: float, k_values=CURVE_K, *, alpha_current: float | None = None, n: int = 101
) -> go.Figure:
    """Speedup versus alpha for several K, with the floor and ceiling of each K.

    Floor (alpha -> 0): c_p / (K c_q + c_p); ceiling (alpha -> 1):
    (K + 1) c_p / (K c_q + c_p), which is K + 1 when the draft is free.
    Traces: "K = k", "floor K = k", "ceiling K = k", "no gain (1x)" (a dotted line at 1).
    """
    a = _alpha_grid(n)
    colors = k_colors(k_values)
    top = 1.0  # the highest line: the no-gain line or a ceiling
    traces = []
    for k in k_values:
        floor = c_p / (k * c_q + c_p)
        top = max(top, (k + 1) * floor)
        traces.append(_k_curve(a, sc.speedup(a, k, c_q, c_p), k, colors[k]))
        traces.append(_k_level(floor, f"floor K = {k}", k, colors[k], "dot"))
        traces.append(_k_level((k + 1) * floor, f"ceiling K = {k}", k, colors[k], "dash"))
    # "no gain" is a legend entry, not a label on its line: the curves cross the line, the
    # floors lie just under it and the ceilings over it, so a label there sat on a line.
    traces.append(
        {
            "type": "scatter",
            "x": [0, 1],
            "y": [1, 1],
            "mode": "lines",
            "name": "no gain (1x)",
            "line": {"dash": "dot", "color": COLORS["discarded"], "width": 2},
            "hoverinfo": "skip",
        }
    )
    traces += [
        _line_key("dotted: floor (alpha 0)", "dot"),
        _line_key("dashed: ceiling (alpha 1)", "dash"),
    ]
    shapes, labels = _alpha_marker(alpha_current)
    meta = _speedup_alpha_text(c_q, c_p, [int(k) for k in k_values], alpha_current)
    return make_figure(
        traces,
        title="Speedup versus alpha",
        meta=meta,
        shapes=shapes,
        annotations=labels,
        xaxis={"title": {"text": "alpha (acceptance rate)"}, "range": [0, 1]},
        yaxis={"title": {"text": "speedup (x)"}, "range": [0, HEADROOM * top]},
    )


def _speedup_alpha_text(c_q: float, c_p: float, ks: list[int], alpha_current: float | None):
    """The speedup-vs-alpha chart in words (each K's floor and ceiling, the student's alpha)
    and its table (speedup per K at every 0.1 of alpha)."""
    rows = [
        (x, *(float(sc.speedup(x, k, c_q, c_p)) for k in ks)) for x in _table_alphas(alpha_current)
    ]
    ranges = "; ".join(
        f"K = {k} from {fmt(c_p / (k * c_q + c_p))}x to {fmt((k + 1) * c_p / (k * c_q + c_p))}x"
        for k in ks
    )
    summary = (
        f"Speedup against alpha (c_q = {fmt(c_q)}, c_p = {fmt(c_p)}), each K between its floor "
        f"at alpha = 0 and its ceiling at alpha = 1: {ranges}."
    )
    if alpha_current is not None:
        at = ", ".join(f"{fmt(sc.speedup(alpha_current, k, c_q, c_p))}x for K = {k}" for k in ks)
        summary += f" At your alpha = {fmt(alpha_current)}: {at}."
    return text_meta(summary, ("alpha", *(f"speedup K = {k}" for k in ks)), rows)


TABLE_ALPHAS = np.linspace(0.0, 1.0, 11)  # the rows of a curve's data table: alpha 0, 0.1, .., 1


def _table_alphas(alpha_current: float | None) -> list[float]:
    """The alphas of a curve chart's table: every 0.1, and the student's own."""
    grid = {round(float(x), 10) for x in TABLE_ALPHAS}
    if alpha_current is not None:
        grid.add(float(alpha_current))
    return sorted(grid)


HEATMAP_CAP_QUANTILE = 0.9  # the colour scale tops out here; rarer, larger speedups share it


def heatmap_colour_cap(z: np.ndarray) -> float:
    """Top of the heatmap's colour scale: the 90th percentile of the speedups (at least 1.5).

    A linear scale up to the maximum is dominated by alpha near 1 (with c = 0 the
    maximum passes 60 while most cells lie between 1 and 3): capping keeps the
    differences where most of the map is visible (issue 10).
    """
    return max(float(np.quantile(z, HEATMAP_CAP_QUANTILE)), 1.5)


def _you_are_here(alpha: float, k: int) -> dict:
    """The student's (alpha, K) on the heatmap."""
    return {
        "type": "scatter",
        "x": [alpha],
        "y": [k],
        "mode": "markers",
        "name": "you are here",
        "marker": {"symbol": "x", "size": 14, "color": COLORS["rejected"], "line": {"width": 2}},
    }


def speedup_heatmap_figure(
    c_q: float,
    c_p: float,
    *,
    n_alpha: int = HEATMAP_ALPHAS,
    k_max: int = HEATMAP_K_MAX,
    current: tuple[float, int] | None = None,
) -> go.Figure:
    """Heatmap of speedup over alpha x K, with the best K for each alpha as a line.

    z has shape (k_max, n_alpha): row K-1, column alpha. Traces: "speedup"
    (heatmap, colour-blind safe Cividis), "best K" (line), "you are here".
    """
    a = _alpha_grid(n_alpha)  # (n_alpha,)
    ks = np.arange(1, k_max + 1)  # (k_max,)
    z = sc.speedup(a[None, :], ks[:, None], c_q, c_p)  # (k_max, n_alpha)
    best = ks[np.argmax(z, axis=0)]  # (n_alpha,) = optimal_k over 1..k_max, from the same grid
    z_max, cap = float(z.max()), heatmap_colour_cap(z)
    traces = [
        {
            "type": "heatmap",
            "x": a,
            "y": ks,
            "z": z,
            "name": "speedup",
            "colorscale": "Cividis",
            "zmin": float(z.min()),
            "zmax": min(z_max, cap),
            "colorbar": {
                "title": {"text": "speedup" if cap >= z_max else f"speedup<br>(≥ {cap:.1f}x: top)"}
            },
            "hovertemplate": "alpha %{x:.3f}<br>K = %{y}<br>speedup %{z:.2f}x<extra></extra>",
        },
        {
            "type": "scatter",
            "x": a,
            "y": best,
            "mode": "lines",
            "name": "best K",
            "line": {"color": COLORS["bonus"], "width": 3},
        },
    ]
    if current is not None:
        traces.append(_you_are_here(*current))
    return make_figure(
        traces,
        title=f"Speedup over alpha and K, c = {c_q / c_p:.3g}",
        meta=_heatmap_text(a, best, z, c_q / c_p, current),
        height=420,
        xaxis={"title": {"text": "alpha (acceptance rate)"}},
        yaxis={"title": {"text": "K"}},
    )


def _heatmap_text(a: np.ndarray, best: np.ndarray, z: np.ndarray, c: float, current) -> dict:
    """The heatmap in words (its range, the best K along alpha, the student's point) and,
    as a table, the best K and its speedup at alpha = 0, 0.1, .., 1 (nearest grid columns)."""
    k_max = z.shape[0]
    pick = sorted({int(np.argmin(np.abs(a - x))) for x in TABLE_ALPHAS})  # grid columns
    rows = [(a[j], int(best[j]), z[best[j] - 1, j], z[0, j]) for j in pick]
    summary = (
        f"Heatmap of the speedup over alpha (0 to 1) and K (1 to {k_max}), c = c_q / c_p = "
        f"{c:.3g}: from {fmt(z.min())}x to {fmt(z.max())}x. The best K grows with alpha: "
        f"K = {best[0]} at alpha = {fmt(a[0])}, K = {best[len(a) // 2]} at alpha = "
        f"{fmt(a[len(a) // 2])}, K = {best[-1]} at alpha = {fmt(a[-1])}."
    )
    if current is not None:
        alpha_now, k_now = current
        summary += f" You are at alpha = {fmt(alpha_now)}, K = {k_now}."
    columns = ("alpha", "best K", "its speedup (x)", "K = 1 gives (x)")
    return text_meta(summary, columns, rows)


def time_table(alpha: float, k_values, c_q: float, c_p: float) -> pd.DataFrame:
    """The latency table of seed 003 Ex 8, one row per K (sorted, unique).

    Columns, the answers first (a phone shows the first three without a sideways swipe):
    K, time per token = cost / E, speedup = c_p / (time per token), E[tokens] =
    (1 - alpha^(K+1)) / (1 - alpha), cost per round = K c_q + c_p.
    Unrounded: the page rounds for display.
    """
    ks = np.array(sorted({int(k) for k in k_values}))
    e = np.atleast_1d(sc.expected_tokens(alpha, ks))
    tpt = np.atleast_1d(sc.time_per_token(alpha, ks, c_q, c_p))
    return pd.DataFrame(
        {
            "K": ks,
            "time per token": tpt,
            "speedup (x)": np.atleast_1d(sc.speedup(alpha, ks, c_q, c_p)),
            "E[tokens per round]": e,
            "cost per round": ks * c_q + c_p,
        }
    )


def published_table() -> pd.DataFrame:
    """Leviathan et al. 2023 Table 4 next to the formula on its rounded inputs.

    "formula" = (1 - alpha^(K+1)) / ((1 - alpha)(K c + 1)) rounded to 0.1;
    the paper computed from unrounded alpha and c, so a few rows differ by 0.1.
    """
    rows = []
    for i, r in enumerate(sc.PUBLISHED_SPEEDUPS, start=1):
        formula = float(sc.speedup(r["alpha"], r["k"], r["c"], 1.0))
        rows.append(
            {
                "row": i,
                "task": r["task"],
                "draft": r["draft"],
                "T": r["temperature"],
                "K": r["k"],
                "alpha": r["alpha"],
                "c": r["c"],
                "formula": round(formula, 1),
                "paper expected": r["expected"],
                "paper measured": r["measured"],
                "formula - paper expected": round(round(formula, 1) - r["expected"], 1),
            }
        )
    return pd.DataFrame(rows)


def _box(x0: float, width: float, y: str, color: str, text: str, name: str, show: bool) -> dict:
    """One horizontal box of the timeline: a step of ``width`` time units starting at ``x0``."""
    return {
        "type": "bar",
        "x": [width],
        "base": [x0],
        "y": [y],
        "orientation": "h",
        "name": name,
        "legendgroup": name,
        "showlegend": show,
        "marker": {"color": color, "line": {"width": 1, "color": "#333333"}},
        "text": [text],
        "textposition": "inside",
        "insidetextanchor": "middle",
        "hoverinfo": "name",
    }


def _note(x: float, y: str, text: str) -> dict:
    return {"x": x, "y": y, "text": text, "showarrow": False, "xanchor": "left", "xshift": 6}


def timeline_figure(
    k: int = 3, *, c_q: float = 1.0, c_p: float = 4.0, n_accepted: int | None = None
) -> go.Figure:
    """The picture of one round: K cheap draft steps, then ONE target pass over K+1.

    Upper row "speculative round": K draft boxes (width c_q) then a target
    box (width c_p) that checks every draft and adds one token. Lower row
    "target alone": one target box per token. ``n_accepted`` (default K)
    sets how many tokens the round emits (n_accepted + 1).
    """
    k = sc.check_k(k)
    n_acc = k if n_accepted is None else int(n_accepted)
    if not 0 <= n_acc <= k:
        raise sc.InvalidParameterError(f"n_accepted = {n_acc} must lie in 0..{k}.")
    n_out = n_acc + 1
    y_spec, y_plain = "speculative round", "target alone"
    drafts = [
        _box(i * c_q, c_q, y_spec, COLORS["q"], f"x{i + 1}", "draft step (cheap, q)", i == 0)
        for i in range(k)
    ]
    verify = _box(k * c_q, c_p, y_spec, COLORS["p"], f"verify {k} + 1", "target pass (p)", True)
    plain = [
        _box(i * c_p, c_p, y_plain, COLORS["p"], f"token {i + 1}", "target pass (p)", False)
        for i in range(n_out)
    ]
    kept = "all kept + bonus" if n_acc == k else f"{n_acc} kept + 1 resampled"
    # Short title, notes on two lines, the legend under the title: the same shared figure
    # reads on a 390 px phone (the title, a note and the legend were cut or overlapped).
    spec_time, plain_time = k * c_q + c_p, n_out * c_p
    summary = (
        f"Timeline of one round: {k} draft steps of {fmt(c_q)} time units each, then one target "
        f"pass of {fmt(c_p)} that checks them: {n_out} tokens ({kept}) in {fmt(spec_time)} units. "
        f"The target alone needs {n_out} passes, {fmt(plain_time)} units, for the same tokens."
    )
    rows = [(y_spec, f"draft step {i + 1}", i * c_q, c_q) for i in range(k)]
    rows += [(y_spec, f"target pass (verify {k} + 1)", k * c_q, c_p)]
    rows += [(y_plain, f"target pass (token {i + 1})", i * c_p, c_p) for i in range(n_out)]
    notes = [
        _note(k * c_q + c_p, y_spec, f"{n_out} tokens<br>({kept})"),
        _note(n_out * c_p, y_plain, f"{n_out} tokens"),
    ]
    return make_figure(
        [*drafts, verify, *plain],
        title="Same tokens, less time",
        meta=text_meta(summary, ("row", "step", "starts at", "takes"), rows),
        height=340,
        barmode="overlay",
        annotations=notes,
        xaxis={
            "title": {"text": "time →"},
            "showticklabels": False,
            "range": [0, n_out * c_p * 1.5],
        },
        yaxis={"autorange": "reversed", "showgrid": False},  # no line through the notes
    )
