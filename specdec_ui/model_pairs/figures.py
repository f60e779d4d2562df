"""Plotly figures of the "Model pair lab" page (pure builders, no widgets).

Token text can come from the user's prompt: every piece of text goes through
``plotly_escape`` before it reaches a figure. Colour never carries meaning alone: each
kind of token also has a symbol and a word in the legend and in the hover. The coloured
text itself is markdown (:mod:`specdec_ui.kit.token_text`), which wraps on any screen.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specdec_ui.kit.chart_text import fmt, listing, with_text
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import (
    COLORS,
    OUTLINE,
    PATTERN,
    STATUS_SYMBOL,
    STATUS_WORD,
    base_layout,
    legend_under_title,
)

FINAL_TITLE = {  # the distribution a round's last token comes from, by the round's end
    # short enough for a third of a projector's width at 22 px (the caption says the rest)
    "resample": "Resample from max(0, p − q)",
    "bonus": "Bonus token from p",
    "plain": "Plain step: from p",
}


def _position_title(pos, i: int) -> str:
    """A panel's title: its position and what happened there (the ▶ label under the bars
    names the drafted token): short enough for a third of a projector's width."""
    if pos.status == "bonus":
        return "bonus: p only"
    symbol = STATUS_SYMBOL.get(pos.status, "")
    return f"pos {i + 1} {symbol} {STATUS_WORD.get(pos.status, '')}"


BARS_HEIGHT = 330  # px: one row of panels, whatever the round's length


def _short_title(pos, i: int) -> str:
    """A narrow panel's title: the position and its symbol ("3 ✗", "bonus")."""
    return "bonus" if pos.status == "bonus" else f"{i + 1} {STATUS_SYMBOL.get(pos.status, '')}"


def position_bars_figure(
    positions, vocab: Sequence[str], *, columns: int | None = None, n_bars: int | None = None
) -> go.Figure:
    """Top tokens of p (target) and q (draft) at each position of one round.

    ``positions``: the round's PositionTrace list (K drafts + the bonus position). Each
    panel shows the ``n_bars`` tokens with the largest max(p, q) among the top-10 of p
    and the top-10 of q; the drafted token is always shown, outlined (theme.OUTLINE)
    and a '▶' in its label. All positions sit in one row: up to 3 with 10 bars each, a
    longer round (K up to 8) with 5 bars each and short titles
    ("3 ✗"), so the round's decision stays in a projector's first screen.
    """
    n = len(positions)
    columns = columns or n
    n_bars = n_bars or (10 if n <= 3 else 5)
    rows = -(-n // columns)
    title = _position_title if n <= 3 else _short_title
    titles = [title(pos, i) for i, pos in enumerate(positions)]
    fig = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=titles,
        shared_yaxes=True,  # one probability scale: ticks on the first panel of a row
        horizontal_spacing=0.04,
        vertical_spacing=0.5 / rows,
    )
    for i, pos in enumerate(positions):
        for trace in _position_traces(pos, vocab, n_bars, show_legend=i == 0):
            fig.add_trace(trace, row=i // columns + 1, col=i % columns + 1)
    height = BARS_HEIGHT if n <= 3 else BARS_HEIGHT - 30  # the checks' line sits above
    base_layout(fig, height=height if rows == 1 else 100 + 230 * rows)
    # The legend hangs from the figure's top edge, above the first row's subplot titles.
    fig.update_layout(legend={"yref": "container", "y": 1, "yanchor": "top"}, margin={"t": 80})
    fig.update_yaxes(range=[0, 1], fixedrange=True)
    fig.update_xaxes(tickangle=-45, fixedrange=True, tickfont={"size": 12})
    fig.update_annotations(font_size=13)
    return _position_bars_text(fig, positions, vocab, n_bars)


def _position_bars_text(fig: go.Figure, positions, vocab: Sequence[str], n_bars: int):
    """Each position in words (its drafted token, p and q there, what happened) and the
    bars of every panel as one table (position, token, p, q)."""
    said, rows = [], []
    for i, pos in enumerate(positions):
        bars = list(pos.bars[:n_bars])
        if pos.token >= 0 and all(t != pos.token for t, _, _ in bars):
            bars[-1] = next(b for b in pos.bars if b[0] == pos.token)
        where = "bonus position" if pos.status == "bonus" else f"pos {i + 1}"
        rows += [
            (where, repr(vocab[t]), pr, "" if pos.status == "bonus" else qr, t == pos.token)
            for t, pr, qr in bars
        ]
        mine = next((b for b in bars if b[0] == pos.token), None)
        if mine is None:
            continue
        word = STATUS_WORD.get(pos.status, pos.status)
        q_part = "" if pos.status == "bonus" else f", q {fmt(mine[2])}"
        said.append(f"{where}: {repr(vocab[pos.token])} {word} (p {fmt(mine[1])}{q_part})")
    summary = (
        f"The target p and the draft q over their top tokens at each of the {len(positions)} "
        f"positions of this round; the token taken at each position: {listing(said, limit=9)}."
    )
    return with_text(fig, summary, ("position", "token", "p", "q", "drafted or taken"), rows)


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
            marker={"color": COLORS["p"], "line": {"width": outline, "color": OUTLINE}},
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
                    "line": {"width": outline, "color": OUTLINE},
                },
                legendgroup="q",
                showlegend=show_legend,
                hovertemplate="%{x}: q = %{y:.3f}<extra></extra>",
            )
        )
    return traces


def coin_figure(positions) -> go.Figure:
    """Each checked position: keep zone [0, a) with a = min(1, p/q), reject zone, the coin u.

    Each row's label carries its coin ("pos 1: u = 0.72"), in the page's text colour: a
    label beside the diamond was cut at the right edge and sat on the bars' fill. The
    legend hangs under the title and pushes the plot down when it wraps in a narrow column.
    """
    checked = [(i, p) for i, p in enumerate(positions) if p.coin is not None]
    fig = go.Figure()
    ys = [f"pos {i + 1}: u = {p.coin:.2f}" for i, p in checked]
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
            mode="markers",
            name="coin u",
            marker={
                "color": COLORS["coin"],
                "size": 14,
                "symbol": "diamond",
                "line": {"color": "#FFFFFF", "width": 2},  # seen on a dark background too
            },
            hovertemplate="u = %{x:.3f}<extra></extra>",
        )
    )
    legend_under_title(base_layout(fig, title="The coins", height=170 + 50 * max(1, len(checked))))
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(range=[0, 1], title="probability", fixedrange=True)
    fig.update_yaxes(autorange="reversed", fixedrange=True)
    rows = [(f"pos {i + 1}", p.acceptance_probability, p.coin, _verdict(p)) for i, p in checked]
    said = [f"{pos}: a = {fmt(a)}, u = {fmt(u)}, {verdict}" for pos, a, u, verdict in rows]
    summary = (
        f"The coins of this round: each checked draft is kept when its coin u < a = "
        f"min(1, p/q). {listing(said, limit=9) if said else 'No draft was checked'}."
    )
    return with_text(fig, summary, ("position", "a = min(1, p/q)", "coin u", "result"), rows)


def _verdict(pos) -> str:
    """A checked position's result in words: kept when its coin fell below a."""
    return STATUS_WORD["accepted"] if pos.coin < pos.acceptance_probability else "rejected"


def final_figure(
    top: Sequence[tuple[int, float]], chosen: int, vocab: Sequence[str], *, kind: str
) -> go.Figure:
    """The distribution the round's last token came from, the chosen token outlined.

    kind "resample": norm(max(0, p - q)) at the rejected position; "bonus": p_{K+1};
    "plain": p at the only position of a round whose draft proposed nothing.
    """
    colour = COLORS["residual"] if kind == "resample" else COLORS["p"]
    labels = [("▶" if t == chosen else "") + plotly_escape(repr(vocab[t])) for t, _ in top]
    title = FINAL_TITLE[kind]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=[pr for _, pr in top],
            marker={
                "color": colour,
                "line": {"width": [3 if t == chosen else 0 for t, _ in top], "color": OUTLINE},
            },
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
            name=title,
        )
    )
    base_layout(fig, title=title, height=300)
    fig.update_yaxes(range=[0, 1], fixedrange=True)
    fig.update_xaxes(tickangle=-45, fixedrange=True)
    rows = [(repr(vocab[t]), pr, t == chosen) for t, pr in top]
    shown = listing([f"{tok} {fmt(pr)}" for tok, pr, _ in rows])
    taken = next((f" The token taken: {tok} ({fmt(pr)})." for tok, pr, c in rows if c), "")
    summary = f"{title}: its top {len(rows)} tokens, {shown}.{taken}"
    return with_text(fig, summary, ("token", "probability", "taken"), rows)


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
    fig.add_vline(x=1.0, line_dash="dash")  # named in the axis title: no label on the bars
    base_layout(fig, title="Speedup over plain decoding", height=130 + 45 * len(rows))
    fig.update_xaxes(
        range=[0, max(2.0, 1.25 * max(v for _, v in rows))],
        title="speedup (dashed line: 1x, no gain)",
        fixedrange=True,
    )
    fig.update_yaxes(autorange="reversed", fixedrange=True)
    said = listing([f"{name} {v:.2f}x" for name, v in rows])
    summary = f"Speedup over plain decoding (1x: no gain, below 1x: slower): {said}."
    return with_text(fig, summary, ("speedup of", "x"), rows)


def draft_lengths_figure(draft_sizes, accepted_sizes) -> go.Figure:
    """Per round: the drafts proposed (outlined bars) and the drafts kept (filled, inside)."""
    rounds = list(range(1, len(draft_sizes) + 1))
    fig = go.Figure(
        [
            go.Bar(
                x=rounds,
                y=list(draft_sizes),
                name="drafts proposed",
                marker={"color": "rgba(0, 0, 0, 0)", "line": {"color": COLORS["q"], "width": 2}},
                hovertemplate="round %{x}: %{y} drafted<extra></extra>",
            ),
            go.Bar(
                x=rounds,
                y=list(accepted_sizes),
                name=f"{STATUS_SYMBOL['accepted']} drafts kept",
                marker={"color": COLORS["accepted"]},
                width=0.5,
                hovertemplate="round %{x}: %{y} kept<extra></extra>",
            ),
        ]
    )
    legend_under_title(base_layout(fig, title="Draft length chosen in each round", height=320))
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title="round", fixedrange=True)
    fig.update_yaxes(title="tokens", dtick=1, rangemode="tozero", fixedrange=True)
    drafted, kept = sum(draft_sizes), sum(accepted_sizes)
    summary = (
        f"Draft length chosen in each of {len(rounds)} rounds: "
        f"{fmt(min(draft_sizes, default=0))} to {fmt(max(draft_sizes, default=0))} drafts a "
        f"round, {fmt(drafted)} proposed and {fmt(kept)} kept in all."
    )
    rows = list(zip(rounds, draft_sizes, accepted_sizes, strict=True))
    return with_text(fig, summary, ("round", "drafts proposed", "drafts kept"), rows)


def round_costs_figure(verify: Sequence[float], whole: Sequence[float]) -> go.Figure:
    """What a round of k drafts costs in plain target steps, k = 0..K: ``verify`` v(k)
    (the target's check) and ``whole`` C(k), the round with its drafting
    (:func:`specdec_core.lm.adaptive.round_costs`)."""
    ks = list(range(len(verify)))
    fig = go.Figure(
        [
            go.Scatter(
                x=ks,
                y=list(verify),
                mode="lines+markers",
                name="v(k): checking k drafts",
                line={"color": COLORS["p"], "width": 3},
                hovertemplate="k = %{x}: v = %{y:.2f} steps<extra></extra>",
            ),
            go.Scatter(
                x=ks,
                y=list(whole),
                mode="lines+markers",
                name="C(k): the whole round, drafting included",
                line={"color": COLORS["q"], "width": 3, "dash": "dash"},
                hovertemplate="k = %{x}: %{y:.2f} steps<extra></extra>",
            ),
        ]
    )
    legend_under_title(base_layout(fig, title="This server's price of a round", height=320))
    fig.update_xaxes(title="drafts checked k", dtick=1, fixedrange=True)
    fig.update_yaxes(title="plain target steps", rangemode="tozero", fixedrange=True)
    summary = (
        f"This server's price of a round in plain target steps, for k = 0 to {ks[-1]} drafts: "
        f"checking them, v(k), from {fmt(verify[0])} to {fmt(verify[-1])}; the whole round "
        f"with its drafting, C(k), from {fmt(whole[0])} to {fmt(whole[-1])}."
    )
    rows = list(zip(ks, verify, whole, strict=True))
    return with_text(fig, summary, ("drafts k", "v(k)", "C(k)"), rows)
