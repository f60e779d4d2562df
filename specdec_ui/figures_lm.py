"""Plotly figures of the "Model pair lab" page (pure builders, no widgets).

Token text can come from the user's prompt: every piece of text goes through
``plotly_escape`` before it reaches a figure. Colour never carries meaning alone: each
kind of token also has a symbol and a word in the legend and in the hover.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .text import plotly_escape
from .theme import COLORS, PATTERN, STATUS_SYMBOL, STATUS_WORD, base_layout

# How a token was produced -> (colour, symbol, word for the legend)
KIND_STYLE = {
    "prompt": ("#E8E8E8", "", "prompt (typed)"),
    "accepted": (COLORS["accepted"], STATUS_SYMBOL["accepted"], "draft token, kept"),
    "resampled": (COLORS["resampled"], STATUS_SYMBOL["resampled"], "resampled after a rejection"),
    "bonus": (COLORS["bonus"], STATUS_SYMBOL["bonus"], "bonus token from the target"),
    "plain": (COLORS["p"], "○", "plain step of the target (no draft)"),
    "target": (COLORS["p"], "", "target token (plain decoding)"),
    "rejected": (COLORS["rejected"], STATUS_SYMBOL["rejected"], STATUS_WORD["rejected"]),
    "discarded": (COLORS["discarded"], STATUS_SYMBOL["discarded"], "discarded (never checked)"),
}
TEXT_WIDTH = 64  # characters per line of the coloured text


def show_token(text: str) -> str:
    """Visible form of a token: newline as '↵', tab as '→' (the text stays exact elsewhere)."""
    return text.replace("\n", "↵").replace("\t", "→")


def layout_tokens(pieces: Sequence[tuple[str, str]], width: int = TEXT_WIDTH):
    """Place tokens on lines of ``width`` characters: (row, col, shown text, kind) each.

    A token that holds a newline ends its line; a token that would cross the right edge
    starts a new line.
    """
    row, col, out = 0, 0, []
    for text, kind in pieces:
        shown = show_token(text) or " "
        if col > 0 and col + len(shown) > width:
            row, col = row + 1, 0
        out.append((row, col, shown, kind))
        col += len(shown)
        if "\n" in text:
            row, col = row + 1, 0
    return out


def token_text_figure(
    pieces: Sequence[tuple[str, str]], *, title: str = "", width: int = TEXT_WIDTH
) -> go.Figure:
    """Text with every token on a coloured background by how it was produced.

    ``pieces``: (token text, kind) in order, kind a key of ``KIND_STYLE``.
    """
    placed = layout_tokens(pieces, width)
    n_rows = (placed[-1][0] + 1) if placed else 1
    fig = go.Figure()
    for kind, (colour, symbol, word) in KIND_STYLE.items():
        mine = [(i, p) for i, p in enumerate(placed) if p[3] == kind]
        if not mine:
            continue
        fig.add_trace(
            go.Bar(
                orientation="h",
                y=[p[0] for _, p in mine],
                x=[len(p[2]) - 0.08 for _, p in mine],
                base=[p[1] + 0.04 for _, p in mine],
                width=0.8,
                marker={"color": colour, "line": {"width": 0}},
                name=f"{symbol} {word}".strip(),
                customdata=[[i + 1, plotly_escape(repr(pieces[i][0]))] for i, _ in mine],
                hovertemplate=(
                    f"token %{{customdata[0]}}: %{{customdata[1]}}<br>{word}<extra></extra>"
                ),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[p[1] + len(p[2]) / 2 for p in placed],
            y=[p[0] for p in placed],
            text=[plotly_escape(p[2]) for p in placed],
            mode="text",
            showlegend=False,
            hoverinfo="skip",
            textfont={"family": "monospace", "size": 15, "color": "#111111"},
        )
    )
    base_layout(fig, title=title, height=max(110, 60 + 26 * n_rows))
    fig.update_layout(barmode="overlay", bargap=0.1)
    fig.update_xaxes(visible=False, range=[-0.5, width + 0.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[n_rows - 0.5, -0.5], fixedrange=True)
    return fig


def _position_title(pos, i: int, token: str) -> str:
    if pos.status == "bonus":
        return "bonus position: p only"
    symbol = STATUS_SYMBOL.get(pos.status, "")
    return f"pos {i + 1}: {plotly_escape(repr(token))} {symbol} {STATUS_WORD.get(pos.status, '')}"


def position_bars_figure(
    positions, vocab: Sequence[str], *, columns: int = 3, n_bars: int = 10
) -> go.Figure:
    """Top tokens of p (target) and q (draft) at each position of one round.

    ``positions``: the round's PositionTrace list (K drafts + the bonus position). Each
    panel shows the ``n_bars`` tokens with the largest max(p, q) among the top-10 of p
    and the top-10 of q; the drafted token is always shown, with a thick black outline
    and a '▶' in its label.
    """
    n = len(positions)
    rows = -(-n // columns)
    titles = [
        _position_title(pos, i, vocab[pos.token] if pos.token >= 0 else "")
        for i, pos in enumerate(positions)
    ]
    fig = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=titles,
        horizontal_spacing=0.06,
        vertical_spacing=0.5 / rows,
    )
    for i, pos in enumerate(positions):
        for trace in _position_traces(pos, vocab, n_bars, show_legend=i == 0):
            fig.add_trace(trace, row=i // columns + 1, col=i % columns + 1)
    base_layout(fig, height=80 + 230 * rows)
    fig.update_yaxes(range=[0, 1], fixedrange=True)
    fig.update_xaxes(tickangle=-45, fixedrange=True, tickfont={"size": 12})
    fig.update_annotations(font_size=13)
    return fig


def _position_traces(pos, vocab: Sequence[str], n_bars: int, *, show_legend: bool) -> list:
    """The p bars (and the q bars, except at the bonus position) of one position."""
    bars = list(pos.bars[:n_bars])
    if pos.token >= 0 and all(t != pos.token for t, _, _ in bars):
        bars[-1] = next(b for b in pos.bars if b[0] == pos.token)
    labels = [("▶" if t == pos.token else "") + plotly_escape(repr(vocab[t])) for t, _, _ in bars]
    outline = [3 if t == pos.token else 0 for t, _, _ in bars]
    traces = [
        go.Bar(
            x=labels,
            y=[p for _, p, _ in bars],
            name="p (target)",
            marker={"color": COLORS["p"], "line": {"width": outline, "color": "#000"}},
            legendgroup="p",
            showlegend=show_legend,
            hovertemplate="%{x}: p = %{y:.3f}<extra></extra>",
        )
    ]
    if pos.status != "bonus":
        traces.append(
            go.Bar(
                x=labels,
                y=[q for _, _, q in bars],
                name="q (draft)",
                marker={
                    "color": COLORS["q"],
                    "pattern": {"shape": PATTERN["q"]},
                    "line": {"width": outline, "color": "#000"},
                },
                legendgroup="q",
                showlegend=show_legend,
                hovertemplate="%{x}: q = %{y:.3f}<extra></extra>",
            )
        )
    return traces


def coin_figure(positions) -> go.Figure:
    """Each checked position: keep zone [0, a) with a = min(1, p/q), reject zone, the coin u."""
    checked = [(i, p) for i, p in enumerate(positions) if p.coin is not None]
    fig = go.Figure()
    ys = [f"pos {i + 1}" for i, _ in checked]
    fig.add_trace(
        go.Bar(
            orientation="h",
            y=ys,
            x=[p.acceptance_probability for _, p in checked],
            name=f"{STATUS_SYMBOL['accepted']} keep if u < a = min(1, p/q)",
            marker={"color": COLORS["accepted"]},
            hovertemplate="a = %{x:.3f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            orientation="h",
            y=ys,
            x=[1 - p.acceptance_probability for _, p in checked],
            base=[p.acceptance_probability for _, p in checked],
            name=f"{STATUS_SYMBOL['rejected']} reject",
            marker={"color": COLORS["rejected"], "opacity": 0.45},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[p.coin for _, p in checked],
            y=ys,
            mode="markers+text",
            name="coin u",
            text=[f"u = {p.coin:.2f}" for _, p in checked],
            textposition="middle right",
            marker={"color": COLORS["coin"], "size": 14, "symbol": "diamond"},
            hovertemplate="u = %{x:.3f}<extra></extra>",
        )
    )
    base_layout(fig, title="The coins", height=120 + 50 * max(1, len(checked)))
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(range=[0, 1], title="probability", fixedrange=True)
    fig.update_yaxes(autorange="reversed", fixedrange=True)
    return fig


def final_figure(
    top: Sequence[tuple[int, float]], chosen: int, vocab: Sequence[str], *, kind: str
) -> go.Figure:
    """The distribution the round's last token came from, the chosen token outlined.

    kind "resample": norm(max(0, p - q)) at the rejected position; "bonus": p_{K+1}.
    """
    colour = COLORS["residual"] if kind == "resample" else COLORS["p"]
    labels = [("▶" if t == chosen else "") + plotly_escape(repr(vocab[t])) for t, _ in top]
    title = (
        "Resample from the leftover norm(max(0, p − q))"
        if kind == "resample"
        else "Bonus token from p at position K+1"
    )
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[pr for _, pr in top],
            marker={
                "color": colour,
                "line": {"width": [3 if t == chosen else 0 for t, _ in top], "color": "#000"},
            },
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            name=title,
        )
    )
    base_layout(fig, title=title, height=300)
    fig.update_yaxes(range=[0, 1], fixedrange=True)
    fig.update_xaxes(tickangle=-45, fixedrange=True)
    return fig


def speedup_figure(rows: Sequence[tuple[str, float]]) -> go.Figure:
    """Horizontal bars of speedups (measured and predicted) with the break-even line at 1."""
    colours = [COLORS["accepted"] if name == "measured" else COLORS["theory"] for name, _ in rows]
    fig = go.Figure(
        go.Bar(
            orientation="h",
            y=[n for n, _ in rows],
            x=[v for _, v in rows],
            marker={"color": colours},
            text=[f"{v:.2f}x" for _, v in rows],
            textposition="outside",
            hovertemplate="%{y}: %{x:.2f}x<extra></extra>",
        )
    )
    fig.add_vline(
        x=1.0, line_dash="dash", annotation_text="no gain (1x)", annotation_position="bottom right"
    )
    base_layout(fig, title="Speedup over plain decoding", height=110 + 45 * len(rows))
    fig.update_xaxes(range=[0, max(2.0, 1.25 * max(v for _, v in rows))], fixedrange=True)
    fig.update_yaxes(autorange="reversed", fixedrange=True)
    return fig
