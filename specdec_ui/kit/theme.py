"""One colour per concept on every chart, safe for colour-blind viewers.

The palette is Okabe & Ito's (2008), readable in light and dark themes and
on a projector. Colour never carries meaning alone: every status also has a
symbol and a word (``STATUS_SYMBOL``, ``STATUS_WORD``).
"""

from __future__ import annotations

import copy
from functools import lru_cache

import plotly.graph_objects as go

COLORS = {
    "p": "#E69F00",  # target (orange; the seed's "yellow bars")
    "q": "#0072B2",  # draft (blue)
    "residual": "#009E73",  # max(0, p - q) (bluish green; the seed's "green bars")
    "accepted": "#56B4E9",  # sky blue
    "rejected": "#D55E00",  # vermillion
    "resampled": "#CC79A7",  # reddish purple
    "bonus": "#F0E442",  # yellow
    "discarded": "#999999",  # grey
    "coin": "#000000",
    "theory": "#CC79A7",
}
# Marks drawn on the page background in figures that every session shares, whatever its
# theme: outlines of a highlighted bar, reference lines, the tree's root. Mid grey has a
# contrast of about 4.4:1 on white and 4.2:1 on Streamlit's dark background (#0E1117), where
# black vanished (issue 18). Text on the page background sets no colour at all: Streamlit's
# theme gives it the viewer's text colour.
OUTLINE = "#777777"
STATUS_SYMBOL = {
    "accepted": "✓",
    "rejected": "✗",
    "resampled": "↻",
    "bonus": "★",
    "discarded": "–",
    "pending": "…",
}
# The word of every core DraftStatus and TokenStatus (sc.FINAL_STATUS maps a final kind to
# its status), plus the UI's own "pending": a position the step-through has not reached yet.
STATUS_WORD = {
    "accepted": "kept",
    "rejected": "rejected",
    "discarded": "discarded",
    "resampled": "resampled",
    "bonus": "bonus",
    "pending": "not checked yet",
}
FONT_SIZE = 16  # readable from the back of a classroom
PATTERN = {"p": "", "q": "/", "residual": "."}  # bar hatching: a second cue besides colour


def base_layout(fig: go.Figure, *, title: str = "", height: int = 360) -> go.Figure:
    """Shared look: large fonts, transparent background (works in both themes)."""
    fig.update_layout(
        title=title,
        height=height,
        font={"size": FONT_SIZE},
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        barmode="group",
    )
    return fig


LEGEND_TOP_PX = 42  # a titled figure's legend starts this far below its top edge
TITLE_POSITION = {"y": 0.98, "yanchor": "top"}  # a titled figure's title, at its top edge


@lru_cache(maxsize=32)
def _theme_layout(height: int, titled: bool) -> dict:
    """base_layout's look as a plain dict, computed once per size (no template)."""
    layout = base_layout(go.Figure(), title="x" if titled else "", height=height)
    spec = layout.layout.to_plotly_json()
    spec.pop("template", None)  # go.Figure adds the (already validated) default itself
    spec.pop("title", None)
    return merge_layout(spec, titled_layout(height)) if titled else spec


def titled_layout(height: int) -> dict:
    """Title on top, legend under it: base_layout's 50 px fit only one of them. The legend
    hangs from a fixed distance below the figure's top edge (under the title) and grows
    downwards: a legend that wraps to a second row on a narrow screen pushes the plot down
    (plotly's automargin) instead of covering the title."""
    return {
        "margin": {"t": 95},
        "legend": {"yref": "container", "y": 1 - LEGEND_TOP_PX / height, "yanchor": "top"},
    }


def legend_under_title(fig: go.Figure) -> go.Figure:
    """A base_layout figure with make_figure's titled look (:func:`titled_layout`)."""
    fig.update_layout(title=TITLE_POSITION, **titled_layout(fig.layout.height))
    return fig


def merge_layout(base: dict, extra: dict) -> dict:
    """Recursive dict merge: ``extra`` wins, nested dicts are merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge_layout(out[key], value) if nested else value
    return out


def draft_markers(x, y, *, name: str = "draft q") -> dict:
    """The draft q as open circles over a bar chart of p (one look for q in every lab)."""
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "markers",
        "name": name,
        "marker": {"symbol": "circle-open", "size": 14, "color": COLORS["q"], "line": {"width": 3}},
    }


def make_figure(traces: list[dict], *, title: str = "", height: int = 360, **layout) -> go.Figure:
    """A themed figure built and validated in one pass.

    plotly's ``update_layout``/``add_trace`` re-validate on every call
    (milliseconds each); building from dicts in one go is several times faster,
    which matters because a student dragging a slider rebuilds every chart.
    """
    spec = copy.deepcopy(_theme_layout(height, bool(title)))
    if title:
        spec["title"] = {"text": title, **TITLE_POSITION}
    return go.Figure(data=traces, layout=merge_layout(spec, layout))


# --- presenter view (a projector at 1366 x 768, read from the back of a room) ----------

PRESENTER_FONT_SIZE = 20  # every chart text at least this (the issue asks >= 18 px)
PRESENTER_TITLE_SIZE = 22
PRESENTER_LINE_WIDTH = 4  # px; scatter lines at least this thick
PRESENTER_MARKER_SIZE = 12
# High-contrast ink per Streamlit theme; None (theme not known yet) keeps Streamlit's own.
PRESENTER_INK = {"light": "#000000", "dark": "#FFFFFF"}
PRESENTER_GRID = {"light": "rgba(0,0,0,0.25)", "dark": "rgba(255,255,255,0.30)"}
# Colours that vanish on one background are swapped for a readable one of the same role.
DARK_SWAP = {"#000000": "#FFFFFF", "black": "#FFFFFF", "#0072B2": "#56B4E9"}
LIGHT_SWAP = {"#FFFFFF": "#000000", "white": "#000000", "#F0E442": "#B8A900"}
_AXIS_PREFIXES = ("xaxis", "yaxis")


def _at_least(font: dict | None, size: int) -> dict:
    """``font`` with its size raised to ``size`` (never lowered)."""
    font = dict(font or {})
    font["size"] = max(int(font.get("size") or 0), size)
    return font


def _swap(colour, swap: dict):
    """``colour`` replaced through ``swap`` (case-insensitive), other values unchanged."""
    if isinstance(colour, str):
        return swap.get(colour.upper(), swap.get(colour, colour))
    if isinstance(colour, list):
        return [_swap(c, swap) for c in colour]
    return colour


def _presenter_axis(axis: dict, ink: str | None, grid: str | None) -> dict:
    """One axis with large ticks and title, thicker zero line, high-contrast ink."""
    axis = dict(axis)
    axis["tickfont"] = _at_least(axis.get("tickfont"), PRESENTER_FONT_SIZE)
    title = axis.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    title["font"] = _at_least(title.get("font"), PRESENTER_FONT_SIZE)
    axis["title"] = title
    axis["automargin"] = True  # bigger ticks need more room, never overlap the title
    if ink:
        axis["tickfont"]["color"] = ink
        axis["title"]["font"]["color"] = ink
        axis["linecolor"] = ink
        axis["gridcolor"] = grid
        axis["zerolinecolor"] = ink
    return axis


def _presenter_trace(trace: dict, swap: dict) -> dict:
    """One trace: text >= PRESENTER_FONT_SIZE, lines and markers thicker, colours swapped."""
    trace = dict(trace)
    if "text" in trace or "texttemplate" in trace or "textfont" in trace:
        trace["textfont"] = _at_least(trace.get("textfont"), PRESENTER_FONT_SIZE)
        if not _text_on_fill(trace):  # text on a bar or chip keeps its ink for that fill
            trace["textfont"]["color"] = _swap(trace["textfont"].get("color"), swap)
    if trace.get("type", "scatter") == "scatter":
        line = dict(trace.get("line") or {})
        line["width"] = max(float(line.get("width") or 2), PRESENTER_LINE_WIDTH)
        line["color"] = _swap(line.get("color"), swap)
        trace["line"] = {k: v for k, v in line.items() if v is not None}
    marker = dict(trace.get("marker") or {})
    if marker:
        if trace.get("type", "scatter") == "scatter" and not isinstance(marker.get("size"), list):
            marker["size"] = max(float(marker.get("size") or 6), PRESENTER_MARKER_SIZE)
        marker["color"] = _swap(marker.get("color"), swap)
        trace["marker"] = {k: v for k, v in marker.items() if v is not None}
    colorbar = trace.get("colorbar")
    if isinstance(colorbar, dict) or trace.get("type") == "heatmap":
        trace["colorbar"] = _presenter_colorbar(colorbar or {})
    return trace


def _text_on_fill(trace: dict) -> bool:
    """True when the trace's text sits on its own bar or marker fill, not on the page."""
    position = str(trace.get("textposition") or "")
    return "inside" in position or position == "middle center"


def _presenter_box(box: dict, font_key: str) -> dict:
    """A colour bar (``font_key`` "tickfont") or a legend ("font"): its items and its title
    (Streamlit's theme draws that small) at the presenter size."""
    box = dict(box)
    box[font_key] = _at_least(box.get(font_key), PRESENTER_FONT_SIZE)
    title = box.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    title["font"] = _at_least(title.get("font"), PRESENTER_FONT_SIZE)
    box["title"] = title
    return box


def _presenter_colorbar(colorbar: dict) -> dict:
    """A colour bar with ticks and title at the presenter size."""
    return _presenter_box(colorbar, "tickfont")


def presenter_figure(fig: go.Figure, *, theme_type: str | None = None) -> go.Figure:
    """A copy of ``fig`` for a projector: text >= 20 px, lines >= 4 px, high-contrast ink.

    Every font a chart can draw is raised (layout, title, axes' ticks and titles,
    legend, annotations, trace text, colour bars), never lowered. ``theme_type`` is
    Streamlit's ``st.context.theme.type`` ("light", "dark" or None): with a known theme
    the text, axes and colours that would vanish on that background are swapped for
    high-contrast ones (``DARK_SWAP``/``LIGHT_SWAP``); with None, Streamlit's theme
    colours stay. Pure: the input figure is not changed.
    """
    spec = fig.to_plotly_json()
    layout = dict(spec.get("layout") or {})
    ink, grid = PRESENTER_INK.get(theme_type or ""), PRESENTER_GRID.get(theme_type or "")
    swap = {"dark": DARK_SWAP, "light": LIGHT_SWAP}.get(theme_type or "", {})
    layout["font"] = _at_least(layout.get("font"), PRESENTER_FONT_SIZE)
    # plotly shrinks bar text that does not fit its bar; at the presenter size it must not
    layout["uniformtext"] = {"minsize": PRESENTER_FONT_SIZE, "mode": "show"}
    if ink:
        layout["font"]["color"] = ink
    title = layout.get("title")
    if title:
        title = {"text": title} if isinstance(title, str) else dict(title)
        title["font"] = _at_least(title.get("font"), PRESENTER_TITLE_SIZE)
        layout["title"] = title
    layout["legend"] = _presenter_legend(layout.get("legend") or {})
    if isinstance(layout.get("coloraxis"), dict):
        coloraxis = dict(layout["coloraxis"])
        coloraxis["colorbar"] = _presenter_colorbar(coloraxis.get("colorbar") or {})
        layout["coloraxis"] = coloraxis
    for name in _axis_names(layout, spec.get("data") or ()):
        layout[name] = _presenter_axis(layout.get(name) or {}, ink, grid)
    annotations = []
    for note in layout.get("annotations") or ():
        note = dict(note)
        note["font"] = _at_least(note.get("font"), PRESENTER_FONT_SIZE)
        note["font"]["color"] = _swap(note["font"].get("color"), swap) or ink
        annotations.append(note)
    if annotations:
        layout["annotations"] = annotations
    shapes = [_presenter_shape(shape, swap) for shape in layout.get("shapes") or ()]
    if shapes:
        layout["shapes"] = shapes
    data = [_presenter_trace(trace, swap) for trace in spec.get("data") or ()]
    return go.Figure(data=data, layout=layout)


def _axis_names(layout: dict, traces) -> list[str]:
    """Every cartesian axis the figure draws: ``xaxis`` and ``yaxis`` always, those the
    layout names and those a trace refers to (``"x2"`` -> ``xaxis2``). An axis left out
    would take Streamlit's chart theme (its template sets tick labels of 12.75 px, issue 33),
    not the figure's font."""
    names = {"xaxis", "yaxis"} | {k for k in layout if k.startswith(_AXIS_PREFIXES)}
    for trace in traces:
        for letter in ("x", "y"):
            ref = trace.get(f"{letter}axis")
            if isinstance(ref, str) and ref.startswith(letter):
                names.add(f"{letter}axis{ref[1:]}")
    return sorted(names)


def _presenter_legend(legend: dict) -> dict:
    """The legend's items and its title at the presenter size."""
    return _presenter_box(legend, "font")


def _presenter_shape(shape: dict, swap: dict) -> dict:
    """A reference line or box: at least 3 px wide, its colour swapped for the theme."""
    shape = dict(shape)
    line = dict(shape.get("line") or {})
    line["width"] = max(float(line.get("width") or 1), 3)
    line["color"] = _swap(line.get("color"), swap)
    shape["line"] = {k: v for k, v in line.items() if v is not None}
    return shape
