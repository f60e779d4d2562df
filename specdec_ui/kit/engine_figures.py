"""The engines' acceptance numbers as a chart and as the log line vLLM prints (pure, no widgets).

:mod:`specdec_core.engine_metrics` computes the numbers; this module draws them:
:func:`position_rates_figure` (the unconditional rate r_i at each draft position as bars,
the conditional rate r_i / r_{i-1} as markers, the i.i.d. fit alpha^i as a dashed line)
and :func:`vllm_log_line` (the line ``SpecDecoding metrics: ...`` with this run's numbers).
"""

from __future__ import annotations

import plotly.graph_objects as go

from specdec_core.engine_metrics import AcceptanceMetrics
from specdec_ui.kit.theme import COLORS, base_layout

# One line that says which engine word names which number (shown under every panel).
ENGINE_WORDS = (
    "In the engines' words: vLLM's “Mean acceptance length” is AL (bonus token included), its "
    "“Per-position acceptance rate” is the unconditional r_i (share of all rounds whose draft "
    "i was kept) and its “Avg Draft acceptance rate” is accepted / draft tokens, which is "
    "(AL − 1) / K when every round drafts K tokens and more when rounds draft fewer; SGLang's "
    "“accept length” is AL. No engine prints the conditional rates r_i / r_{i−1}: divide them "
    "yourself."
)


def position_rates_figure(metrics: AcceptanceMetrics, *, title: str = "") -> go.Figure:
    """Bars r_i (unconditional), markers r_i / r_{i-1} (conditional), dashed alpha_hat^i."""
    positions = list(range(1, metrics.k + 1))
    conditional = [c for c in metrics.conditional_rates]
    alpha = metrics.fitted_alpha
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=positions,
            y=list(metrics.rates),
            name="r_i: rounds that kept draft i (unconditional)",
            marker={"color": COLORS["accepted"]},
            text=[f"{r:.3f}" for r in metrics.rates],
            textposition="auto",  # inside a tall bar: the conditional marker at r_1 sits on top
            hovertemplate="position %{x}: r = %{y:.3f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=positions,
            y=conditional,
            mode="markers",
            name="r_i / r_(i−1): kept, given draft i − 1 was",
            marker={"color": COLORS["theory"], "size": 12, "symbol": "diamond"},
            hovertemplate="position %{x}: conditional %{y:.3f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=positions,
            y=[alpha**i for i in positions],
            mode="lines",
            name=f"i.i.d. fit: α^i with α = {alpha:.3f}",
            line={"dash": "dash", "color": COLORS["discarded"], "width": 3},
            hovertemplate="position %{x}: α^i = %{y:.3f}<extra></extra>",
        )
    )
    base_layout(fig, title=title, height=360)
    # Under the axis title: hung from the figure's bottom edge, so plotly's automargin lifts the
    # plot (and its axis title) above it at any font size (presenter view enlarges both).
    fig.update_layout(legend={"yref": "container", "y": 0, "yanchor": "bottom"})
    fig.update_xaxes(title="draft position i", tickvals=positions, fixedrange=True)
    fig.update_yaxes(range=[0, 1.12], title="rate", fixedrange=True)
    return fig


def vllm_log_line(metrics: AcceptanceMetrics) -> str:
    """The numbers as vLLM's ``SpecDecoding metrics`` log line prints them (without its
    throughputs, which need a clock). The token counts need the number of rounds; typed
    rates have none, so they are left out. "Avg Draft acceptance rate" is accepted / draft
    tokens, as vLLM computes it."""
    rates = ", ".join(f"{r:.3f}" for r in metrics.rates)
    counts = ""
    if metrics.rounds is not None:
        accepted, drafted = round(metrics.accepted_tokens), round(metrics.drafted_tokens)
        counts = f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, "
    return (
        f"SpecDecoding metrics: Mean acceptance length: {metrics.mean_acceptance_length:.2f}, "
        f"{counts}Per-position acceptance rate: {rates}, "
        f"Avg Draft acceptance rate: {100 * metrics.accepted_per_drafted:.1f}%"
    )
