"""Issue 33 on the Model pair lab in Chromium.

- Item 11, not by colour alone: in the generated text the typed prompt opens with ✎ and
  every kept draft ends with ✓, in the DOM and in the accessible text (the accessibility
  tree's text), beside the round endings' ↻ ★ ○; the legend names both marks.
- Item 16, a step link on a 390 x 844 phone: the inputs open folded and the stepper
  (Back / Next) is within the first screen, without scrolling.

Screenshots go to tests/e2e/artifacts/ (``marks-and-links-*``).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_inside_viewport,
    key,
    laid_out,
    main_scroll_top,
    settle,
)

pytestmark = pytest.mark.e2e

LAB = "/Model_pair_lab"
SLOW = 90_000  # ms: a cold page on a shared machine


def test_prompt_and_kept_drafts_carry_marks_in_the_dom_and_the_accessible_text(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    page.goto(f"{LAB}?tokens=30")
    settle(page, timeout=SLOW)
    text = page.locator(key("lm_token_text"))
    expect(text).to_be_visible(timeout=SLOW)
    dom = text.inner_text()
    assert dom.startswith("✎ Return"), dom[:40]  # the prompt opens with its mark
    assert dom.count("✎") == 1 and dom.count("✓") >= 3, dom
    tree = text.aria_snapshot()  # what a screen reader gets
    assert "✎ Return" in tree and tree.count("✓") == dom.count("✓"), tree
    legend = page.get_by_text("Colours and marks:")
    expect(legend).to_contain_text("✎ prompt")
    expect(legend).to_contain_text("✓ draft token, kept")
    text.scroll_into_view_if_needed()
    laid_out(page, timeout=SLOW)
    artifact(page, "marks-and-links-model-pair-marks-1366")


def test_a_step_link_on_a_phone_opens_with_the_stepper_on_the_first_screen(screen_context):
    context = screen_context(PHONE_VIEWPORT, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{LAB}?mode=step&round=3&tokens=60")
    settle(page, timeout=SLOW)
    inputs = page.locator('[data-testid="stExpander"] details').first
    expect(inputs).not_to_have_attribute("open", "")  # folded
    next_button = page.locator(key("lm_next")).first
    expect(next_button).to_be_visible(timeout=SLOW)
    laid_out(page, timeout=SLOW)
    assert main_scroll_top(page) == 0
    assert_inside_viewport(page, next_button, "Next of the step link's stepper")
    assert_inside_viewport(page, page.locator(key("lm_back")).first, "Back")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    artifact(page, "marks-and-links-model-pair-step-link-phone")


def test_a_measured_guarded_run_gives_its_prices_in_the_speed_sections_step(screen_context):
    """Item 3: once the run's speed is measured, the price table's unit is the speed
    section's plain step (one unit on the page), and the speed section says why Steps
    aside reads below fixed K."""
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    page.goto(f"{LAB}?tokens=60&draft=adaptive")
    settle(page, timeout=SLOW)
    metric = page.locator('[data-testid="stMetric"]', has_text="Speedup of your run (measured)")
    expect(metric).to_be_visible(timeout=2 * SLOW)
    settle(page, timeout=SLOW)
    unit = page.get_by_text("In plain steps as the speed section below counts them")
    expect(unit).to_be_visible()
    step = page.get_by_text("a plain target step:", exact=False).first
    expect(step).to_be_visible()
    gap = page.get_by_text("Against fixed K = 3: where the guard drafts")
    expect(gap).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.locator("table", has_text="this run's prices").scroll_into_view_if_needed()
    laid_out(page, timeout=SLOW)
    artifact(page, "marks-and-links-model-pair-prices-one-unit-1366")
    gap.scroll_into_view_if_needed()
    artifact(page, "marks-and-links-model-pair-guard-gap-1366")
