"""Issue 10's proofs in Chromium: a 1366 x 768 projector in presenter view and a 390 x 844 phone.

- Presenter view, seed 000 (and the rejection preset): at every step the Next button,
  the decision text and the step's chart(s) lie inside the first viewport, the page is
  not scrolled, "Step N of 9" is printed once, and chart text is at least 18 px. The
  arrow key / Page Down of a clicker steps too (a static key script).
- The QR code on the page decodes to the page's link, and that link opens the same
  step on a phone.
- (On a phone no element sticks out of the screen sideways, on every page, light and dark:
  the every-page walk of ``test_accessibility.py`` checks it, with ``horizontal_overflow``.)
Each test runs in a light and a dark theme (Chromium's prefers-color-scheme);
screenshots go to tests/e2e/artifacts/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    assert_inside_viewport,
    chart_text_sizes,
    decode_qr_image,
    each_theme,
    key,
    laid_out,
    main_scroll_top,
    settle,
)

pytestmark = pytest.mark.e2e

ROUND = "/Step_through_a_round"
SLOW = 60_000  # ms: the test machine is shared; a cold page can take this long
MIN_CHART_PX = 18


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    # elements still loading are grey skeletons: measure only what is drawn
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=SLOW)


def _charts_drawn(page, *keys: str) -> None:
    for name in keys:
        expect(page.locator(f"{key(name)} svg.main-svg").first).to_be_attached(timeout=SLOW)


# Records, for the keys pressed from now on, whether a handler took the key
# (defaultPrevented, seen by a listener on window, after the page's own on document) and
# how many buttons were clicked (the presenter key script clicks *_next / *_back).
KEY_WATCH_JS = """() => {
  window.__specdecKeyWatch = { handled: [], buttons_clicked: 0 };
  if (window.__specdecKeyWatchInstalled) { return; }
  window.__specdecKeyWatchInstalled = true;
  const watch = () => window.__specdecKeyWatch;
  window.addEventListener("keydown", (e) => watch().handled.push(e.defaultPrevented));
  document.addEventListener("click", (e) => {
    if (e.target.closest && e.target.closest("button")) { watch().buttons_clicked += 1; }
  }, true);
}"""


def _press_and_watch(page, key: str) -> dict:
    """Press ``key`` and return what the page did with it (see KEY_WATCH_JS), once the
    page has received the key (an event, not a time)."""
    page.evaluate(KEY_WATCH_JS)
    page.keyboard.press(key)
    page.wait_for_function("() => window.__specdecKeyWatch.handled.length >= 1")
    return page.evaluate("() => window.__specdecKeyWatch")


def _check_step(page, step: int, n_steps: int) -> list[str]:
    """One step's proof; returns the step's chart keys."""
    expect(page.locator(key("round_next"))).to_be_visible(timeout=SLOW)
    expect(page.get_by_text(f"Step {step} of {n_steps}", exact=True)).to_have_count(1)
    assert page.get_by_text(re.compile(rf"Step {step} of {n_steps}")).count() == 1
    charts = ["round_chart_main"]
    if page.locator(key("round_chart_coin")).count():
        charts.append("round_chart_coin")
    _charts_drawn(page, *charts)
    assert main_scroll_top(page) == 0
    assert_inside_viewport(page, page.locator(key("round_next")), f"step {step}: Next")
    assert_inside_viewport(page, page.locator(key("round_why")), f"step {step}: decision text")
    for name in charts:
        assert_inside_viewport(page, page.locator(key(name)), f"step {step}: {name}")
    sizes = chart_text_sizes(page)
    assert sizes, "no chart text found"
    small = [(size, text) for size, text in sizes if size < MIN_CHART_PX]
    assert not small, f"step {step}: chart text under {MIN_CHART_PX} px: {small[:5]}"
    return charts


def _step_by_clicker_or_click(page, step: int, forward: bool) -> None:
    """From ``step``, one step forward or back: on odd steps by the clicker's keys (Page Down
    or → forward, Page Up or ← back, with the focus on no widget), on even steps by a click on
    Next or Back."""
    if step % 2:
        page.mouse.click(5, PRESENTER_VIEWPORT["height"] - 5)  # focus the page, no widget
        keys = ("PageDown", "ArrowRight") if forward else ("PageUp", "ArrowLeft")
        pressed = _press_and_watch(page, keys[0] if step % 4 == 1 else keys[1])
        assert pressed == {"handled": [True], "buttons_clicked": 1}  # the key script
    else:
        page.locator(f"{key('round_next' if forward else 'round_back')} button").click()


@pytest.mark.parametrize(("preset", "n_steps"), [("000-round", 9), ("000-rejection", 10)])
def test_presenter_view_fits_every_step_in_one_screen_in_both_themes(
    screen_context, preset, n_steps
):
    """Forward to the last step in light, then back to the first in dark: every step is
    checked in both themes on one visit, and every clicker key and button steps."""
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"{ROUND}?mode=preset&preset={preset}&present=1")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_have_attribute("data-collapsed", "true")  # inputs folded away
    for scheme in each_theme(page):
        forward = scheme == "light"
        steps = range(1, n_steps + 1) if forward else range(n_steps, 0, -1)
        for step in steps:
            _check_step(page, step, n_steps)
            if preset == "000-round" or step in (1, n_steps):
                artifact(page, f"presenter-{preset}-{scheme}-step{step}")
            if step == steps[-1]:
                break
            _step_by_clicker_or_click(page, step, forward)
            shown = step + 1 if forward else step - 1
            expect(page.get_by_text(f"Step {shown} of {n_steps}", exact=True)).to_be_visible(
                timeout=SLOW
            )
            settle(page, timeout=SLOW)
        if forward:
            expect(page.locator(f"{key('round_next')} button")).to_be_disabled()
    expect(page).to_have_url(re.compile(r"present=1"))


def test_keys_do_nothing_outside_presenter_view(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"{ROUND}?mode=preset&preset=000-round&present=0")
    page.mouse.click(5, PRESENTER_VIEWPORT["height"] - 5)
    pressed = _press_and_watch(page, "ArrowRight")
    assert pressed == {"handled": [False], "buttons_clicked": 0}  # no key script here
    settle(page, timeout=SLOW)
    expect(page.get_by_text("Step 1 of 9", exact=True)).to_be_visible()


def test_presenter_toggle_switches_the_view_and_the_link(screen_context):
    page = screen_context(PRESENTER_VIEWPORT).new_page()
    _open(page, f"{ROUND}?mode=preset&preset=000-round")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    page.locator(key("presenter_toggle")).get_by_text("Presenter view").click()
    settle(page, timeout=SLOW)
    expect(page).to_have_url(re.compile(r"present=1"))
    expect(sidebar).to_have_attribute("data-collapsed", "true")
    _check_step(page, 1, 9)


def test_qr_code_decodes_to_the_link_and_reopens_the_same_step_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"{ROUND}?mode=preset&preset=000-rejection&present=1")
    for step in (2, 3, 4):
        page.locator(f"{key('round_next')} button").click()
        expect(page.get_by_text(f"Step {step} of 10", exact=True)).to_be_visible(timeout=SLOW)
        settle(page, timeout=SLOW)
    why = page.locator(key("round_why")).text_content()
    expected = page.url.replace("&present=1", "").replace("present=1&", "")
    for scheme in each_theme(page):
        image = page.locator('[data-testid="stImage"] img').first
        image.scroll_into_view_if_needed()
        expect(image).to_be_visible(timeout=SLOW)
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=image.element_handle(), timeout=SLOW
        )
        laid_out(page, timeout=SLOW)
        decoded = decode_qr_image(image.screenshot())
        assert decoded == [expected], (scheme, decoded, page.url)
        assert "present" not in decoded[0] and "step=3" in decoded[0]
        # The link on screen (with its copy button) is the same one.
        expect(page.locator('[data-testid="stCode"]').filter(has_text=expected)).to_have_count(1)
        artifact(page, f"qr-round-{scheme}")

    phone = screen_context(PHONE_VIEWPORT, "light").new_page()  # a student scans it
    _open(phone, expected)
    for scheme in each_theme(phone):
        expect(phone.get_by_text("Step 4 of 10", exact=True)).to_have_count(1, timeout=SLOW)
        expect(phone.locator(key("round_why"))).to_have_text(why)
        artifact(phone, f"qr-round-phone-{scheme}")


def _open_shared(page, path: str, query: str, charts: tuple[str, ...]) -> None:
    """Open a page by its share link in presenter view; wait for its charts."""
    _open(page, f"{path}?{query}&present=1")
    expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "true")
    _charts_drawn(page, *charts)
    laid_out(page, timeout=SLOW)  # plotly lays out after the script ends
    assert main_scroll_top(page) == 0


def test_presenter_view_shows_the_ex8_speedup_in_one_screen_in_both_themes(screen_context):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open_shared(
        page,
        "/Speedup_explorer",
        "preset=003-H&alpha=0.7&k=4&c_q=5&c_p=40",
        ("speed_fig_k",),
    )
    optimum = page.locator(key("speed_optimum"))
    expect(optimum).to_contain_text(re.compile(r"Best K = \d+ \(speedup \d+\.\d\dx\)"))
    for scheme in each_theme(page):
        artifact(page, f"presenter-speedup-ex8-{scheme}")  # before the checks: kept on failure
        assert_inside_viewport(page, optimum, f"Ex 8: best K and its speedup ({scheme})")
        chart = page.locator(key("speed_fig_k"))
        assert_inside_viewport(page, chart, f"Ex 8: speedup vs K chart ({scheme})")


def test_presenter_view_shows_the_broken_variant_failing_in_one_screen_in_both_themes(
    screen_context,
):
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open_shared(
        page,
        "/Losslessness_lab",
        "preset=000&k=4&rounds=100000&seed=0&variant=resample_from_p",
        ("lab_fig_diff",),
    )
    verdict = page.locator(key("lab_verdict"))
    expect(verdict).to_contain_text("FAIL: the emitted tokens do not follow p", timeout=SLOW)
    for scheme in each_theme(page):
        artifact(page, f"presenter-lab-broken-{scheme}")  # before the checks: kept on failure
        assert_inside_viewport(page, verdict, f"lab: the verdict, test fails ({scheme})")
        chart = page.locator(key("lab_fig_diff"))
        assert_inside_viewport(page, chart, f"lab: simulated - p chart ({scheme})")


CHART_INK_JS = """(scope) => [...document.querySelectorAll(scope + ' svg text')]
  .filter((t) => t.textContent.trim()).map((t) => getComputedStyle(t).fill)"""


def test_presenter_charts_follow_a_theme_switch_without_a_click(screen_context):
    """Presenter view draws chart ink for the theme of the last run: when the viewer's system
    (or the settings menu) turns the theme dark mid-lesson, the charts are redrawn in white
    ink by themselves (the hidden rerun of kit.presenter.THEME_JS), as a page opened dark
    draws them; and black again when it turns back."""
    scope = key("speed_fig_k")
    query = "preset=003-H&alpha=0.7&k=4&c_q=5&c_p=40&present=1"
    dark = screen_context(PRESENTER_VIEWPORT, "dark").new_page()
    _open(dark, f"/Speedup_explorer?{query}")
    _charts_drawn(dark, "speed_fig_k")
    opened_dark = set(dark.evaluate(CHART_INK_JS, scope))
    page = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    _open(page, f"/Speedup_explorer?{query}")
    _charts_drawn(page, "speed_fig_k")
    opened_light = set(page.evaluate(CHART_INK_JS, scope))
    assert opened_light != opened_dark, (opened_light, opened_dark)
    for scheme, ink in (("dark", opened_dark), ("light", opened_light)):
        page.emulate_media(color_scheme=scheme)
        page.wait_for_function(
            f"(scope) => {{ const ink = ({CHART_INK_JS})(scope);"
            f" return ink.length > 0 && ink.every((c) => {sorted(ink)!r}.includes(c)); }}",
            arg=scope,
            timeout=SLOW,
        )
        settle(page, timeout=SLOW)
        assert set(page.evaluate(CHART_INK_JS, scope)) == ink, scheme
