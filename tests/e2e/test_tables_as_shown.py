"""Issue 33, item 12 in a browser: a screen reader hears each table's name and its numbers as
the screen shows them ("1.85x", not "1.8493..."; "✓ yes", not "true").

The accessibility tree is read through Playwright's ARIA snapshot (the roles, names and
texts a screen reader gets), in normal and presenter view at 1366 x 768.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import PRESENTER_VIEWPORT, key, settle

pytestmark = pytest.mark.e2e

SLOW = 90_000
RAW_FLOAT = re.compile(r"\d\.\d{5,}")  # more digits than any table shows
MAIN = '[data-testid="stMainBlockContainer"]'


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)


def _cells(table) -> list[list[str]]:
    """Each row's cells as the accessibility tree reads them (header row first)."""
    return [
        [cell.strip() for cell in row.locator("th, td").all_inner_texts()]
        for row in table.get_by_role("row").all()
    ]


@pytest.mark.parametrize("present", ["0", "1"], ids=["normal", "presenter"])
def test_the_ms_per_token_table_is_named_and_reads_as_shown(screen_context, present):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"/Speedup_explorer?present={present}")
    table = page.get_by_role("table", name=re.compile(r"^Milliseconds per token and speedup"))
    expect(table).to_be_attached(timeout=SLOW)
    heard = table.aria_snapshot()
    assert not RAW_FLOAT.search(heard), heard
    rows = _cells(table)
    assert rows[0][:3] == ["K", "ms / token", "speedup"]
    best = [row for row in rows[1:] if row[0] == "4"]  # Ex 8: best K = 4, speedup 1.85x
    assert best and best[0][2] == "1.85x", rows
    assert all(re.fullmatch(r"\d+\.\d\dx", row[2]) for row in rows[1:]), rows


def test_every_table_on_the_round_page_has_a_name_and_no_raw_value(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, "/Step_through_a_round")
    page.locator(f"{key('round_last')} button").click()
    settle(page, timeout=SLOW)
    trace = page.get_by_role("table", name=re.compile(r"^The round's trace"))
    expect(trace).to_be_visible(timeout=SLOW)
    heard = trace.aria_snapshot()
    assert "true" not in heard.lower().split() and "false" not in heard.lower().split(), heard
    assert "✓ yes" in heard and not RAW_FLOAT.search(heard), heard
    # the charts' data tables too: each named after its chart
    for box in page.locator(MAIN).get_by_text("This chart's numbers as a table").all():
        box.click()
    tables = page.locator(f"{MAIN} table")
    expect(tables.nth(1)).to_be_visible()
    names = [t.get_attribute("aria-label") or "" for t in tables.all()]
    assert all(len(name) > 10 for name in names), names
    assert sum(name.startswith("Numbers of the chart: ") for name in names) >= 2, names
