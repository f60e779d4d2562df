"""Figures of the Serving lab's "Under load" section (pure builders, no widgets).

Each builder draws numbers of :mod:`specdec_core.serving_load` (a ``LoadSweep``, the
switch-off rule's choice, a ``MemoryCurve``) and writes its text alternative from the same
arrays (:func:`specdec_ui.kit.chart_text.text_meta`). QPS and context run over orders of
magnitude: their axes are logarithmic, and vertical markers are scatter traces.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from specdec_core.serving_load import LoadSweep, MemoryCurve
from specdec_ui.kit.chart_text import fmt, text_meta
from specdec_ui.kit.theme import COLORS, make_figure
from specdec_ui.serving.figures import log_ticks

PLAIN_NAME = "plain decoding"
SPEC_NAME = "with speculation"
RULE_NAME = "switch-off rule"
OVERLOADED = "cannot keep up"


def _qps_axis(qps: np.ndarray) -> dict:
    """A log QPS axis with 1-2-5 ticks (plotly's minor digits overlap in presenter view)."""
    return {
        "title": {"text": "requests per second (QPS, log scale)"},
        "type": "log",
        "tickvals": log_ticks(float(qps[0]), float(qps[-1])),
        "tickformat": "~g",
    }


def _line(x, y, name: str, color: str, dash: str = "solid", width: int = 3) -> dict:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": {"color": color, "dash": dash, "width": width},
        "connectgaps": False,
        "hovertemplate": "QPS %{x:.3g}<br>%{y:.3g}<extra>" + name + "</extra>",
    }


def _vertical(x: float, top: float, text: str, color: str, name: str, side: str) -> dict:
    return {
        "type": "scatter",
        "x": [x, x],
        "y": [0, top],
        "mode": "lines+text",
        "name": name,
        "showlegend": False,
        "cliponaxis": False,
        "text": ["", text],
        "textposition": f"top {side}",
        "line": {"color": color, "dash": "dash", "width": 2},
        "hoverinfo": "skip",
    }


def _side(x: float, qps: np.ndarray) -> str:
    """Label a marker on its left unless it sits in the left third of the log axis."""
    span = np.log10(qps[-1] / qps[0])
    return "right" if np.log10(x / qps[0]) < span / 3 else "left"


def _last_kept(qps: np.ndarray, tpot: np.ndarray) -> str:
    kept = qps[~np.isnan(tpot)]
    return f"up to QPS {fmt(float(kept[-1]))}" if kept.size else "at no QPS shown"


def latency_summary(sweep: LoadSweep, crossover: float | None) -> str:
    """The latency chart in words: both curves' ends and where speculation stops paying."""
    i = 0
    words = (
        f"Time per output token against QPS. At QPS {fmt(float(sweep.qps[i]))}: "
        f"{fmt(1e3 * float(sweep.plain_tpot_s[i]))} ms plain, "
        f"{fmt(1e3 * float(sweep.spec_tpot_s[i]))} ms with speculation. "
        f"Plain decoding keeps up {_last_kept(sweep.qps, sweep.plain_tpot_s)}, speculation "
        f"{_last_kept(sweep.qps, sweep.spec_tpot_s)}."
    )
    if crossover is None:
        return words + " Speculation is faster at every QPS shown."
    return words + f" Speculation stops paying from QPS {fmt(crossover)}."


def latency_figure(
    sweep: LoadSweep,
    *,
    crossover: float | None,
    rule: np.ndarray | None = None,
    title: str = "Time per output token against load",
) -> go.Figure:
    """Per-token latency (ms) against QPS, plain and speculative, gaps where a server cannot
    keep up; the switch-off rule's latency (``rule``: TPOT in s at each QPS, dotted) and the
    crossover QPS (vertical, when speculation stops paying)."""
    plain, spec = 1e3 * sweep.plain_tpot_s, 1e3 * sweep.spec_tpot_s
    traces = [
        _line(sweep.qps, plain, PLAIN_NAME, COLORS["p"]),
        _line(sweep.qps, spec, SPEC_NAME, COLORS["q"]),
    ]
    if rule is not None:
        traces.append(_line(sweep.qps, 1e3 * rule, RULE_NAME, COLORS["residual"], "dot", 4))
    top = float(np.nanmax(np.concatenate([plain, spec]))) if np.any(np.isfinite(spec)) else 1.0
    if crossover is not None:
        traces.append(
            _vertical(
                crossover,
                top,
                f"stops paying: QPS {fmt(crossover)}",
                COLORS["rejected"],
                "crossover QPS",
                _side(crossover, sweep.qps),
            )
        )
    rows = [
        (q, p, s, r)
        for q, p, s, r in zip(
            sweep.qps, plain, spec, plain if rule is None else 1e3 * rule, strict=True
        )
    ]
    return make_figure(
        traces,
        title=title,
        xaxis=_qps_axis(sweep.qps),
        yaxis={"title": {"text": "ms per output token"}, "rangemode": "tozero"},
        meta=text_meta(
            latency_summary(sweep, crossover),
            ("QPS", "plain (ms)", "speculation (ms)", "with the rule (ms)"),
            [tuple(OVERLOADED if np.isnan(v) else v for v in row) for row in rows],
        ),
    )


def throughput_figure(sweep: LoadSweep, title: str = "Tokens served against load") -> go.Figure:
    """Output tokens per second against QPS: qps x output up to each server's capacity (the
    most QPS it sustains, SmartSpec's goodput), flat past it."""
    plain, spec = sweep.plain_tokens_per_s, sweep.spec_tokens_per_s
    summary = (
        f"Output tokens per second against QPS. Plain decoding sustains up to "
        f"{fmt(sweep.plain_capacity)} requests per second ({fmt(float(plain.max()))} tokens/s "
        f"at most here), speculation up to {fmt(sweep.spec_capacity)} "
        f"({fmt(float(spec.max()))} tokens/s)."
    )
    return make_figure(
        [
            _line(sweep.qps, plain, PLAIN_NAME, COLORS["p"]),
            _line(sweep.qps, spec, SPEC_NAME, COLORS["q"], "dash"),
        ],
        title=title,
        xaxis=_qps_axis(sweep.qps),
        yaxis={"title": {"text": "output tokens per second"}, "rangemode": "tozero"},
        meta=text_meta(
            summary,
            ("QPS", "plain (tokens/s)", "speculation (tokens/s)"),
            list(zip(sweep.qps, plain, spec, strict=True)),
        ),
    )


def memory_summary(curve: MemoryCurve, context: int) -> str:
    i = int(np.argmin(np.abs(curve.context - context)))
    n = int(curve.context[i])
    words = (
        f"The largest batch that fits against the context. At {n:,} tokens: "
        f"{int(curve.without_draft[i]):,} sequences without the draft, "
        f"{int(curve.with_draft[i]):,} with it."
    )
    if curve.binds_from is None:
        return words + f" The KV cache never caps the batch below {curve.max_seqs:,}."
    return words + (
        f" From {curve.binds_from:,} tokens the KV cache, not max_num_seqs "
        f"({curve.max_seqs:,}), caps the batch."
    )


def _context_marker(curve: MemoryCurve, context: int) -> dict:
    """The workload's mean context on the with-draft curve (the nearest context drawn)."""
    i = int(np.argmin(np.abs(curve.context - context)))
    return {
        "type": "scatter",
        "x": [int(curve.context[i])],
        "y": [max(float(curve.with_draft[i]), 1.0)],
        "mode": "markers",
        "name": "your requests' mean context",
        "marker": {"symbol": "circle-open", "size": 16, "color": COLORS["p"]},
        "hovertemplate": "%{x:,} tokens: %{y:,} sequences<extra></extra>",
    }


def memory_figure(
    curve: MemoryCurve, *, context: int, title: str = "Memory against batch"
) -> go.Figure:
    """The largest batch (memory after the weights / KV bytes per sequence) against the
    context, with and without the draft; max_num_seqs as a dotted line, the context from
    which the KV cache binds as a vertical, the workload's mean context as a point."""
    ctx = curve.context
    top = float(max(curve.without_draft.max(), curve.max_seqs, 2))
    traces = [
        _line(ctx, curve.without_draft, "without the draft", COLORS["p"]),
        _line(ctx, curve.with_draft, "with the draft", COLORS["q"], "dash"),
        {
            "type": "scatter",
            "x": [ctx[0], ctx[-1]],
            "y": [curve.max_seqs, curve.max_seqs],
            "mode": "lines",
            "name": f"max_num_seqs = {curve.max_seqs:,}",
            "line": {"color": COLORS["discarded"], "dash": "dot", "width": 2},
            "hoverinfo": "skip",
        },
    ]
    if curve.binds_from is not None and ctx[0] <= curve.binds_from <= ctx[-1]:
        span = np.array([ctx[0], ctx[-1]], dtype=float)
        traces.append(
            _vertical(
                curve.binds_from,
                top,
                f"KV cache binds: {curve.binds_from:,} tokens",
                COLORS["rejected"],
                "KV cache binds",
                _side(float(curve.binds_from), span),
            )
        )
    traces.append(_context_marker(curve, context))
    return make_figure(
        traces,
        title=title,
        xaxis={
            "title": {"text": "context per sequence (tokens, log scale)"},
            "type": "log",
            "tickvals": log_ticks(float(ctx[0]), float(ctx[-1])),
            "tickformat": "~s",
        },
        yaxis={
            "title": {"text": "largest batch that fits (log scale)"},
            "type": "log",
            "range": [0, np.log10(top) + 0.15],
            "tickvals": [10.0**d for d in range(int(np.log10(top)) + 2)],
            "tickformat": ",d",
        },
        meta=text_meta(
            memory_summary(curve, context),
            ("context (tokens)", "without the draft", "with the draft"),
            list(zip(ctx, curve.without_draft, curve.with_draft, strict=True)),
        ),
    )
