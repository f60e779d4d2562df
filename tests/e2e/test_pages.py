"""Every page, opened from the sidebar the way a student does, renders and draws its charts.

Home lists every page; :func:`open_from_the_sidebar` checks one page reached from the sidebar,
and the every-page walk of ``test_accessibility.py`` (1366 x 768) calls it for each page, so
that the pages are opened once for all the checks of that view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests import pages as page_lists
from tests.e2e.conftest import (
    assert_charts_drew,
    bar_count,
    open_app,
    screenshot,
    settle,
    sidebar_link,
)

pytestmark = pytest.mark.e2e

# Every registered page but Home (tests/pages.py), as (sidebar title, address); its heading
# is its icon and title (kit.presenter.page_heading).
PAGES = [(info.title, page_lists.address(info)) for info in page_lists.pages() if not info.is_home]
# Whether a page draws charts at its defaults (True: at least one, all with marks). A page
# without a row (None) is checked for what it shows: every chart on it has drawn marks.
DRAWS_CHARTS = {
    "/Step_through_a_round": True,
    "/Speedup_explorer": True,
    "/Losslessness_lab": True,
    "/Self_test": False,
    "/Model_pair_lab": True,
    "/Variants_lab": True,
    "/Serving_lab": True,
    "/Teach_with_it": False,
    "/Class": False,
}

CHART = '[data-testid="stMainBlockContainer"] [data-testid="stPlotlyChart"]'
BAR_PAGES = {"Step through a round", "Losslessness lab", "Model pair lab"}


def _no_exception(page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)


def test_home_page_renders_and_lists_every_page(page):
    open_app(page, "/")
    expect(page.get_by_role("heading", name="Speculative Decoding Lab")).to_be_visible()
    for title, *_ in PAGES:
        expect(sidebar_link(page, title)).to_be_visible()
    _no_exception(page)
    screenshot(page, "page-0-home")


def open_from_the_sidebar(page, title: str, path: str) -> None:
    """Click page ``title``'s sidebar link (from the page on screen) as a student does; check
    its address, heading, charts (:data:`DRAWS_CHARTS`) and bars, with no error, and save its
    screenshot (the walk in test_accessibility.py calls this for every page but Home, in its
    1366 x 768 view)."""
    sidebar_link(page, title).click()
    expect(page).to_have_url(re.compile(re.escape(path) + r"(\?.*)?$"))
    settle(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        re.compile(re.escape(title), re.IGNORECASE)
    )
    # A page still drawing shows skeletons (the Serving lab's measured costs): wait them out.
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=60_000)
    charts = page_lists.expected(DRAWS_CHARTS, path, None)
    if charts or (charts is None and page.locator(CHART).count()):
        assert_charts_drew(page)
    if title in BAR_PAGES:
        assert bar_count(page, '[data-testid="stMainBlockContainer"]') > 0, f"{path}: no bars"
    _no_exception(page)
    n = PAGES.index((title, path)) + 1
    screenshot(page, f"page-{n}-{path.strip('/')}")
