"""Text alternatives of the charts: a summary in words and the chart's data as a table.

A blind student hears nothing of a plotly SVG (WCAG 2.1, 1.1.1 non-text content). Every
figure builder therefore puts one or two sentences about what its chart shows, with the
key numbers, into the figure it returns, in ``layout.meta`` (:func:`text_meta` for
``make_figure(..., meta=...)``, :func:`with_text` for a built figure). The words are
computed from the same arrays the traces draw, in the same pure function, so they cannot
drift from the picture, and a builder stays a pure function returning a ``go.Figure``:
call sites (``kit.presenter.chart(fig)``), the figure cache and the builders' tests do not
change. ``kit.presenter.chart`` reads :func:`chart_text`: the summary becomes the chart's
accessible name (``st.plotly_chart(alt=...)``) and the table sits under the chart in a
"data" expander.

The table is read from the figure's own traces (:func:`trace_table`): x and y of every
bar or line, z of a heatmap; a builder may give its own when the traces do not hold the
numbers a reader needs. A figure without a summary still gets one from its title, its
axes and its traces (:func:`generic_summary`). No Streamlit here; labels in the figure
are plotly-escaped HTML and come out as plain text (escape them again for markdown).
"""

from __future__ import annotations

import contextlib
import html
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

META_KEY = "text_alternative"  # layout.meta[META_KEY] = {"summary", "columns", "rows"}
MAX_TABLE_ROWS = 60  # a longer table keeps evenly spaced rows, first and last included
_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class ChartText:
    """What a screen reader gets for one chart: the summary and its data as a table."""

    summary: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""  # how the rows were chosen when the chart has more points than shown


def plain(text: object) -> str:
    """Plotly text (escaped HTML, ``<b>``, ``<br>``) as plain words."""
    words = _TAG.sub(" ", str(text if text is not None else ""))
    return " ".join(html.unescape(words).split())


def fmt(value: object) -> str:
    """A number as a reader wants it: up to 3 significant digits, integers whole."""
    if type(value) is float and value == value and abs(value) < 1e6:  # the common case, fast
        return str(int(value)) if value == int(value) else f"{value:.3g}"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        x = float(value)
        if not np.isfinite(x):
            return "none" if np.isnan(x) else ("infinity" if x > 0 else "minus infinity")
        if x == int(x) and abs(x) < 1e6:
            return str(int(x))
        return f"{x:.3g}"
    return str(value)


def text_meta(
    summary: str,
    columns: Sequence[str] | None = None,
    rows: Sequence[Sequence[object]] | None = None,
) -> dict:
    """``layout.meta`` holding a chart's summary (and, optionally, its own table).

    The words are stored HTML-escaped, like every text in a figure (a label a student typed
    never sits raw in the figure's JSON); :func:`chart_text` gives them back as typed.
    """
    entry: dict = {"summary": _escape(" ".join(summary.split()))}
    if columns is not None and rows is not None:
        entry["columns"] = [_escape(c) for c in columns]
        entry["rows"] = [[_escape(fmt(v)) for v in row] for row in rows]
    return {META_KEY: entry}


def _escape(text: object) -> str:
    """HTML-escaped, as plotly text is (``<`` ``>`` ``&``)."""
    return html.escape(str(text), quote=False)


def with_text(fig: go.Figure, summary: str, columns=None, rows=None) -> go.Figure:
    """``fig`` (a figure the builder just made) with its summary in ``layout.meta``."""
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    fig.update_layout(meta={**meta, **text_meta(summary, columns, rows)})
    return fig


def listing(items: Sequence[str], *, limit: int = 8) -> str:
    """ "A, B and C"; past ``limit`` items, the first ones and how many more."""
    items = [str(i) for i in items]
    if not items:
        return "none"
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# --- the table, read from the traces -------------------------------------------------


def _axis_title(fig: go.Figure, axis: str, fallback: str) -> str:
    title = getattr(getattr(fig.layout, axis, None), "title", None)
    text = plain(getattr(title, "text", "") or "")
    return text or fallback


def _series(fig: go.Figure) -> list[tuple[str, list, list]]:
    """(name, x values, y values) of every bar or line trace, as drawn (horizontal bars
    swapped, so x holds the categories)."""
    out = []
    for i, trace in enumerate(fig.data):
        x, y = getattr(trace, "x", None), getattr(trace, "y", None)
        if trace.type == "heatmap" or x is None or y is None:
            continue
        if getattr(trace, "orientation", None) == "h":
            x, y = y, x
        out.append((plain(trace.name) or f"series {i + 1}", list(x), list(y)))
    return out


def _cell(value: object) -> str:
    """A table cell: plotly text as plain words, a number through :func:`fmt`."""
    return plain(value) if isinstance(value, str) else fmt(value)


def _heatmap_rows(fig: go.Figure, trace) -> tuple[tuple[str, ...], list[tuple]]:
    """A heatmap's cells as rows (raw values): its y, its x, its value."""
    z = np.asarray(trace.z, dtype=float)  # (len(y), len(x))
    xs = list(trace.x) if trace.x is not None else list(range(z.shape[1]))
    ys = list(trace.y) if trace.y is not None else list(range(z.shape[0]))
    value = plain(getattr(getattr(trace.colorbar, "title", None), "text", "")) or "value"
    columns = (_axis_title(fig, "yaxis", "y"), _axis_title(fig, "xaxis", "x"), value)
    return columns, [(y, x, z[i, j]) for i, y in enumerate(ys) for j, x in enumerate(xs)]


def _raw_table(fig: go.Figure, series) -> tuple[tuple[str, ...], list[tuple]]:
    """:func:`trace_table` before its cells are written as text (None: no point there)."""
    heatmaps = [t for t in fig.data if t.type == "heatmap" and t.z is not None]
    if heatmaps:
        return _heatmap_rows(fig, heatmaps[0])
    if not series:
        return (), []
    x_title = _axis_title(fig, "xaxis", "x")
    names = [s[0] for s in series]
    if len(set(names)) == len(names):  # one column per series, one row per x of any series
        xs = list(dict.fromkeys(x for _, s_xs, _ in series for x in s_xs))
        cells = [dict(zip(s_xs, s_ys, strict=False)) for _, s_xs, s_ys in series]
        return (x_title, *names), [(x, *(c.get(x, "") for c in cells)) for x in xs]
    y_title = _axis_title(fig, "yaxis", "y")
    rows = [(name, x, v) for name, xs, ys in series for x, v in zip(xs, ys, strict=False)]
    return ("series", x_title, y_title), rows


def trace_table(fig: go.Figure) -> tuple[tuple[str, ...], list[tuple]]:
    """The data the traces draw: one row per x (category or number) and one column per
    trace (empty where a trace has no point), else, when two traces share a name, one row
    per point (series, x, y); a heatmap gives one row per cell."""
    columns, rows = _raw_table(fig, _series(fig))
    return columns, [tuple(_cell(v) for v in row) for row in rows]


def thinned(rows: list, limit: int = MAX_TABLE_ROWS) -> tuple[list, str]:
    """At most ``limit`` evenly spaced rows (first and last kept) and a note saying so."""
    if len(rows) <= limit:
        return rows, ""
    keep = np.unique(np.linspace(0, len(rows) - 1, limit).round().astype(int))
    return [rows[i] for i in keep], f"{len(keep)} of {len(rows)} rows, evenly spaced."


# --- the summary ------------------------------------------------------------------------


def generic_summary(fig: go.Figure, series: list | None = None) -> str:
    """A figure without its own words: its title, its kind, its series and axes."""
    series = _series(fig) if series is None else series
    title = plain(getattr(fig.layout.title, "text", "") or "")
    kinds = sorted(
        {"bars" if t.type == "bar" else "lines" for t in fig.data if t.type != "heatmap"}
    )
    names = [plain(t.name) for t in fig.data if plain(t.name)]
    if any(t.type == "heatmap" for t in fig.data):
        what = "A heatmap"
    else:
        what = "A chart of " + (" and ".join(kinds) or "marks")
    if names:
        what += f" ({listing(names)})"
    x, y = _axis_title(fig, "xaxis", ""), _axis_title(fig, "yaxis", "")
    axes = f": {y} against {x}" if x and y else ""
    numbers = "; ".join(_series_words(name, xs, ys) for name, xs, ys in series[:6])
    return (f"{title}. " if title else "") + what + axes + (f". {numbers}" if numbers else "") + "."


SHORT_SERIES = 8  # a series of up to this many points is read out point by point


def _series_words(name: str, xs: list[str], ys: list) -> str:
    """One series in words: every point when short, else its ends and its highest point."""
    values = [float(v) if v is not None else np.nan for v in ys]
    xs = [_cell(x) for x in xs] if len(values) <= SHORT_SERIES else xs
    if len(values) <= SHORT_SERIES:
        return f"{name}: " + listing([f"{x} {fmt(v)}" for x, v in zip(xs, values, strict=False)])
    top = int(np.nanargmax(values)) if np.isfinite(values).any() else 0
    return (
        f"{name}: {len(values)} points from {fmt(values[0])} at {_cell(xs[0])} to "
        f"{fmt(values[-1])} at {_cell(xs[-1])}, highest {fmt(values[top])} at {_cell(xs[top])}"
    )


def chart_text(fig: go.Figure) -> ChartText:
    """The summary and table of ``fig``: the builder's own words, else generic ones.

    Kept per figure object (:data:`_KEPT`): a figure the class shares
    (``runtime.figure_cache.shared_figure``) is described once, not on every student's rerun.
    """
    kept = _KEPT.get(id(fig))
    if kept is not None and kept[0]() is fig:
        return kept[1]
    text, key = _describe(fig), id(fig)
    with contextlib.suppress(TypeError):  # a figure that cannot be weakly referenced
        _KEPT[key] = (weakref.ref(fig, lambda _: _KEPT.pop(key, None)), text)
    return text


_KEPT: dict[int, tuple[weakref.ref, ChartText]] = {}


def _describe(fig: go.Figure) -> ChartText:
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    entry = meta.get(META_KEY) or {}
    series = None if entry.get("summary") and entry.get("columns") is not None else _series(fig)
    summary = html.unescape(entry["summary"]) if entry.get("summary") else None
    if entry.get("columns") is not None:
        columns = tuple(html.unescape(c) for c in entry["columns"])
        rows, note = thinned([tuple(html.unescape(c) for c in r) for r in entry["rows"]])
    else:
        columns, raw = _raw_table(fig, series)
        raw, note = thinned(raw)
        rows = [tuple(_cell(v) for v in row) for row in raw]
    summary = summary or generic_summary(fig, series)
    return ChartText(summary, tuple(columns), tuple(tuple(r) for r in rows), note)
