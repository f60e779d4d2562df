"""Issue 33, item 18 in Chromium: K = 2.5 typed into the round page's K field reaches the
core and is refused beside the field (an int field cut it to 2 without a word)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import PRESENTER_VIEWPORT, artifact, key, settle

pytestmark = pytest.mark.e2e

SLOW = 60_000


def test_k_of_two_and_a_half_is_refused_in_the_browser(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    page.goto("/Step_through_a_round?mode=custom")
    settle(page, timeout=SLOW)
    page.get_by_text(re.compile(r"Round settings")).click()
    field = page.locator(f"{key('round_k')} input")
    expect(field).to_be_visible(timeout=SLOW)
    field.fill("2.5")
    field.press("Enter")
    settle(page, timeout=SLOW)
    expect(page.get_by_text("K must be a whole number, got 2.5; allowed: 1 to 8.")).to_be_visible(
        timeout=SLOW
    )
    expect(field).to_have_value("2.5")  # the box keeps what was typed
    field.fill("4")
    field.press("Enter")
    settle(page, timeout=SLOW)
    expect(page.get_by_text("K must be a whole number")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"[?&]k=4(&|$)"), timeout=SLOW)  # not k=4.0
    artifact(page, "round-k-field-whole")
