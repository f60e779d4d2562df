"""Plotly figures of the "Step through a round" page (pure builders, no widgets).

Colours, symbols and words come from :mod:`specdec_ui.kit.theme`: q is blue and
hatched, p orange, the residual max(0, p - q) green (seed 003 Ex 6: "the blue
bars are q, the yellow bars are p, the green bars are the leftover").
Vocabulary labels are user text: every label goes through ``plotly_escape``
before it reaches a figure, so ``<img src=x onerror=...>`` shows as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, get_args

import numpy as np
import plotly.graph_objects as go

import specdec_core as sc
from specdec_ui.kit.chart_text import fmt, listing, text_meta
from specdec_ui.kit.text import plotly_escape
from specdec_ui.kit.theme import COLORS, OUTLINE, PATTERN, STATUS_SYMBOL, STATUS_WORD, make_figure

if TYPE_CHECKING:
    from specdec_ui.round.story import RoundStory

DIM = 0.35  # opacity of the bars that are not the token in focus
PENDING_FILL = "#DDDDDD"  # a draft that has not been checked yet
# Every status a chip can show: the core's DraftStatus, its final-token statuses, "pending".
CHIP_STATUSES = (*get_args(sc.DraftStatus), *sc.FINAL_STATUS.values(), "pending")
CHIP_LABEL_MAX = 7  # characters of a label shown inside a chip (the hover shows all)
ROW_DRAFT = "drafts"
ROW_OUTPUT = "output"


def _values(v: Sequence[float]) -> list[float]:
    return [float(x) for x in np.asarray(v, dtype=np.float64)]


def _bar_text(v: Sequence[float]) -> list[str]:
    return ["0" if x == 0 else f"{x:.2f}" if x >= 0.005 else f"{x:.2g}" for x in _values(v)]


def _figure(data: list[dict], layout: dict, *, title: str, height: int) -> go.Figure:
    return make_figure(data, title=title, height=height, **layout)


def _focus_set(highlight: int | Sequence[int] | None, n: int) -> set[int]:
    """The tokens a chart is about: one index, several, or (None) all of them."""
    if highlight is None:
        return set(range(n))
    return {int(highlight)} if isinstance(highlight, int | np.integer) else set(highlight)


SHOWN_TOKENS = 8  # a summary names every token's value up to this many, else the largest


def _token_values(labels: Sequence[str], v) -> str:
    """ "A 0.10, B 0.40 and C 0.50" (the largest values first past SHOWN_TOKENS tokens)."""
    v = _values(v)
    order = range(len(v)) if len(v) <= SHOWN_TOKENS else np.argsort(v)[::-1][:5]
    named = [f"{labels[i]} {fmt(v[i])}" for i in order]
    return listing(named) if len(v) <= SHOWN_TOKENS else "largest " + ", ".join(named)


def _bars_summary(title: str, labels: Sequence[str], rows: dict, focus: str) -> str:
    """The words of a bar chart of distributions over tokens: every row's values, the focus."""
    head = f"{title}: " if title else ""
    names = listing(list(rows))
    values = "; ".join(f"{name}: {_token_values(labels, v)}" for name, v in rows.items())
    return f"{head}bars of {names} over {len(labels)} tokens. {values}.{focus}"


def _focus_words(labels, highlight, mark_text, rows: dict) -> str:
    """ " Token B (drafted): q 0.30, p 0.40." for the highlighted token, else ""."""
    if highlight is None:
        return ""
    what = f" ({mark_text})" if mark_text else ""
    values = ", ".join(
        f"{name.split(' ')[0]} {fmt(_values(v)[highlight])}" for name, v in rows.items()
    )
    return f" Token {labels[highlight]}{what}: {values}."


def _bar(
    name: str,
    labels: list[str],
    v,
    color: str,
    pattern: str,
    highlight: int | Sequence[int] | None,
    hover: str,
) -> dict:
    """One trace of bars; a patterned trace of the leftover (``COLORS["residual"]``) is
    drawn solid with its pattern over it: dots alone on a transparent bar were a pale
    ghost on a projector and near invisible in dark mode (issue 25)."""
    n = len(labels)
    focus_set = _focus_set(highlight, n)
    focus = [1.0 if i in focus_set else DIM for i in range(n)]
    width = [3 if highlight is not None and i in focus_set else 0 for i in range(n)]
    return {
        "type": "bar",
        "name": name,
        "x": labels,
        "y": _values(v),
        "text": _bar_text(v),
        "textposition": "outside",
        "cliponaxis": False,
        "marker": {
            "color": color,
            "opacity": focus,
            "line": {"width": width, "color": OUTLINE},
            "pattern": (
                {"shape": pattern, "fillmode": "overlay", "fgcolor": "#FFFFFF", "fgopacity": 0.8}
                if pattern and color == COLORS["residual"]
                else {"shape": pattern}
            ),
        },
        "hovertemplate": f"%{{x}}<br>{hover} = %{{y:.4g}}<extra></extra>",
    }


def _category_layout(
    labels: Sequence[str], highlight: int | Sequence[int] | None, y_max: float
) -> dict:
    safe = [plotly_escape(lab) for lab in labels]
    ticks = list(safe)
    if highlight is not None:
        for i in _focus_set(highlight, len(ticks)):
            ticks[i] = f"<b>{ticks[i]}</b>"
    return {
        "showlegend": True,  # the legend under the title: theme.make_figure places it
        "xaxis": {
            "type": "category",
            "tickmode": "array",
            "tickvals": safe,
            "ticktext": ticks,
            "title": {"text": "token"},
        },
        "yaxis": {"title": {"text": "probability"}, "range": [0, max(0.05, y_max) * 1.45]},
    }


def _mark(layout: dict, labels: Sequence[str], highlight: int | None, y: float, text: str) -> dict:
    """An arrow naming the token ``highlight`` (``text``): its head just above that bar's
    own number, its words near the top of the plot (``_category_layout``'s headroom), above
    every bar's number: beside the bar they ran into a neighbour's ("0.40drafted")."""
    if highlight is not None and text:
        top = layout["yaxis"]["range"][1]
        layout["annotations"] = [
            {
                "x": plotly_escape(labels[highlight]),
                "y": y,
                "text": text,
                "showarrow": True,
                "arrowhead": 2,
                "arrowcolor": OUTLINE,  # plotly's default dark grey vanishes in dark mode
                "ax": 0,
                "ayref": "y",
                "ay": top * 0.9,
                "yanchor": "middle",
                "standoff": 24,  # the head stops above the bar's number
                "font": {"size": 15},
            }
        ]
    return layout


def pq_figure(
    labels: Sequence[str],
    p_row,
    q_row=None,
    *,
    highlight: int | None = None,
    title: str = "",
    mark_text: str = "drafted",
) -> go.Figure:
    """q (blue, hatched) and p (orange) side by side; the token ``highlight`` stands out.

    ``q_row`` None draws p alone (the bonus position K + 1 has no draft).
    The highlighted token keeps full opacity and an outline, its tick label
    is bold and an arrow names it (``mark_text``): three cues besides colour.
    """
    safe = [plotly_escape(lab) for lab in labels]
    data = []
    y_max = float(np.max(p_row))
    if q_row is not None:
        data.append(_bar("q (draft)", safe, q_row, COLORS["q"], PATTERN["q"], highlight, "q"))
        y_max = max(y_max, float(np.max(q_row)))
    data.append(_bar("p (target)", safe, p_row, COLORS["p"], PATTERN["p"], highlight, "p"))
    layout = _category_layout(labels, highlight, y_max)
    if highlight is not None:
        top = max(float(p_row[highlight]), float(q_row[highlight]) if q_row is not None else 0.0)
        _mark(layout, labels, highlight, top, mark_text)
    rows = {"q (draft)": q_row, "p (target)": p_row} if q_row is not None else {"p (target)": p_row}
    focus = _focus_words(labels, highlight, mark_text, rows)
    layout["meta"] = text_meta(_bars_summary(title, labels, rows, focus))
    return _figure(data, layout, title=title, height=360)


def residual_figure(
    labels: Sequence[str],
    p_row,
    q_row,
    *,
    normalised: bool = False,
    highlight: int | None = None,
    title: str = "",
    mark_text: str = "",
    focus: Sequence[int] | None = None,
) -> go.Figure:
    """Seed 003 Ex 6: q (blue), p (orange) and the green leftover max(0, p - q).

    With ``normalised`` a fourth trace shows p_adj = max(0, p - q) / Z (when
    Z = 0 the core falls back to p, and so does this trace); then only the leftover and
    p_adj bars carry numbers (q and p did in the steps before): four labels a group
    collided at a projector's text size. Bars fill more of their group (bargap 0.1).
    ``highlight`` is the token the arrow names (``mark_text``); ``focus`` (default: that
    token) the tokens drawn at full opacity with an outline and a bold label, the others
    faded: the leftover step is about the tokens where p exceeds q, not the rejected one.
    """
    safe = [plotly_escape(lab) for lab in labels]
    p = np.asarray(p_row, dtype=np.float64)
    q = np.asarray(q_row, dtype=np.float64)
    leftover = np.maximum(0.0, p - q)  # (V,)
    shown = highlight if focus is None else tuple(focus)
    data = [
        _bar("q (draft)", safe, q, COLORS["q"], PATTERN["q"], shown, "q"),
        _bar("p (target)", safe, p, COLORS["p"], PATTERN["p"], shown, "p"),
        _bar(
            "max(0, p − q)",
            safe,
            leftover,
            COLORS["residual"],
            PATTERN["residual"],
            shown,
            "max(0, p − q)",
        ),
    ]
    y_max = float(max(p.max(), q.max()))
    if normalised:
        z = leftover.sum()
        adj = leftover / z if z > 1e-12 else p
        data.append(
            _bar("p_adj = max(0, p − q) / Z", safe, adj, COLORS["residual"], "x", shown, "p_adj")
        )
        y_max = max(y_max, float(adj.max()))
        for bar in data[:2]:  # q and p: their numbers were on screen in the steps before
            del bar["text"]
    layout = _mark(_category_layout(labels, shown, y_max), labels, highlight, y_max, mark_text)
    layout["bargap"] = 0.1
    layout["meta"] = text_meta(
        _residual_summary(labels, p, q, normalised, highlight, mark_text, title)
    )
    return _figure(data, layout, title=title, height=360)


def _residual_summary(labels, p, q, normalised: bool, highlight, mark_text: str, title: str) -> str:
    """The leftover chart in words: where max(0, p - q) is positive, its total Z, p_adj."""
    leftover = np.maximum(0.0, p - q)  # (V,)
    z = float(leftover.sum())
    positive = [i for i in range(len(labels)) if leftover[i] > 1e-12]
    where = listing([f"{fmt(leftover[i])} at {labels[i]}" for i in positive]) if positive else "0"
    text = (
        f"{title + ': ' if title else ''}bars of q (draft), p (target) and the leftover "
        f"max(0, p − q) over {len(labels)} tokens. q: {_token_values(labels, q)}; "
        f"p: {_token_values(labels, p)}. The leftover is {where}"
        f"{' and 0 elsewhere' if 0 < len(positive) < len(labels) else ''}; its total Z = {fmt(z)}."
    )
    if normalised:
        adj = leftover / z if z > 1e-12 else p
        text += f" Normalised, p_adj = leftover / Z is {_token_values(labels, adj)}."
    if highlight is not None:
        what = f" ({mark_text})" if mark_text else ""
        text += f" Token {labels[highlight]}{what}: leftover {fmt(leftover[highlight])}."
    return text


COIN_BAR_WIDTH = 0.5  # of the category: room above the bar for the coin's label


def _zone_bar(
    name: str, width: float, color: str, text: str, hover: str, anchor: str, **marker
) -> dict:
    """One zone of the coin bar (keep or reject), labelled in words as well as colour."""
    return {
        "type": "bar",
        "name": name,
        "y": ["coin"],
        "x": [width],
        "orientation": "h",
        "marker": {"color": color, **marker},
        "text": [text],
        "textposition": "inside",
        "insidetextanchor": anchor,  # the coin's diamond sits anywhere: text at the ends
        "width": [COIN_BAR_WIDTH],
        "textfont": {"color": "#000000"},
        "hovertemplate": hover,
    }


def _coin_marker(u: float) -> dict:
    """The coin u as a diamond with its value written above it."""
    return {
        "type": "scatter",
        "name": f"coin u = {u:.3g}",
        "x": [float(u)],
        "y": ["coin"],
        "mode": "markers+text",
        "text": [f"u = {u:.3g}"],
        "textposition": "top center",
        # On the page background: no colour of its own (black vanished in dark mode), so
        # Streamlit's theme gives it the viewer's chart text colour; large and bold, it reads
        # at that colour's contrast on white (WCAG's 3:1 for large text, 4.5:1 on dark).
        "textfont": {"size": 19, "weight": "bold"},
        "marker": {
            "symbol": "diamond",
            "size": 26,
            "color": COLORS["coin"],
            "line": {"color": "#FFFFFF", "width": 2},
        },
        "hovertemplate": "coin u = %{x:.4g}<extra></extra>",
        "cliponaxis": False,
    }


def coin_figure(a: float, u: float | None = None, *, title: str = "") -> go.Figure:
    """The acceptance probability a as a [0, 1] bar: keep zone [0, a), reject zone [a, 1).

    The coin u (a diamond with its value written beside it) lands in one of
    the zones; the zones carry words and hatching, not colour alone.
    """
    a = float(a)
    data = [
        _zone_bar(
            f"{STATUS_SYMBOL['accepted']} keep if u < a",
            a,
            COLORS["accepted"],
            f"keep ✓ (a = {a:.3g})" if a > 0.2 else "",
            "keep zone: u < %{x:.3g}<extra></extra>",
            "start",
        ),
        _zone_bar(
            f"{STATUS_SYMBOL['rejected']} reject if u ≥ a",
            1.0 - a,
            COLORS["rejected"],
            "reject ✗" if a < 0.8 else "",
            "reject zone: width %{x:.3g}<extra></extra>",
            "end",
            pattern={"shape": "x"},
        ),
    ]
    if u is not None:
        data.append(_coin_marker(u))
    # The legend sits on top (under the title), never on the axis title below (issue 10);
    # the bar is thin so the coin's label "u = ..." has room above it.
    layout = {
        "barmode": "stack",
        "showlegend": True,
        "legend": {"traceorder": "normal"},
        "xaxis": {"range": [0, 1], "title": {"text": "u ~ Uniform[0, 1)"}, "dtick": 0.2},
        # room above the bar for "u = ..." when the legend wraps to three rows in a narrow
        # column (the label sat on the plot's top edge, and was cut there: issue 25)
        "yaxis": {"showticklabels": False, "range": [-0.45, 1.05]},
        "meta": text_meta(
            _coin_summary(a, u, title), ("zone or coin", "from", "to"), _coin_rows(a, u)
        ),
    }
    return _figure(data, layout, title=title, height=330)


def _coin_summary(a: float, u: float | None, title: str) -> str:
    """The coin bar in words: the zones and, when thrown, where the coin landed."""
    text = (
        f"{title + ': ' if title else ''}the interval from 0 to 1 split at a = {fmt(a)}: "
        f"keep the draft if the coin u < a, reject it if u ≥ a."
    )
    if u is not None:
        verdict = (
            "in the keep zone: the draft is kept"
            if u < a
            else "in the reject zone: the draft is rejected"
        )
        text += f" The coin u = {fmt(u)} lands {verdict}."
    return text


def _coin_rows(a: float, u: float | None) -> list[tuple]:
    rows = [("keep zone (u < a)", 0.0, a), ("reject zone (u ≥ a)", a, 1.0)]
    return rows + ([("coin u", u, u)] if u is not None else [])


def _chip_trace(status: str, pts: list[tuple[int, str, str]]) -> dict:
    """The chips of one status: (x position, row, label) each, symbol + word + colour."""
    color = PENDING_FILL if status == "pending" else COLORS[status]
    short = [
        lab if len(lab) <= CHIP_LABEL_MAX else lab[: CHIP_LABEL_MAX - 1] + "…" for _, _, lab in pts
    ]
    return {
        "type": "scatter",
        "name": f"{STATUS_SYMBOL[status]} {STATUS_WORD[status]}",
        "x": [x for x, _, _ in pts],
        "y": [row for _, row, _ in pts],
        "mode": "markers+text",
        "text": [f"{STATUS_SYMBOL[status]}<br>{plotly_escape(s)}" for s in short],
        "customdata": [plotly_escape(lab) for _, _, lab in pts],
        "textfont": {"color": "#000000", "size": 14},
        "textposition": "middle center",
        "marker": {
            "symbol": "square",
            "size": 58,
            "color": color,
            "line": {"color": "#555555", "width": 1},
        },
        "hovertemplate": f"position %{{x}}: %{{customdata}} ({STATUS_WORD[status]})<extra></extra>",
        "cliponaxis": False,
    }


def _chips_layout(k: int) -> dict:
    return {
        "showlegend": True,  # also when one status alone is on screen
        "legend": {
            "itemsizing": "constant",
            "orientation": "h",
            "yref": "paper",  # below the plot (a titled figure's default hangs from the top)
            "y": -0.25,
            "yanchor": "top",
        },
        "margin": {"b": 60},
        "xaxis": {
            "range": [0.4, k + 1.6],
            "tickmode": "array",
            "tickvals": list(range(1, k + 2)),
            "ticktext": [f"pos {i}" for i in range(1, k + 2)],
            "showgrid": False,
            "zeroline": False,
        },
        "yaxis": {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [ROW_OUTPUT, ROW_DRAFT],
            "range": [-0.6, 1.6],
            "showgrid": False,
        },
    }


def chips_figure(
    labels: Sequence[str],
    draft_tokens: Sequence[int],
    draft_status: Sequence[str],
    emitted: Sequence[tuple[int, int, str]],
    *,
    title: str = "",
) -> go.Figure:
    """The drafts and the output as coloured chips, one trace per status.

    Row "drafts": each drafted token, kept / rejected / discarded / pending.
    Row "output": the emitted tokens at their positions (kept drafts, then
    the resampled or bonus token). Every chip shows its status symbol as
    well as its colour, and the legend names each status with symbol and word.
    """
    points: dict[str, list[tuple[int, str, str]]] = {s: [] for s in CHIP_STATUSES}
    for i, (tok, status) in enumerate(zip(draft_tokens, draft_status, strict=True)):
        points[status].append((i + 1, ROW_DRAFT, labels[tok]))
    for pos, tok, status in emitted:
        points[status].append((pos + 1, ROW_OUTPUT, labels[tok]))
    data = [_chip_trace(status, points[status]) for status in CHIP_STATUSES]
    layout = _chips_layout(len(draft_tokens))
    rows = [
        (ROW_DRAFT if r == ROW_DRAFT else ROW_OUTPUT, x, lab, STATUS_WORD[st])
        for st in CHIP_STATUSES
        for x, r, lab in points[st]
    ]
    rows.sort(key=lambda row: (row[0] != ROW_DRAFT, row[1]))
    layout["meta"] = text_meta(
        _chips_summary(rows, title), ("row", "position", "token", "status"), rows
    )
    return _figure(data, layout, title=title, height=260)


def _chips_summary(rows: list[tuple], title: str) -> str:
    """ "Drafts: A (kept), B (rejected). Output so far: A (kept), D (resampled)."."""

    def said(row_name: str) -> str:
        chips = [f"{lab} ({word})" for r, _, lab, word in rows if r == row_name]
        return listing(chips, limit=20) if chips else "none yet"

    head = f"{title}: drafts" if title else "Drafts"
    return f"{head}: {said(ROW_DRAFT)}. Output so far: {said(ROW_OUTPUT)}."


def _position_figures(story: RoundStory, step) -> tuple[go.Figure, go.Figure | None]:
    """draft / ratio / coin / discard: p and q at the step's position (and the coin bar)."""
    res, i = story.result, step.position
    where = "discarded, never checked" if step.kind == "discard" else "drafted"
    main = pq_figure(
        story.labels,
        story.p_rows[i],
        story.q_rows[i],
        highlight=res.draft_tokens[i],
        mark_text=where,
        title=f"Position {i + 1}: draft q and target p",
    )
    if step.kind not in ("ratio", "coin"):
        return main, None
    s = next(s for s in res.steps if s.position == i)
    coin = coin_figure(
        s.acceptance_probability,
        s.coin if step.kind == "coin" else None,
        title=f"Position {i + 1}: coin against a",
    )
    return main, coin


def _leftover_figure(story: RoundStory, kind: str) -> go.Figure:
    """residual / normalise / resample (and the result after a rejection): the leftover."""
    res, j = story.result, story.result.final_position
    arrow = {"residual": res.draft_tokens[j], "normalise": None}.get(kind, res.final_token)
    mark = {"residual": "rejected", "normalise": ""}.get(kind, "resampled")
    p, q = story.p_rows[j], story.q_rows[j]
    # the leftover step is about where p exceeds q (the rejected token's leftover is 0)
    positive = tuple(int(i) for i in np.flatnonzero(np.asarray(p) - np.asarray(q) > 0))
    return residual_figure(
        story.labels,
        p,
        q,
        normalised=kind != "residual",
        highlight=arrow,
        mark_text=mark,
        title=f"Position {j + 1}: the leftover max(0, p − q)",
        focus=positive if kind == "residual" and positive else None,
    )


def step_figures(story: RoundStory, index: int) -> tuple[go.Figure, go.Figure | None]:
    """The charts of step ``index`` of a ``round.story.RoundStory``: (main chart, coin or None).

    draft / ratio / coin: p and q at the position, drafted token marked (the
    coin bar from the ratio step on); discard: the first discarded position;
    residual / normalise / resample: the residual chart; bonus: p at K + 1;
    result: p and q where the last token was emitted, with that token marked.
    """
    step = story.step(index)
    res, k = story.result, story.result.k_drafts
    if step.kind in ("draft", "ratio", "coin", "discard"):
        return _position_figures(story, step)
    if step.kind in ("residual", "normalise", "resample"):
        return _leftover_figure(story, step.kind), None
    if step.kind == "bonus" or res.final_kind == "bonus":
        return pq_figure(
            story.labels,
            story.p_rows[k],
            None,
            highlight=res.final_token,
            mark_text="bonus",
            title=f"Position {k + 1} (bonus): target p only",
        ), None
    return _leftover_figure(story, "result"), None
