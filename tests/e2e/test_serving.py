"""The Serving lab in Chromium: a 1366 x 768 projector in presenter view and a 390 x 844 phone.

- Presenter view: the inputs are folded, the answer and the speedup-vs-batch chart lie in
  the first screen, every chart draws, chart text is at least 18 px.
- Phone: nothing in the main column sticks out sideways, every chart draws.
Both in a light and a dark theme; screenshots go to tests/e2e/artifacts/.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    COLOR_SCHEMES,
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_charts_drew,
    assert_inside_viewport,
    chart_text_sizes,
    horizontal_overflow,
    key,
    laid_out,
    main_scroll_top,
    settle,
)

pytestmark = pytest.mark.e2e

SERVING = "/Serving_lab"
SLOW = 60_000  # ms: a shared machine; a cold page can take this long
MIN_CHART_PX = 18
CHARTS = ("serve_fig_speedup", "serve_fig_v", "serve_fig_throughput")


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)
    for name in CHARTS:
        expect(page.locator(f"{key(name)} svg.main-svg").first).to_be_attached(timeout=SLOW)
    laid_out(page)  # plotly lays out after the script ends: wait for the final layout


@pytest.mark.parametrize("scheme", COLOR_SCHEMES)
def test_serving_presenter_view_shows_the_answer_and_its_chart_in_one_screen(
    screen_context, scheme
):
    page = screen_context(PRESENTER_VIEWPORT, scheme).new_page()
    _open(page, f"{SERVING}?present=1")
    artifact(page, f"presenter-serving-{scheme}")  # before the checks: kept on failure
    expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    assert main_scroll_top(page) == 0
    answer = page.locator(key("serve_answer"))
    expect(answer).to_contain_text("At batch 1: 2.59x")
    assert_inside_viewport(page, answer, "serving: the answer")
    assert_inside_viewport(page, page.locator(key("serve_fig_speedup")), "speedup vs batch chart")
    assert assert_charts_drew(page, minimum=3) >= 3
    scope = f"{key('serve_fig_speedup')}"
    sizes = chart_text_sizes(page, scope)
    assert sizes, "no chart text found"
    small = [(size, text) for size, text in sizes if size < MIN_CHART_PX]
    assert not small, f"chart text under {MIN_CHART_PX} px: {small[:5]}"


@pytest.mark.parametrize("scheme", COLOR_SCHEMES)
def test_serving_on_a_phone_does_not_overflow_sideways(screen_context, scheme):
    context = screen_context(PHONE_VIEWPORT, scheme, is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, SERVING)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    laid_out(page)
    artifact(page, f"phone-serving-{scheme}", whole=True)
    found = horizontal_overflow(page)
    assert not found["count"] and found["pageScroll"] <= 1, found
    assert assert_charts_drew(page, minimum=3) >= 3
