"""Every page, opened from the sidebar the way a student does, renders and draws its charts."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    assert_charts_drew,
    bar_count,
    open_app,
    screenshot,
    settle,
    sidebar_link,
)

pytestmark = pytest.mark.e2e

# (sidebar title, URL path, heading, draws charts at its defaults)
PAGES = [
    ("Step through a round", "/Step_through_a_round", "Step through a round", True),
    ("Speedup explorer", "/Speedup_explorer", "Speedup explorer", True),
    ("Losslessness lab", "/Losslessness_lab", "Losslessness lab", True),
    ("Self-test", "/Self_test", "Self-test", False),
    ("Model pair lab", "/Model_pair_lab", "Model pair", True),
    ("Class", "/Class", "Class", False),
]


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


@pytest.mark.parametrize(
    ("title", "path", "heading", "charts"), PAGES, ids=[p[1].strip("/") for p in PAGES]
)
def test_open_each_page_from_the_sidebar(page, title, path, heading, charts):
    open_app(page, "/")
    sidebar_link(page, title).click()
    expect(page).to_have_url(re.compile(re.escape(path) + r"(\?.*)?$"))
    settle(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        re.compile(re.escape(heading), re.IGNORECASE)
    )
    if charts:
        assert_charts_drew(page)
    if title in BAR_PAGES:
        assert bar_count(page, '[data-testid="stMainBlockContainer"]') > 0, "no bars drawn"
    _no_exception(page)
    n = PAGES.index((title, path, heading, charts)) + 1
    screenshot(page, f"page-{n}-{path.strip('/')}")
