"""Figures and tables of the Serving lab (pure builders of core results, no widgets).

Each builder takes numbers from :mod:`specdec_core.serving` (a ``BatchSweep``, measured
``ServerCosts``, the published checks) and draws them; none reads a widget or holds a
preset. Labels of hardware and models go through ``plotly_escape`` like any other text.
Batch sizes run over orders of magnitude, so the batch axes are logarithmic; vertical
markers are scatter traces (a shape's x on a log axis is easy to get wrong).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from specdec_core.serving import ENGINE_WORK_FIT_ROWS, BatchSweep, ServerCosts
from specdec_core.serving_published import PublishedCheck
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import COLORS, make_figure
from specdec_ui.speedup.figures import hline, k_colors

SERVER_STYLE = {"symbol": "diamond", "size": 16, "color": COLORS["resampled"]}
SERVER_NAME = "this server (CPU, batch 1)"
MARKED_BATCHES = (1, 8, 64, 512)  # labelled points on the throughput-latency curves


def _batch_axis(b_max: int) -> dict:
    """A log axis over 1..b_max, with whole-number ticks."""
    top = max(float(b_max), 2.0)
    return {
        "title": {"text": "batch size b (sequences per step, log scale)"},
        "type": "log",
        "range": [-0.05, np.log10(top) + 0.05],
        "tickformat": ",d",
    }


def _vertical(x: float, y0: float, y1: float, text: str, color: str, name: str) -> dict:
    """A dashed vertical line from y0 to y1 at x with its label at the top."""
    return {
        "type": "scatter",
        "x": [x, x],
        "y": [y0, y1],
        "mode": "lines+text",
        "name": name,
        "showlegend": False,  # labelled in the plot
        "cliponaxis": False,
        "text": ["", text],
        "textposition": "top left",
        "line": {"color": color, "dash": "dash", "width": 2},
        "hoverinfo": "skip",
    }


def _current_marker(x: float, y: float, name: str = "your batch") -> dict:
    return {
        "type": "scatter",
        "x": [x],
        "y": [y],
        "mode": "markers",
        "name": name,
        "marker": {"symbol": "circle-open", "size": 18, "color": COLORS["p"], "line": {"width": 3}},
        "hovertemplate": "b = %{x:,}<br>%{y:.2f}<extra>" + name + "</extra>",
    }


def _server_marker(
    x: float, y: float, text: str, name: str = SERVER_NAME, position: str = "bottom right"
) -> dict:
    """The measured point of this server, labelled in the plot (not in the legend)."""
    return {
        "type": "scatter",
        "x": [x],
        "y": [y],
        "mode": "markers+text",
        "name": name,
        "showlegend": False,
        "cliponaxis": False,
        "text": [text],
        "textposition": position,
        "marker": dict(SERVER_STYLE),
        "hovertemplate": "%{text}<extra>" + name + "</extra>",
    }


def round_label(sweep: BatchSweep) -> str:
    """The round in a few words: "K = 4" for a chain with alpha, "tau 4.0 of 32" for a tree."""
    acc = sweep.acceptance
    if acc.alpha is not None:
        return f"K = {acc.k}"
    return f"tau {acc.tau:.2f} of {acc.verified_tokens} verified"


def _speedup_curves(sweep: BatchSweep) -> list[dict]:
    """The speedup of this round and, with an alpha, at the best K of each batch."""
    traces = [
        {
            "type": "scatter",
            "x": sweep.batch,
            "y": sweep.speedup,
            "mode": "lines",
            "name": f"speedup, {round_label(sweep)}",
            "line": {"color": COLORS["q"], "width": 3},
            "hovertemplate": "b = %{x:,}<br>speedup %{y:.2f}x<extra></extra>",
        }
    ]
    if sweep.best_speedup is not None:
        traces.append(
            {
                "type": "scatter",
                "x": sweep.batch,
                "y": sweep.best_speedup,
                "mode": "lines",
                "name": "best K",
                "customdata": sweep.best_k,
                "line": {"color": COLORS["residual"], "dash": "dash", "width": 2},
                "hovertemplate": "b = %{x:,}: best K = %{customdata}<br>%{y:.2f}x<extra></extra>",
            }
        )
    return traces


def _v_curves(batch: np.ndarray, v_by_tokens: Mapping[int, np.ndarray], current: int) -> list[dict]:
    """v(m, b) for each number of verified tokens m (the current one thicker) and its
    ceiling m (a verify of m tokens costs at most m plain steps)."""
    colors = k_colors(v_by_tokens)
    traces = [
        {
            "type": "scatter",
            "x": batch,
            "y": v,
            "mode": "lines",
            "name": f"{m} tokens",
            "line": {"color": colors[m], "width": 4 if m == current else 2},
            "hovertemplate": f"{m} tokens, " + "b = %{x:,}<br>v = %{y:.2f}<extra></extra>",
        }
        for m, v in sorted(v_by_tokens.items())
    ]
    ceiling = {
        "type": "scatter",
        "x": [batch[0], batch[-1]],
        "y": [current, current],
        "mode": "lines+text",
        "name": "ceiling: as many plain steps as tokens",
        "showlegend": False,
        "text": ["", f"ceiling {current}"],  # at the right end, clear of the labels
        "textposition": "bottom left",  # of the compute-bound line on the left
        "line": {"color": colors[current], "dash": "dot", "width": 1.5},
        "hoverinfo": "skip",
    }
    return [*traces, ceiling]


LEFT_EDGE = 0.2  # share of the log batch axis near its left end where labels go right


def _break_even_trace(sweep: BatchSweep, break_even: int, top: float) -> dict:
    """The break-even batch as a dashed vertical line; its label right of the line when the
    line is near the left edge (a label left of it would be cut there)."""
    span = np.log10(max(float(sweep.batch[-1]), 2.0))
    line = _vertical(
        break_even,
        0,
        top * 1.02,
        f"break-even b = {break_even:,}",
        COLORS["rejected"],
        "break-even batch",
    )
    if np.log10(break_even) < LEFT_EDGE * span:
        line["textposition"] = "top right"
    return line


SLOWER_EVERYWHERE = "slower at every batch size"


def _slower_everywhere() -> dict:
    """A note in the plot for a round that loses at every batch size."""
    return {
        "xref": "paper",
        "x": 1,
        "yref": "paper",
        "y": 0.02,
        "xanchor": "right",
        "yanchor": "bottom",  # the bottom right corner: clear of "no gain (1x)" and of this
        # server's label at the left, and of a curve that loses (it stays above 0)
        "text": SLOWER_EVERYWHERE,
        "showarrow": False,
        "font": {"color": COLORS["rejected"]},
    }


def speedup_vs_batch_figure(
    sweep: BatchSweep,
    *,
    break_even: int | None,
    current: tuple[int, float] | None = None,
    server: ServerCosts | None = None,
    title: str = "",
) -> go.Figure:
    """Speedup tau / (d c + v) against the batch size, and with the best K at each batch.

    Traces: "speedup, <round>", "best K" (dashed, its K in the hover; with an alpha only),
    a dotted line at 1 (no gain), "break-even batch" (vertical, when speculation starts to
    lose past batch 1; at batch 1 a note says it is slower at every batch size instead),
    "your batch" and the measured "this server" point at b = 1 (when given). ``current`` is
    (batch, speedup at that batch).
    """
    best = sweep.best_speedup if sweep.best_speedup is not None else sweep.speedup
    top = max(float(best.max()), 1.0, server.speedup(sweep.alpha) if server else 0.0)
    traces = _speedup_curves(sweep)
    annotations = []
    if break_even is not None and break_even > 1:
        traces.append(_break_even_trace(sweep, break_even, top))
    elif break_even == 1:
        annotations.append(_slower_everywhere())
    if current is not None:
        traces.append(_current_marker(*current))
    shape, label = hline(1.0, "no gain (1x)", color=COLORS["discarded"], position="left")
    if server is not None:
        # the line at 1 parts the two labels at the left edge: the server's on its point's
        # side of the line, "no gain" on the other (they overlapped at a server near 1x)
        value = server.speedup(sweep.alpha)
        above = value >= 1.0
        text = f"{plotly_escape(server.label)}: {value:.2f}x"
        traces.append(
            _server_marker(1, value, text, position=f"{'top' if above else 'bottom'} right")
        )
        label["yanchor"] = "top" if above else "bottom"
    return make_figure(
        traces,
        title=title or f"Speedup vs batch size ({round_label(sweep)})",
        shapes=[shape],
        annotations=[label, *annotations],
        xaxis=_batch_axis(int(sweep.batch[-1])),
        yaxis={"title": {"text": "speedup (x)"}, "range": [0, top * 1.25]},
    )


def verify_cost_figure(
    batch: np.ndarray,
    v_by_tokens: Mapping[int, np.ndarray],
    *,
    current: int,
    compute_bound: int | None = None,
    server: ServerCosts | None = None,
) -> go.Figure:
    """v(m, b) = time(b, m) / time(b, 1) against the batch size, one curve per m tokens.

    Traces: "<m> tokens" curves (the current m thicker; a chain of K verifies K + 1), the
    ceiling of the current m (dotted), "compute-bound from here" (vertical, where the
    current verify's linear layers reach the compute roof) and "this server" (its measured
    v at b = 1, its own K).
    """
    traces = _v_curves(batch, v_by_tokens, current)
    top = max(float(current), server.v if server else 0.0)
    if compute_bound is not None:
        traces.append(
            _vertical(
                compute_bound,
                0.9,
                top * 1.02,
                f"compute-bound from b = {compute_bound:,}",
                COLORS["discarded"],
                "compute-bound from here",
            )
        )
    if server is not None:
        label = f"this server: v({server.k}) = {server.v:.2f}"
        traces.append(_server_marker(1, server.v, label, position="top right"))
    shape, label = hline(1.0, "free verify (v = 1)", color=COLORS["discarded"], position="left")
    return make_figure(
        traces,
        title="Verify cost v(b), in plain steps",
        shapes=[shape],
        annotations=[label],
        xaxis=_batch_axis(int(batch[-1])),
        yaxis={"title": {"text": "v (plain target steps)"}, "range": [0.8, top * 1.2]},
    )


def _marked(batch: np.ndarray, marks: Sequence[int]) -> np.ndarray:
    """Indices of the batches in ``batch`` that are marks, and of the largest batch."""
    return np.flatnonzero(np.isin(batch, marks) | (batch == batch[-1]))


def _curve(x, y, batch, name: str, color: str, dash: str = "solid") -> dict:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "customdata": batch,
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": 3, "dash": dash},
        "hovertemplate": "b = %{customdata:,}<br>%{x:.1f} ms per token, "
        "%{y:,.0f} tokens/s per chip<extra>" + name + "</extra>",
    }


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 tick values from below ``lo`` to above ``hi`` (a log axis without minor digits)."""
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    ticks = [m * 10.0**d for d in decades for m in (1, 2, 5)]
    inside = [t for t in ticks if lo / 2.5 <= t <= hi * 2.5]
    return inside or [lo, hi]


def _log_axis(title: str, values: Sequence[float]) -> dict:
    lo, hi = float(min(values)), float(max(values))
    return {
        "title": {"text": title},
        "type": "log",
        "tickvals": log_ticks(lo, hi),
        "tickformat": "~g",
    }


def _labels(x, y, batch, idx: np.ndarray, color: str, name: str, positions: tuple) -> dict:
    """Labelled points "b=..." at ``idx``: ``positions`` = (the others', the last one's)."""
    return {
        "type": "scatter",
        "x": x[idx],
        "y": y[idx],
        "mode": "markers+text",
        "name": name,
        "showlegend": False,
        "cliponaxis": False,
        "text": [f"b={int(b):,}" for b in batch[idx]],
        "textposition": [positions[0]] * (len(idx) - 1) + [positions[1]],
        "marker": {"color": color, "size": 9},
        "hoverinfo": "skip",
    }


def throughput_latency_figure(
    sweep: BatchSweep, *, server: ServerCosts | None = None, hardware_label: str = ""
) -> go.Figure:
    """Tokens per second per chip against per-sequence ms per token, batch by batch.

    Without speculation a sequence waits one step per token and the chips emit b tokens
    per step; with it a token costs (K draft steps + verify) / E. Traces: "no
    speculation", "with speculation (K = k)", their batch labels, and "this server" plain
    and speculative points (one CPU process at batch 1).
    """
    b = sweep.batch
    plain_x, spec_x = 1e3 * sweep.plain_latency_s, 1e3 * sweep.spec_latency_s
    plain_y, spec_y = sweep.plain_tokens_per_chip, sweep.spec_tokens_per_chip
    idx = _marked(b, MARKED_BATCHES)
    traces = [
        _curve(plain_x, plain_y, b, "no speculation", COLORS["p"]),
        _labels(
            plain_x,
            plain_y,
            b,
            idx,
            COLORS["p"],
            "no speculation, batches",
            ("middle right", "top center"),
        ),
        _curve(spec_x, spec_y, b, f"with speculation ({round_label(sweep)})", COLORS["q"]),
        _labels(
            spec_x,
            spec_y,
            b,
            idx,
            COLORS["q"],
            "with speculation, batches",
            ("middle left", "bottom center"),
        ),
    ]
    xs, ys = [*plain_x, *spec_x], [*plain_y, *spec_y]
    if server is not None:
        ms = 1e3 * server.step_s
        spec_ms = ms / server.speedup(sweep.alpha)
        plain = _server_marker(ms, 1e3 / ms, "this server", "this server, plain", "bottom right")
        spec = _server_marker(
            spec_ms, 1e3 / spec_ms, "speculative", "this server, speculative", "top right"
        )
        spec["marker"] = {**SERVER_STYLE, "symbol": "diamond-open"}
        traces += [plain, spec]
        xs, ys = [*xs, ms, spec_ms], [*ys, 1e3 / ms, 1e3 / spec_ms]
    where = f", {plotly_escape(hardware_label)}" if hardware_label else ""
    return make_figure(
        traces,
        title=f"Tokens/s per chip vs latency{where}",
        height=420,
        xaxis=_log_axis("ms per token, per sequence (log scale)", xs),
        yaxis=_log_axis("tokens/s per chip (log scale)", ys),
    )


PUBLISHED_COLUMNS = {
    "source": "source",
    "setting": "setting",
    "quantity": "quantity",
    "published": "published",
    "predicted": "model",
    "error": "model − published",
    "relative": "signed error (%)",
    "circular": "circular (left out of the median)",
    "role": "role (fits the engine work, checks the model, or circular)",
    "c_published": "c (source)",
    "c_predicted": "c (model)",
    "v_predicted": "v (model)",
    "w_predicted": "w: engine work per round in plain steps (model)",
    "assumed": "assumed",
    "note": "where the model misses, and why",
}
UNITS = {"speedup": "{:.2f}x", "ms per token": "{:.2f} ms", "tokens/s": "{:,.0f} tokens/s"}
NOT_GIVEN = "not given"  # a source that gives no c; never a raw None on screen
NOT_APPLICABLE = "—"  # a step-time row has no c or v


def published_table(rows: Sequence[PublishedCheck]) -> pd.DataFrame:
    """The published checks as numbers (for the CSV): figure, prediction, error, c, v."""
    records = [
        {
            "source": r.source,
            "setting": r.setting,
            "quantity": r.quantity,
            "published": r.published,
            "predicted": r.predicted,
            "error": r.error,
            "relative": 100.0 * r.relative_error,
            "circular": r.circular,
            "role": row_role(r),
            "c_published": r.c_published,
            "c_predicted": r.c_predicted,
            "v_predicted": r.v_predicted,
            "w_predicted": r.w_predicted,
            "assumed": r.assumed,
            "note": r.note,
        }
        for r in rows
    ]
    return pd.DataFrame(records, columns=list(PUBLISHED_COLUMNS)).rename(columns=PUBLISHED_COLUMNS)


ROLES = {
    "fit": "fits the engine work",
    "check": "checks the model",
    "circular": "circular: left out",
}


def row_role(row: PublishedCheck) -> str:
    """A row's part in the checks: it fitted W (engine work per round), checks, or is
    circular (its alpha fitted from its own result)."""
    if row.circular:
        return ROLES["circular"]
    return ROLES["fit"] if row.key in ENGINE_WORK_FIT_ROWS else ROLES["check"]


def _optional(value: float | None, fmt: str, missing: str) -> str:
    return missing if value is None else fmt.format(value)


def published_display(rows: Sequence[PublishedCheck]) -> pd.DataFrame:
    """The same rows as text for the screen: each figure with its unit, the error in %,
    "not given" where a source gives no c and "—" where a row has no c or v (a step time)."""
    records = []
    for r in rows:
        unit = UNITS[r.quantity]
        step = r.quantity == "ms per token"
        records.append(
            {
                "source": r.source,
                "setting": r.setting,
                "published": unit.format(r.published),
                "model": unit.format(r.predicted),
                "signed error (%)": 100.0 * r.relative_error,
                "role": row_role(r),
                "c (source)": _optional(
                    r.c_published, "{:.3f}", NOT_APPLICABLE if step else NOT_GIVEN
                ),
                "c (model)": _optional(r.c_predicted, "{:.3f}", NOT_APPLICABLE),
                "v (model)": _optional(r.v_predicted, "{:.2f}", NOT_APPLICABLE),
                "w (model)": _optional(r.w_predicted, "{:.3f}", NOT_APPLICABLE),
            }
        )
    return pd.DataFrame(records)


# ----------------------------------------------------------------------------- measured
MEASURED_STYLE = {"symbol": "square", "size": 10}


def _measured_trace(x, y, name: str, color: str, *, dash: str = "solid", fits=None) -> dict:
    """Measured points joined by a line; a point that one GPU cannot hold is hollow."""
    symbols = ["square" if ok else "square-open" for ok in (fits or [True] * len(x))]
    return {
        "type": "scatter",
        "x": list(x),
        "y": list(y),
        "mode": "lines+markers",
        "name": name,
        "line": {"color": color, "width": 2, "dash": dash},
        "marker": {**MEASURED_STYLE, "color": color, "symbol": symbols},
        "hovertemplate": "b = %{x:,}<br>%{y:.2f}<extra>" + name + "</extra>",
    }


def _model_trace(x, y, name: str, color: str) -> dict:
    return {
        "type": "scatter",
        "x": list(x),
        "y": list(y),
        "mode": "lines",
        "name": name,
        "line": {"color": color, "width": 3, "dash": "dash"},
        "hovertemplate": "b = %{x:,}<br>%{y:.2f}<extra>" + name + "</extra>",
    }


def measured_v_figure(
    batch: Sequence[int],
    measured: np.ndarray,
    two_gemm: np.ndarray,
    model: np.ndarray,
    *,
    k: int,
    context: int,
    fits: Sequence[bool],
) -> go.Figure:
    """v(K, b) of an 8B-shaped step on one H200: measured (the faster kernel at each shape,
    and the two-GEMM kernel alone) beside the per-layer model. Hollow: a batch whose KV cache
    one H200 cannot hold (timed with reused KV slices)."""
    traces = [
        _measured_trace(
            batch, measured, "measured, faster kernel per shape", COLORS["p"], fits=fits
        ),
        _measured_trace(
            batch,
            two_gemm,
            "measured, two-GEMM attention only",
            COLORS["discarded"],
            dash="dot",
            fits=fits,
        ),
        _model_trace(batch, model, "model (per-layer roofline)", COLORS["q"]),
    ]
    # the label at the right end: at the left the measured points sit on the line
    shape, label = hline(1.0, "free verify (v = 1)", color=COLORS["discarded"], position="right")
    label["yanchor"] = "top"
    top = max(float(np.max(measured)), float(np.max(two_gemm)), float(np.max(model)), 1.0)
    return make_figure(
        traces,
        title=f"v({k}) on one H200, {context:,} tokens",
        shapes=[shape],
        annotations=[label],
        xaxis=_batch_axis(int(batch[-1])),
        yaxis={"title": {"text": f"v({k}) (plain steps)"}, "range": [0.8, top * 1.15]},
    )


def measured_step_figure(
    batch: Sequence[int],
    measured: Mapping[int, np.ndarray],
    model: Mapping[int, np.ndarray],
    *,
    context: int,
    fits: Sequence[bool],
) -> go.Figure:
    """Step time in ms against the batch, per tokens per sequence: measured markers
    (the faster kernel) and the model's dashed lines in the same colour."""
    colors = k_colors(measured)
    traces = []
    for m in sorted(measured):
        traces.append(
            _measured_trace(batch, measured[m], f"{m} token(s), measured", colors[m], fits=fits)
        )
        traces.append(_model_trace(batch, model[m], f"{m} token(s), model", colors[m]))
    values = [v for arr in (*measured.values(), *model.values()) for v in arr]
    return make_figure(
        traces,
        title=f"Step time on one H200, {context:,} tokens",
        xaxis=_batch_axis(int(batch[-1])),
        yaxis=_log_axis("ms per step (log scale)", values),
    )
