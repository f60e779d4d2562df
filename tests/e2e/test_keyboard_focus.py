"""Issue 33 in Chromium, with the keyboard alone: where the focus goes, what a screen reader
hears, what a clicker does.

- Focus is never lost (item 9): when the focused stepper button becomes disabled (Play to
  end, Reset, Back at the first step) the focus moves to the nearest enabled button of the
  row, and a disabled button keeps its name ("Next", disabled).
- Help (item 10): a "Help for ..." button is described by its help text, so is the control
  it helps, and Enter / Space show the tooltip again after Escape hid it.
- Less noise (item 13): no plotly mode bar or "Link to heading" in the Tab order or the
  accessibility tree; a slider named once; Increment / Decrement name their field; names
  without emoji or arrows; a round chart's name without the step's heading; "norm" one word;
  on a phone the two Back / Next pairs have different names.
- Presenter view (items 14 and 15): → on a focused box that scrolls sideways scrolls it (at
  200 % zoom); four quick clicker presses move four steps (round page, 60 ms apart) and four
  rounds (Model pair lab, 150 ms apart).
- A phone (item 16, first part): on a coin step, after a tap on the Back / Next under the
  charts, the coin chart is on screen above that row.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from .conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    each_theme,
    key,
    settle,
)
from .test_accessibility import MAIN, _open, _pick, _tab_to

pytestmark = pytest.mark.e2e

ROUND = "/Step_through_a_round"
PROGRESS = re.compile(r"^Step \d+ of \d+$")
ACTIVE_KEY_JS = """() => {
  const box = document.activeElement && document.activeElement.closest("[class*='st-key-']");
  return box ? [...box.classList].find((c) => c.startsWith("st-key-")).slice(7) : null;
}"""


def _focused_key(page) -> str | None:
    """The key of the keyed element that holds the focus (None: the page body)."""
    return page.evaluate(ACTIVE_KEY_JS)


def _expect_focus(page, name: str) -> None:
    expect(page.locator(f"{key(name)} button")).to_be_focused(timeout=10_000)


def _step(page) -> str:
    return page.get_by_text(PROGRESS).inner_text()


# --- item 9: focus never lost ----------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "present=1"], ids=["normal", "presenter"])
def test_focus_moves_to_the_other_button_when_its_button_is_disabled(screen_context, query):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, ROUND, query)
    page.locator(f"{MAIN} h1").click()
    _tab_to(page, f"{key('round_last')} button")
    page.keyboard.press("Enter")  # Play to end: it is disabled at the end
    settle(page)
    expect(page.get_by_text(re.compile(r"^Step (\d+) of \1$"))).to_be_visible()
    _expect_focus(page, "round_back")  # the nearest enabled button before it
    row = page.locator(key("round_stepper"))
    expect(row.get_by_role("button", name="Next", exact=True)).to_be_disabled()
    expect(row.get_by_role("button", name="Play to end", exact=True)).to_be_disabled()
    snapshot = row.aria_snapshot()
    assert 'button "Next" [disabled]' in snapshot, snapshot
    page.keyboard.press("Shift+Tab")
    _expect_focus(page, "round_first")
    page.keyboard.press("Enter")  # Reset: Reset and Back are disabled at step 1
    settle(page)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 1 of"))
    _expect_focus(page, "round_next")  # the nearest enabled button after it
    artifact(page, f"focus-after-reset-{query or 'normal'}")
    page.keyboard.press("Enter")
    settle(page)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 2 of"))
    _expect_focus(page, "round_next")  # still enabled: the focus stays
    page.keyboard.press("Shift+Tab")
    _expect_focus(page, "round_back")
    page.keyboard.press("Enter")  # Back to step 1: Back is disabled
    settle(page)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 1 of"))
    _expect_focus(page, "round_next")
    assert page.evaluate("() => document.activeElement !== document.body")


# --- item 10: help texts -----------------------------------------------------------------------


def test_help_buttons_are_described_and_open_with_enter_or_space_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Speedup_explorer")
    help_button = page.get_by_role("button", name="Help for alpha: acceptance rate")
    _tab_to(page, f"{key('speed_alpha')} button")
    expect(help_button).to_be_focused()
    words = re.compile(r"alpha = sum_x min\(p\(x\), q\(x\)\)")
    expect(help_button).to_have_accessible_description(words)
    slider = page.locator(f"{key('speed_alpha')} input[type='range']")
    expect(slider).to_have_accessible_description(words)  # the control it helps, too
    tooltip = page.get_by_role("tooltip")
    expect(tooltip).to_contain_text("sum_x min")  # shown on focus, as before
    for scheme in each_theme(page):
        for press in ("Enter", " "):
            page.keyboard.press("Escape")
            expect(tooltip).to_have_count(0)
            page.keyboard.press(press)
            expect(tooltip).to_contain_text("sum_x min")
            expect(help_button).to_be_focused()
        artifact(page, f"help-tooltip-{scheme}")
    # every "Help for" button of the Model pair lab has a description
    _open(page, "/Model_pair_lab")
    helps = page.get_by_role("button", name=re.compile(r"^Help for "))
    expect(helps.first).to_be_attached()
    empty = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stTooltipIcon"] button')]
          .filter((b) => { const id = b.getAttribute('aria-describedby');
                           const d = id && document.getElementById(id.split(' ')[0]);
                           return !d || d.textContent.trim().length < 10; })
          .map((b) => b.getAttribute('aria-label'))"""
    )
    assert helps.count() >= 5 and not empty, (helps.count(), empty)


# --- item 13: less noise ------------------------------------------------------------------------


NOISE = re.compile(r"Link to heading|Download plot as a PNG|Zoom in|Autoscale|Reset axes")
SYMBOL = re.compile(r"[\u2190-\u21ff\u25a0-\u25ff\u2b05-\u2b07\U0001f300-\U0001faff\u2600-\u27bf]")


def test_names_are_plain_and_the_noise_is_gone(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Speedup_explorer")
    tree = page.locator("[data-testid='stApp']").aria_snapshot()
    assert not NOISE.search(tree), NOISE.search(tree)
    slider = page.locator(f"{key('speed_alpha')} input[type='range']")
    expect(slider).to_have_accessible_name("alpha: acceptance rate")  # once, not twice
    field = page.locator(key("speed_c_q"))
    expect(field.get_by_role("button", name=re.compile(r"^Increment c_q: time"))).to_be_attached()
    expect(field.get_by_role("button", name=re.compile(r"^Decrement c_q: time"))).to_be_attached()
    assert page.locator(".modebar-container").count() >= 3
    hidden = page.evaluate(
        """() => [...document.querySelectorAll('.modebar-container')].every((m) =>
             m.getAttribute('aria-hidden') === 'true'
             && [...m.querySelectorAll('button, a')].every((b) => b.tabIndex === -1))"""
    )
    assert hidden
    tester = page.locator("#js-plotly-tester")
    expect(tester).to_have_attribute("aria-hidden", "true")
    _open(page, ROUND)
    row = page.locator(key("round_stepper"))
    for name in ("Reset", "Back", "Next", "Play to end"):
        expect(row.get_by_role("button", name=name, exact=True)).to_be_attached()
    names = page.locator("[data-testid='stApp']").aria_snapshot()
    heard = [line for line in names.splitlines() if re.search(r"(button|link|switch) ", line)]
    assert not [line for line in heard if SYMBOL.search(line)], heard
    step_title = page.locator(f"{key('round_why')} h3").inner_text()
    chart_name = page.locator(f"{key('round_chart_main')} [role='figure']").get_attribute(
        "aria-label"
    )
    assert step_title not in chart_name, (step_title, chart_name)
    _open(page, "/")
    norm = page.locator(".katex-mathml mi", has_text=re.compile(r"^norm$"))
    expect(norm).to_have_count(1)


def test_phone_stepper_pairs_have_their_own_names(screen_context):
    context = screen_context(PHONE_VIEWPORT, "light", has_touch=True, is_mobile=True)
    page = context.new_page()
    _open(page, ROUND)
    nexts = page.get_by_role("button", name=re.compile(r"^Next"))
    expect(nexts).to_have_count(2)
    names = sorted(nexts.nth(i).get_attribute("aria-label") or "" for i in range(2))
    assert names == ["Next", "Next (under the chart)"], names
    below = page.locator(key("round_below"))
    expect(below.get_by_role("button", name="Back (under the chart)")).to_be_disabled()


# --- item 14: a focused box that scrolls sideways, in presenter view at 200 % zoom --------------


# Focus the first box on screen that the accessibility script made reachable (tabindex 0)
# and that scrolls sideways now; returns how far it is scrolled (null: none, or no focus).
WIDE_JS = """(selector) => {
  const box = [...document.querySelectorAll(selector)].find((b) => b.checkVisibility()
    && b.scrollWidth > b.clientWidth + 1 && b.tabIndex === 0);
  if (box) { box.scrollIntoView({ block: "center" }); box.focus(); }
  return box && document.activeElement === box ? box.scrollLeft : null;
}"""
SCROLLED_JS = """() => document.activeElement.getAttribute("aria-label")
  && document.activeElement.scrollLeft"""


def test_arrow_scrolls_a_focused_sideways_box_in_presenter_view(screen_context):
    zoomed = {"width": 683, "height": 384}  # 1366 x 768 at 200 % browser zoom
    page = screen_context(zoomed, "light", device_scale_factor=2).new_page()
    _open(page, "/Model_pair_lab", "present=1")
    _pick(page, "lm_mode", "Step round by round", f"{key('lm_next')} button")
    heading = page.get_by_role("heading", name=re.compile(r"^Round \d+:"))
    before = heading.inner_text()
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=60_000)
    settle(page, timeout=60_000)
    # the code the page demonstrates: long lines, in a box that scrolls sideways
    page.get_by_text("Show the code that runs").last.click()
    boxes = f"{MAIN} [role='group'][aria-label$='(scrolls sideways)']"
    expect(page.locator(boxes).first).to_have_attribute("tabindex", "0")
    start = page.evaluate(WIDE_JS, boxes)
    assert start == 0, "no box on screen that scrolls sideways (Model pair lab, 200 % zoom)"
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(500)
    settle(page)
    assert page.evaluate(SCROLLED_JS) > 0  # the focused box scrolled
    expect(heading).to_have_text(before)  # no round stepped
    page.locator(f"{MAIN} h1").click()  # out of the box: → steps again
    page.keyboard.press("ArrowRight")
    settle(page)
    expect(heading).not_to_have_text(before)


# --- item 15: a clicker's quick presses all count --------------------------------------------


def _press(page, key_name: str, times: int, gap_ms: int) -> None:
    for i in range(times):
        page.keyboard.press(key_name)
        if i < times - 1:
            page.wait_for_timeout(gap_ms)


def test_four_quick_clicker_presses_move_four_steps(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, ROUND, "present=1")
    page.locator(f"{MAIN} h1").click()
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 1 of"))
    _press(page, "ArrowRight", 4, 60)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 5 of"), timeout=30_000)
    page.wait_for_timeout(1000)
    settle(page)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 5 of"))  # not more
    _press(page, "PageUp", 3, 60)
    expect(page.get_by_text(PROGRESS)).to_have_text(re.compile(r"^Step 2 of"), timeout=30_000)


def test_four_quick_clicker_presses_move_four_model_pair_rounds(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, "/Model_pair_lab", "present=1")
    _pick(page, "lm_mode", "Step round by round", f"{key('lm_next')} button")
    heading = page.get_by_role("heading", name=re.compile(r"^Round \d+:"))
    first = int(re.match(r"Round (\d+)", heading.inner_text()).group(1))
    # The page's background speed measurement reruns the page once when it ends; a press
    # clicked in the same instant can be lost (the closing note of issue 33 says so): press
    # once the measurement is in, as a teacher does after opening the page before class.
    measuring = page.get_by_text(re.compile(r"Measuring the speed of your run"))
    expect(measuring).to_have_count(0, timeout=180_000)
    settle(page, timeout=60_000)
    page.locator(f"{MAIN} h1").click()
    _press(page, "ArrowRight", 4, 150)
    expect(heading).to_have_text(re.compile(rf"^Round {first + 4}:"), timeout=60_000)
    page.wait_for_timeout(1000)
    settle(page, timeout=60_000)
    expect(heading).to_have_text(re.compile(rf"^Round {first + 4}:"))


# --- item 16, first part: the coin chart on a phone -----------------------------------------


def _tap_the_one(page, button, tries: int = 20) -> None:
    """Tap ``button`` once it is the only copy on the page: while a rerun moves the row, the
    old copy stays until the new one replaces it (CI saw one copy counted, then two at the
    tap), so a tap that finds two waits for the page to settle and looks again."""
    for _ in range(tries):
        settle(page)
        if button.count() == 1:
            try:
                button.tap(timeout=10_000)
                return
            except PlaywrightError as err:  # a second copy appeared between count and tap
                if "strict mode violation" not in str(err):
                    raise
        page.wait_for_timeout(250)
    expect(button).to_have_count(1)  # fails, saying how many copies stayed


def test_phone_coin_step_keeps_the_coin_above_the_row_in_both_themes(screen_context):
    context = screen_context(PHONE_VIEWPORT, "light", has_touch=True, is_mobile=True)
    page = context.new_page()
    _open(page, ROUND)
    below_next = page.locator(f"{key('round_next_below')} button")
    coin = page.locator(f"{key('round_chart_coin')} [data-testid='stPlotlyChart']")
    for _ in range(12):
        if coin.count():
            break
        _tap_the_one(page, below_next)  # the row moves to the coin's column: one copy
        settle(page)
    # the last tap's rerun leaves the old coin chart beside the new one for a moment (CI:
    # two copies at once): wait for the one copy, then measure it
    expect(coin).to_have_count(1, timeout=60_000)
    expect(coin).to_be_visible()
    height = PHONE_VIEWPORT["height"]
    for scheme in each_theme(page):
        for _ in range(240):  # the stepper script keeps the row on the bottom edge (a busy
            page.wait_for_timeout(250)  # machine lays the chart out seconds after the rerun)
            row = page.locator(key("round_below")).bounding_box()
            chart = coin.bounding_box()
            if row and chart and chart["y"] >= 0 and row["y"] + row["height"] <= height + 2:
                break
        assert chart["y"] >= 0 and chart["y"] + chart["height"] <= row["y"] + 1, (scheme, chart)
        assert row["y"] + row["height"] <= height + 2, (scheme, row, height)
        artifact(page, f"phone-coin-step-{scheme}")
