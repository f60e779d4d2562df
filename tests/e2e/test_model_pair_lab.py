"""Issue 18's Model pair lab in Chromium: the student's own numbers, a readable phone.

- On a 390 x 844 phone, in light and dark, the coloured text wraps by token: no token
  box sticks out of the screen, no two boxes overlap, and the letters are at least 14 px.
- A typed prompt's page shows the speedup of its own run (measured in the background
  and drawn once it is there), labelled as that run's.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    each_theme,
    horizontal_overflow,
    key,
    overlapping_boxes,
    settle,
)

pytestmark = pytest.mark.e2e

LAB = "/Model_pair_lab"
SLOW = 90_000  # ms: a cold page and a measurement on a shared machine

TOKEN_BOXES_JS = """
(scope) => [...document.querySelectorAll(scope + ' [data-testid="stMarkdownContainer"] span')]
  .filter((s) => getComputedStyle(s).backgroundColor !== 'rgba(0, 0, 0, 0)')
  .map((s) => { const r = s.getBoundingClientRect();
                return [s.textContent, r.left, r.top, r.right, r.bottom,
                        parseFloat(getComputedStyle(s).fontSize)]; })
"""


def test_the_coloured_text_wraps_by_token_on_a_phone_in_both_themes(screen_context):
    page = screen_context(PHONE_VIEWPORT, "light", is_mobile=True, has_touch=True).new_page()
    page.goto(f"{LAB}?t=1.0&seed=3&tokens=80")
    settle(page, timeout=SLOW)
    text = page.locator(key("lm_token_text"))
    expect(text).to_be_visible(timeout=SLOW)
    width = PHONE_VIEWPORT["width"]
    for scheme in each_theme(page):
        text.scroll_into_view_if_needed()
        boxes = page.evaluate(TOKEN_BOXES_JS, key("lm_token_text"))
        assert len(boxes) > 40, "expected the prompt and 80 generated tokens as coloured boxes"
        outside = [b[0] for b in boxes if b[1] < 0 or b[3] > width]
        assert not outside, f"token boxes outside the {width} px screen ({scheme}): {outside[:5]}"
        assert not overlapping_boxes(boxes), overlapping_boxes(boxes)[:5]
        assert min(b[5] for b in boxes) >= 14
        assert len({round(b[2]) for b in boxes}) >= 4, "the text should wrap over several lines"
        assert horizontal_overflow(page)["count"] == 0, scheme
        artifact(page, f"model-pair-phone-text-{scheme}")


def test_a_typed_prompt_shows_the_speedup_of_its_own_run(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    page.goto(f"{LAB}?prompt=def+fibonacci(n):&tokens=40")
    settle(page, timeout=SLOW)
    metric = page.locator('[data-testid="stMetric"]', has_text="Speedup of your run (measured)")
    expect(metric).to_be_visible(timeout=SLOW)
    expect(page.get_by_text("Measured on this server for exactly the run above")).to_be_visible()
    expect(page.get_by_text("made the same", exact=False)).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
