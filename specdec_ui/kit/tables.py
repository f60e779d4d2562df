"""Tables as shown: every table has a name, and a screen reader hears what the screen shows.

Issue 33, item 12: the data grids (``st.dataframe``) read raw floats to a screen reader
("26.470588235294116" where the screen showed 26.47, "1.511111111111111" for "1.51x") and
"true" for a tick. The grid draws on a canvas; its hidden accessible table speaks each
number and check box cell as its raw value (``data.toString()`` in Streamlit 1.67's grid),
whatever format a column shows, so formatted numbers could only be had as text cells, which
sort as text. Every table a page shows therefore goes through :func:`show_table`: a static
HTML table (``st.table``) whose cells are the formatted text (a pandas ``Styler``; the data
under it keep their full values, for AppTests and the CSV downloads) and whose ``alt`` is
the table's accessible name (``aria-label`` on the ``<table>``). Real ``<th>`` headers let a
screen reader's table commands say each cell's column.

A column's format is a printf pattern (``"%.2f"``, ``"%.2fx"``, ``"%+.0f%%"``), a
``str.format`` pattern (``"{:,.1f}"``) or a function of the value; without one, whole
numbers keep their digits (``26,470``) and other numbers get 4 significant digits.
Missing values read "—", booleans "✓ yes" / "✗ no". Text is escaped for ``st.table``'s
markdown, so a label a student typed shows as typed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from specdec_ui.kit.text import md_escape

Format = str | Callable[[object], str]
MISSING = "—"  # a number that does not apply (no ratio for the final token)
TRUE_WORD, FALSE_WORD = "✓ yes", "✗ no"


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def cell_text(value: object, spec: Format | None = None) -> str:
    """One cell as the screen shows it (plain text, not escaped)."""
    if _missing(value):
        return MISSING
    if isinstance(value, bool | np.bool_):
        return TRUE_WORD if value else FALSE_WORD
    if callable(spec):
        return str(spec(value))
    if isinstance(value, numbers.Number) and spec:
        return spec.format(value) if "{" in spec else spec % value
    if isinstance(value, numbers.Number):
        return _default_number(value)
    return str(value)


def _default_number(value: numbers.Number) -> str:
    """Whole numbers with their digits (thousands separated), others with 4 significant
    digits."""
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        return "infinity" if number > 0 else "minus infinity"
    if isinstance(value, numbers.Integral) or (number.is_integer() and abs(number) < 1e15):
        return f"{int(number):,}"
    return f"{number:.4g}"


def display_frame(frame: pd.DataFrame, formats: Mapping[str, Format] | None = None) -> pd.DataFrame:
    """``frame`` with every cell as the text the screen shows (:func:`cell_text`)."""
    formats = formats or {}
    return pd.DataFrame(
        {name: [cell_text(v, formats.get(str(name))) for v in frame[name]] for name in frame},
        index=frame.index,
    )


def styled(frame: pd.DataFrame, formats: Mapping[str, Format] | None = None):
    """A ``Styler`` over ``frame``: the full values underneath, each cell shown (and read
    aloud) as its :func:`cell_text`, escaped for ``st.table``'s markdown."""
    formats = formats or {}
    styler = frame.style
    for name in frame.columns:
        spec = formats.get(str(name))
        styler = styler.format(lambda v, spec=spec: md_escape(cell_text(v, spec)), subset=[name])
    return styler.format_index(lambda v: md_escape(cell_text(v)), axis=0)


def show_table(
    frame: pd.DataFrame | Mapping,
    *,
    name: str,
    formats: Mapping[str, Format] | None = None,
    hide_index: bool = True,
    width: str | int = "stretch",
    where=None,
) -> None:
    """``frame`` as a named table of the formatted text (module docstring).

    ``name`` is the table's accessible name: what it holds, in a few words. ``where`` is a
    container or column (default: the current one).
    """
    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
    table = styled(frame, formats)
    (where or st).table(table, hide_index=hide_index, width=width, alt=name)
