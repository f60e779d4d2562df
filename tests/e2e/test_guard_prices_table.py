"""Issue 27 in Chromium: a guarded run's prices (the guard's cost per round beside c and
v(n), as measured apart and as paid) on the Model pair lab, at 1366 x 768 in light
and dark, in presenter view, and on a 390 x 844 phone in light and dark: the table is
there, readable, and nothing sticks out sideways. Screenshots of the table go to
tests/e2e/artifacts/ (``model-pair-prices-*``)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    ARTIFACTS,
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    horizontal_overflow,
    key,
    laid_out,
    settle,
)

pytestmark = pytest.mark.e2e

SLOW = 120_000  # ms: a cold server measures its costs once (a helper process starts first)
SCREENS = [
    (PRESENTER_VIEWPORT, "light", ""),
    (PRESENTER_VIEWPORT, "dark", ""),
    (PRESENTER_VIEWPORT, "light", "&present=1"),
    (PHONE_VIEWPORT, "light", ""),
    (PHONE_VIEWPORT, "dark", ""),
]


@pytest.mark.parametrize(
    ("viewport", "scheme", "extra"),
    SCREENS,
    ids=["1366-light", "1366-dark", "presenter", "phone-light", "phone-dark"],
)
def test_a_guarded_run_shows_its_guards_cost_and_its_prices(
    screen_context, viewport, scheme, extra
):
    phone = viewport == PHONE_VIEWPORT
    context = screen_context(viewport, scheme, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    page.goto(f"/Model_pair_lab?tokens=60&draft=adaptive{extra}")
    settle(page, timeout=SLOW)
    expect(page.locator(key("lm_draft_lengths"))).to_be_attached(timeout=SLOW)
    settle(page, timeout=SLOW)
    table = page.locator("table", has_text="this run's prices")
    expect(table).to_be_visible(timeout=SLOW)
    expect(table).to_contain_text("the guard, per round")
    expect(table).to_contain_text("as paid")
    expect(page.get_by_text(re.compile(r"The guard took \d+\.\d µs a round"))).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    table.scroll_into_view_if_needed()
    laid_out(page)
    overflow = horizontal_overflow(page)
    assert overflow["count"] == 0 and overflow["pageScroll"] <= 0, overflow
    name = f"model-pair-prices-{viewport['width']}-{scheme}{'-present' if extra else ''}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
