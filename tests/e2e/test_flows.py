"""What a student does on each page, in a real browser: click, type, drag, share a link."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from specdec_ui.presets import SPEED_K_MAX as K_MAX_PAGE
from tests.e2e.conftest import (
    assert_charts_drew,
    bar_count,
    choose_option,
    key,
    open_app,
    screenshot,
    settle,
    sidebar_link,
)

pytestmark = pytest.mark.e2e

ROUND = "/Step_through_a_round"
SEED_000_OUTPUT = "A ✓ kept · B ✓ kept · C ✓ kept · D ★ bonus"
MAX_CLICKS = 20  # more than any round has steps


def _step_label(page) -> str:
    return page.get_by_text(re.compile(r"^Step \d+ of \d+$")).first.inner_text()


def _round_settings(page) -> None:
    """Open the round page's settings (folded under the title: the step comes first)."""
    details = page.locator(f"{key('round_settings')} details")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    expect(details).to_have_attribute("open", re.compile(".*"))


def test_round_seed_000_click_next_to_the_end(page):
    open_app(page, "/")
    sidebar_link(page, "Step through a round").click()
    settle(page)
    _round_settings(page)
    choose_option(page, "round_preset", "Worked example: a full round")
    expect(page.get_by_text("Step 1 of 9", exact=True)).to_be_visible()

    next_button = page.locator(f"{key('round_next')} button")
    clicks = 0
    while next_button.is_enabled() and clicks < MAX_CLICKS:
        before = _step_label(page)
        next_button.click()
        clicks += 1
        expect(page.get_by_text(f"Step {clicks + 1} of 9", exact=True)).to_be_visible()
        settle(page)
        assert _step_label(page) != before
    assert clicks == 8, f"seed 000's round has 9 steps; Next was enabled {clicks} times"
    expect(next_button).to_be_disabled()

    output = page.locator(key("round_output"))
    expect(output).to_contain_text(SEED_000_OUTPUT)
    for token in ("A", "B", "C"):
        expect(output).to_contain_text(f"{token} ✓ kept")
    expect(output).to_contain_text("D ★ bonus")
    assert_charts_drew(page)
    # The chips chart shows the four emitted tokens as drawn marks.
    chips = page.locator(f"{key('round_chart_chips')}")
    expect(chips.locator("svg.main-svg").first).to_be_attached()
    screenshot(page, "flow-round-seed-000-end")

    # Back and Reset walk the same round backwards.
    page.locator(f"{key('round_back')} button").click()
    expect(page.get_by_text("Step 8 of 9", exact=True)).to_be_visible()
    page.locator(f"{key('round_first')} button").click()
    expect(page.get_by_text("Step 1 of 9", exact=True)).to_be_visible()
    settle(page)
    expect(output).not_to_contain_text("bonus")


def test_round_bad_vector_shows_an_error_naming_the_entry(page):
    open_app(page, ROUND)
    _round_settings(page)
    page.locator(key("round_mode")).get_by_text("Custom", exact=True).click()
    settle(page)
    field = page.locator(f"{key('round_p_text')} input")
    expect(field).to_be_visible()
    field.fill("0.4, 0.25, abc, 0.1, 0.05")
    field.press("Enter")
    settle(page)
    error = page.locator('[data-testid="stAlertContentError"]')
    expect(error).to_have_count(1)
    expect(error).to_contain_text("p: entry 3 ('abc') is not a number")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    screenshot(page, "flow-round-bad-vector")

    # A sum that is not 1 is refused too, not fixed silently.
    field.fill("0.5, 0.5, 0.5, 0.1, 0.05")
    field.press("Enter")
    settle(page)
    expect(error).to_contain_text("sum to 1.65")

    # Fixing the entry clears the error.
    field.fill("0.40, 0.25, 0.20, 0.10, 0.05")
    field.press("Enter")
    settle(page)
    expect(error).to_have_count(0)


HOSTILE_LABELS = "<script>x()</script>, <img src=x onerror=f()>, C, D, E"


def test_round_hostile_labels_render_as_text(page):
    dialogs: list[str] = []

    def heard(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", heard)  # taken off at the end: the page is kept for the next test
    open_app(page, ROUND)
    _round_settings(page)
    page.locator(key("round_mode")).get_by_text("Custom", exact=True).click()
    settle(page)
    field = page.locator(f"{key('round_labels')} input")
    field.fill(HOSTILE_LABELS)
    field.press("Enter")
    settle(page)
    page.locator(f"{key('round_last')} button").click()
    settle(page)
    main = page.locator('[data-testid="stMainBlockContainer"]')
    expect(main).to_contain_text("<script>x()</script>")
    # Shown as text: no script or img element was created from the label.
    assert main.locator("script").count() == 0
    assert page.locator("img[onerror], img[src='x']").count() == 0
    assert page.evaluate("() => window.__xss === undefined")
    assert dialogs == []
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)
    screenshot(page, "flow-round-hostile-labels")
    page.remove_listener("dialog", heard)


def _optimum(page) -> str:
    return page.locator(key("speed_optimum")).text_content().strip()


def test_speedup_sliders_move_the_optimum(page):
    open_app(page, "/Speedup_explorer")
    optimum = page.locator(key("speed_optimum"))
    expect(optimum).to_contain_text(re.compile(r"Best K = \d+"))
    start = _optimum(page)
    alpha = page.locator(f"{key('speed_alpha')} input[type='range']")

    alpha.focus()
    alpha.press("Home")  # alpha = 0: drafting never pays, the best K is 1
    expect(alpha).to_have_value("0")
    settle(page)
    expect(optimum).to_contain_text("Best K = 1 ")
    low = _optimum(page)

    alpha.press("End")  # alpha = 1: every draft is kept, the longest draft is best
    expect(alpha).to_have_value("1")
    settle(page)
    expect(optimum).to_contain_text(f"Best K = {K_MAX_PAGE} ")
    high = _optimum(page)
    assert len({start, low, high}) >= 2 and low != high

    # Moving K alone does not change the optimum (it depends on alpha and the costs only).
    k_slider = page.locator(f"{key('speed_k')} input[type='range']")
    k_slider.focus()
    k_slider.press("Home")
    expect(k_slider).to_have_value("1")
    expect(page.get_by_text("speedup at K = 1", exact=True)).to_be_visible()
    settle(page)
    expect(optimum).to_have_text(high)
    assert_charts_drew(page, minimum=2)
    screenshot(page, "flow-speedup-alpha-1")


def test_losslessness_lab_runs_once(page):
    open_app(page, "/Losslessness_lab")
    verdict = page.locator(key("lab_verdict"))
    expect(verdict).to_contain_text(re.compile(r"^PASS"))  # the correct algorithm, at load
    assert_charts_drew(page, minimum=2)
    screenshot(page, "flow-lab-correct-pass")

    # Run by hand: switch off auto-run, pick a broken algorithm, press Run once.
    page.locator(key("lab_auto")).get_by_text("Run automatically").click()
    settle(page)
    choose_option(page, "lab_variant", "resample from p")
    expect(page.get_by_text("Settings changed: press")).to_be_visible()
    expect(verdict).to_contain_text("PASS")  # still the previous run
    page.locator(f"{key('lab_run')} button").click()
    expect(verdict).to_contain_text(re.compile(r"^FAIL"), timeout=60_000)
    settle(page, timeout=60_000)
    expect(page.get_by_text("Settings changed: press")).to_have_count(0)
    assert bar_count(page, '[data-testid="stMainBlockContainer"]') > 0
    assert_charts_drew(page, minimum=2)
    screenshot(page, "flow-lab-bug-fail")


def test_shared_round_link_reopens_the_same_state(page, context):
    open_app(page, ROUND + "?mode=preset&preset=000-rejection")
    next_button = page.locator(f"{key('round_next')} button")
    for i in range(3):
        next_button.click()
        expect(page.get_by_text(re.compile(rf"^Step {i + 2} of \d+$"))).to_be_visible()
        settle(page)
    expect(page).to_have_url(re.compile(r"step=3"))
    link = page.url
    step = _step_label(page)
    output = page.locator(key("round_output")).text_content()
    why = page.locator(key("round_why")).text_content()

    other = context.new_page()  # a classmate opening the link
    open_app(other, link)
    expect(other.get_by_text(step, exact=True)).to_be_visible()
    expect(other.locator(key("round_output"))).to_have_text(output)
    expect(other.locator(key("round_why"))).to_have_text(why)
    other.close()


def test_shared_speedup_link_reopens_the_same_numbers(page, context):
    open_app(page, "/Speedup_explorer?alpha=0.6&k=3&c_q=5&c_p=100")
    expect(page.locator(f"{key('speed_alpha')} input[type='range']")).to_have_value("0.6")
    expect(page.locator(f"{key('speed_k')} input[type='range']")).to_have_value("3")
    expect(page.locator('[data-testid="stAlertContentWarning"]')).to_have_count(0)
    optimum = _optimum(page)
    other = context.new_page()
    open_app(other, page.url)
    expect(other.locator(key("speed_optimum"))).to_have_text(optimum)
    other.close()
