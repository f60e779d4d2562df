"""Variants lab in a real browser: a preset, stepping to the end, the Monte Carlo verdict."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import assert_charts_drew, key, open_app, screenshot, settle

pytestmark = pytest.mark.e2e

MAX_CLICKS = 12  # more than any example has decisions


def _choose(page, select_key: str, option: re.Pattern) -> None:
    page.locator(key(select_key)).get_by_role("combobox").click()
    page.get_by_role("option", name=option).click()
    settle(page)


def test_variants_lab_rescue_then_typical(page):
    open_app(page, "/Variants_lab?rounds=20000")
    verdict = page.locator(key("var_verdict"))
    expect(verdict).to_contain_text("PASS")  # default preset: two candidates, lossless

    progress = page.get_by_text(re.compile(r"^Decision \d+ of \d+$"))
    expect(progress).to_have_text(re.compile(r"^Decision 1 of \d+$"), timeout=30_000)
    n_steps = int(progress.inner_text().split(" of ")[1])
    assert 2 <= n_steps < MAX_CLICKS
    next_button = page.locator(f"{key('var_next')} button")
    settle(page, timeout=60_000)
    for shown in range(2, n_steps + 1):
        next_button.click()
        expect(progress).to_have_text(f"Decision {shown} of {n_steps}", timeout=30_000)
        settle(page)
    expect(next_button).to_be_disabled()
    assert_charts_drew(page, minimum=4)
    screenshot(page, "flow-variants-rescue-end")

    _choose(page, "var_preset", re.compile(r"Typical acceptance is faster"))
    expect(verdict).to_contain_text("FAIL")
    expect(page.get_by_text("0.400", exact=True)).to_be_visible()  # exact TV on a flat p
    assert_charts_drew(page, minimum=4)
    screenshot(page, "flow-variants-typical")
