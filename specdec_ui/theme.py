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
STATUS_SYMBOL = {
    "accepted": "✓",
    "rejected": "✗",
    "resampled": "↻",
    "bonus": "★",
    "discarded": "–",
    "pending": "…",
}
STATUS_WORD = {
    "accepted": "kept",
    "rejected": "rejected",
    "resampled": "resampled",
    "bonus": "bonus",
    "discarded": "discarded",
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


@lru_cache(maxsize=32)
def _theme_layout(height: int, titled: bool) -> dict:
    """base_layout's look as a plain dict, computed once per size (no template)."""
    layout = base_layout(go.Figure(), title="x" if titled else "", height=height)
    spec = layout.layout.to_plotly_json()
    spec.pop("template", None)  # go.Figure adds the (already validated) default itself
    spec.pop("title", None)
    if titled:  # title on top, legend under it: base_layout's 50 px fit only one of them
        spec["margin"]["t"] = 95
        spec["legend"].update(y=1.0, yanchor="bottom")
    return spec


def merge_layout(base: dict, extra: dict) -> dict:
    """Recursive dict merge: ``extra`` wins, nested dicts are merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge_layout(out[key], value) if nested else value
    return out


def make_figure(traces: list[dict], *, title: str = "", height: int = 360, **layout) -> go.Figure:
    """A themed figure built and validated in one pass.

    plotly's ``update_layout``/``add_trace`` re-validate on every call
    (milliseconds each); building from dicts in one go is several times faster,
    which matters because a student dragging a slider rebuilds every chart.
    """
    spec = copy.deepcopy(_theme_layout(height, bool(title)))
    if title:
        spec["title"] = {"text": title, "y": 0.98, "yanchor": "top"}
    return go.Figure(data=traces, layout=merge_layout(spec, layout))
