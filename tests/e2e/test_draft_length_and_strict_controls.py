"""Issue 20's new controls in Chromium: the draft length (since issue 27, K behind the guard
that steps aside) and strict verification.

- Model pair lab: choosing "Steps aside" in the draft-length radio waits for this server's
  costs, then shows which rounds drafted, the v(k) prices the guard started from and the
  run in an engine's numbers; the share link carries ``draft=adaptive``. At 1366 x 768 and on a
  390 x 844 phone nothing sticks out sideways. Screenshots go to tests/e2e/artifacts/.
- Variants lab: strict verification steps to its last decision and its Monte Carlo passes;
  its bug (a fresh sample after a mismatch) fails the same test.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from specdec_ui.model_pairs import work as model_pairs_work
from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_charts_drew,
    horizontal_overflow,
    key,
    laid_out,
    settle,
    step_variants_lab_to_the_end,
)

pytestmark = pytest.mark.e2e

SLOW = 120_000  # ms: a cold server measures its costs once (a helper process starts first)
MAX_CLICKS = 12


@pytest.mark.parametrize("viewport", [PRESENTER_VIEWPORT, PHONE_VIEWPORT], ids=["1366", "phone"])
def test_stepping_aside_shows_its_rounds_and_its_prices(screen_context, viewport):
    phone = viewport == PHONE_VIEWPORT
    page = screen_context(viewport, "light", is_mobile=phone, has_touch=phone).new_page()
    page.goto("/Model_pair_lab?tokens=60")
    settle(page, timeout=SLOW)
    radio = page.locator(key("lm_draft"))
    expect(radio).to_be_visible(timeout=SLOW)
    radio.get_by_text(model_pairs_work.DRAFT_LENGTHS["adaptive"]).click()
    lengths = page.locator(key("lm_draft_lengths"))
    expect(lengths).to_be_attached(timeout=SLOW)  # after this server's costs are measured
    settle(page, timeout=SLOW)
    expect(page).to_have_url(re.compile(r"[?&]draft=adaptive"))
    expect(page.get_by_text("drafts a round on average", exact=False)).to_be_visible()
    expect(page.get_by_text("Where the guard started, measured on this server")).to_be_visible()
    expect(page.locator(key("lm_round_costs")).locator("svg.main-svg").first).to_be_attached()
    expect(page.locator(key("lm_engine")).locator("svg.main-svg").first).to_be_attached()
    log_line = page.locator("code", has_text="SpecDecoding metrics: Mean acceptance length")
    expect(log_line).to_have_count(1)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    lengths.scroll_into_view_if_needed()
    laid_out(page)
    overflow = horizontal_overflow(page)
    assert overflow["count"] == 0 and overflow["pageScroll"] <= 0, overflow
    artifact(page, f"model-pair-adaptive-{viewport['width']}")


def test_strict_verification_steps_passes_and_its_bug_fails(page):
    page.goto("/Variants_lab?preset=strict&rounds=20000")  # seed 000: q is not flat
    settle(page, timeout=60_000)
    verdict = page.locator(key("var_verdict"))
    expect(verdict).to_contain_text("PASS", timeout=60_000)
    step_variants_lab_to_the_end(page, MAX_CLICKS)
    assert_charts_drew(page, minimum=4)
    expect(page.locator(key("var_engine")).locator("svg.main-svg").first).to_be_attached()
    expect(page.locator("code", has_text="SpecDecoding metrics")).to_have_count(1)

    page.locator(key("var_broken")).get_by_role("checkbox").check(force=True)
    settle(page, timeout=60_000)
    expect(verdict).to_contain_text("FAIL", timeout=60_000)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    artifact(page, "variants-strict-bug")
