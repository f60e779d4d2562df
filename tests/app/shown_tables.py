"""AppTest helpers for the pages' tables (``specdec_ui.kit.tables.show_table``): each table's
name, its full values (what the CSV and the core hold) and the text a reader sees and hears.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

_ESCAPE = re.compile(r"\\(.)")  # md_escape's backslashes: a reader sees the character alone


@dataclass(frozen=True)
class ShownTable:
    name: str  # the accessible name (aria-label of the <table>)
    value: pd.DataFrame  # the full values under the table
    shown: pd.DataFrame  # each cell's text as the screen shows it


def shown_tables(at: AppTest) -> list[ShownTable]:
    """Every ``st.table`` of the run, in page order."""
    out = []
    for table in at.get("table"):
        shown_bytes = table.proto.arrow_data.styler.display_values
        shown = convert_arrow_bytes_to_pandas_df(shown_bytes) if shown_bytes else table.value
        shown = shown.map(lambda cell: _ESCAPE.sub(r"\1", str(cell)))
        out.append(ShownTable(table.proto.alt, table.value, shown))
    return out


def shown_table(at: AppTest, column: str) -> ShownTable:
    """The one table with a column named ``column`` (the charts' data tables included)."""
    found = [t for t in shown_tables(at) if column in t.value.columns]
    assert len(found) == 1, (column, [list(t.value.columns) for t in shown_tables(at)])
    return found[0]
