"""Issue 33, item 12: a table's cells are read as the screen shows them, its data keep every
digit (AppTests, CSV), and every table has a name (``specdec_ui.kit.tables``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from specdec_ui.kit.presenter import table_name
from specdec_ui.kit.tables import MISSING, cell_text, display_frame
from specdec_ui.kit.widgets import csv_bytes
from specdec_ui.speedup import figures as speedup_figures
from specdec_ui.speedup.view import TIME_FORMATS, TIME_HEADERS
from tests.app.shown_tables import shown_tables


@pytest.mark.parametrize(
    ("value", "spec", "text"),
    [
        (26.470588235294116, "%.2f", "26.47"),
        (1.511111111111111, "%.2fx", "1.51x"),
        (-4.6, "%+.0f%%", "-5%"),
        (1234.56, "{:,.1f}", "1,234.6"),
        (26.470588235294116, None, "26.47"),  # no format: 4 significant digits
        (0.083333333, None, "0.08333"),
        (np.int64(26470), None, "26,470"),
        (3.0, None, "3"),
        (True, None, "✓ yes"),  # not "true"
        (np.bool_(False), "%.2f", "✗ no"),
        (None, "%.4f", MISSING),
        (float("nan"), None, MISSING),
        (float("inf"), None, "infinity"),
        ("x*y", None, "x*y"),  # text as typed (kit.tables escapes it for st.table)
        (0.5, lambda v: f"{v:.0%}", "50%"),
    ],
)
def test_cell_text_is_what_the_screen_shows(value, spec, text):
    assert cell_text(value, spec) == text


def test_the_ms_per_token_table_is_shown_rounded_and_kept_whole():
    table = speedup_figures.time_table(0.7, {1, 2, 4}, 5.0, 40.0)
    shown = display_frame(table.rename(columns=TIME_HEADERS), TIME_FORMATS)
    raw = table.iloc[0]
    assert shown["speedup"].iloc[0] == f"{raw['speedup (x)']:.2f}x"
    assert shown["ms / token"].iloc[0] == f"{raw['time per token']:.2f}"
    assert list(shown["K"]) == ["1", "2", "4"]
    # the CSV is data, not display: its numbers keep their own 6 significant digits
    csv = csv_bytes(table).decode()
    assert f"{raw['time per token']:.6g}" in csv
    assert f"{raw['time per token']:.6g}" != shown["ms / token"].iloc[0]


TABLE_SCRIPT = """
import pandas as pd
from specdec_ui.kit.tables import show_table
show_table(
    pd.DataFrame({"a": [1.511111111111111, None], "ok": [True, False], "label": ["*x*", "y"]}),
    name="demo: speedups",
    formats={"a": "%.2fx"},
)
"""


def test_show_table_names_the_table_and_shows_the_formatted_text():
    at = AppTest.from_string(TABLE_SCRIPT).run()
    assert not at.exception
    (table,) = shown_tables(at)
    assert table.name == "demo: speedups"
    assert table.value["a"].iloc[0] == 1.511111111111111  # full value underneath
    assert list(table.shown["a"]) == ["1.51x", MISSING]
    assert list(table.shown["ok"]) == ["✓ yes", "✗ no"]
    shown = convert_arrow_bytes_to_pandas_df(
        at.get("table")[0].proto.arrow_data.styler.display_values
    )
    assert shown["label"].iloc[0] == r"\*x\*"  # escaped: typed markdown shows as typed
    assert list(table.shown["label"]) == ["*x*", "y"]
    frame = pd.DataFrame({"a": [1.0]})
    assert display_frame(frame)["a"].iloc[0] == "1"


def test_a_chart_tables_name_is_the_start_of_its_summary():
    assert table_name("Target p and draft q over 5 tokens. More words.") == (
        "Numbers of the chart: Target p and draft q over 5 tokens"
    )
    long = table_name(" ".join(f"w{i}" for i in range(30)))
    assert long.endswith("…") and len(long.split()) == 4 + 14 + 1
    assert table_name("") == "Numbers of a chart"
