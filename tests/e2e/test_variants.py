"""Variants lab in a real browser: a preset, stepping to the end, the Monte Carlo verdict."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    assert_charts_drew,
    choose_option,
    key,
    open_app,
    screenshot,
    step_variants_lab_to_the_end,
)

pytestmark = pytest.mark.e2e

MAX_CLICKS = 12  # more than any example has decisions


def test_variants_lab_rescue_then_typical(page):
    open_app(page, "/Variants_lab?rounds=20000")
    verdict = page.locator(key("var_verdict"))
    expect(verdict).to_contain_text("PASS")  # default preset: two candidates, lossless

    step_variants_lab_to_the_end(page, MAX_CLICKS)
    assert_charts_drew(page, minimum=4)
    screenshot(page, "flow-variants-rescue-end")

    choose_option(page, "var_preset", "Typical acceptance is faster")
    expect(verdict).to_contain_text("FAIL")
    expect(page.get_by_text("0.400", exact=True)).to_be_visible()  # exact TV on a flat p
    assert_charts_drew(page, minimum=4)
    screenshot(page, "flow-variants-typical")
