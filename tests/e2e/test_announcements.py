"""Issue 33, items 4, 6 and 8 in Chromium, with the keyboard alone.

- 8: every page has one polite live region (``.st-key-announce``: role=status,
  aria-live=polite, visually hidden) that exists before its text changes; after each
  action of a keyboard walk (the round page's Next, a Speedup explorer slider, the
  Self-test's Check, New question and Show me the answer, a page change) its text says
  what changed, in the words and numbers the page shows. At 1366 x 768 in normal view and
  presenter view, and on a 390 x 844 phone.
- 4: on the Self-test an arrow key chooses an option and grades nothing; Check grades it;
  each radio group is named by its question.
- 6: the Speedup explorer's cost fields hold whole and decimal costs without the browser
  calling them invalid (``input.validity.valid``).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import PHONE_VIEWPORT, PRESENTER_VIEWPORT, artifact, key, settle, sidebar_link

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMainBlockContainer"]'
SOURCE = key("announce")  # the keyed container the page writes (hidden, not read)
REGION = "#specdec-announce"  # the live region its text is copied into
VIEWS = {
    "1366": (PRESENTER_VIEWPORT, ""),
    "presenter": (PRESENTER_VIEWPORT, "present=1"),
    "phone": (PHONE_VIEWPORT, ""),
}
SLOW = 60_000


def _open(page, path: str, query: str) -> None:
    page.goto(path + (f"?{query}" if query else ""))
    settle(page, timeout=SLOW)
    expect(page.locator(f"{MAIN} h1")).to_have_count(1, timeout=30_000)


def _tab_to(page, selector: str, limit: int = 120, *, back: bool = False) -> None:
    """Press Tab (Shift+Tab if ``back``) until the focus is inside ``selector``."""
    target = page.locator(selector).first
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        if target.evaluate("(el) => el.contains(document.activeElement)"):
            return
    pytest.fail(f"{limit} presses of Tab never reached {selector}")


def _press(page, what: str) -> None:
    page.keyboard.press(what)
    settle(page, timeout=SLOW)


def _region(page):
    """The one live region: polite, a status, hidden from the eye, not from the ear."""
    region = page.locator(REGION)
    expect(region).to_have_count(1)
    expect(region).to_have_attribute("aria-live", "polite")
    expect(region).to_have_attribute("role", "status")
    box = region.evaluate("(el) => el.getBoundingClientRect()")
    assert box["width"] <= 1 and box["height"] <= 1, box
    expect(page.locator(SOURCE)).to_have_count(1)
    expect(page.locator(SOURCE)).to_be_hidden()  # the page's copy: not seen, not read twice
    return region


def _hears(page, pattern: str | re.Pattern) -> str:
    """The region's text once it matches ``pattern`` (a regex): the text the page wrote
    into its keyed container."""
    region = _region(page)
    expect(region).to_have_text(re.compile(pattern), timeout=SLOW)
    text = region.text_content()
    expect(page.locator(SOURCE)).to_have_text(text)
    return text


def _same_region_node(page) -> None:
    """Tag the region's DOM node: the next check asserts the same node is still there (it
    existed before its text changed, so the change is announced)."""
    page.locator(REGION).evaluate("(el) => { el.dataset.specdecSeen = '1'; }")


def _expect_same_node(page) -> None:
    expect(page.locator(REGION)).to_have_attribute("data-specdec-seen", "1")


def _open_inputs(page, label: str, presenting: bool) -> None:
    """Presenter view folds the inputs: open them by keyboard (Tab to the summary, Enter)."""
    if not presenting:
        return
    summary = f"{MAIN} [data-testid='stExpander'] summary:has-text('{label}')"
    _tab_to(page, summary)
    _press(page, "Enter")


def _walk_round(page, query: str, view: str) -> None:
    _open(page, "/Step_through_a_round", query)
    _hears(page, r"^Page: Step through a round\. Step 1 out of \d+: drafting\. The draft proposes")
    _same_region_node(page)
    _tab_to(page, f"{key('round_next')} button")
    for step, kind in ((2, "acceptance probability"), (3, "the coin decides")):
        _press(page, "Enter")
        said = _hears(page, rf"^Step {step} out of \d+: {kind}\. ")
        title = said.split(f"{kind}. ", 1)[1].removesuffix(".")  # the step's own heading
        expect(page.locator(f"{key('round_why')} h3")).to_have_text(title)
        expect(page.locator(f"{key('round_next')} button")).to_be_focused()
    assert re.search(r"Coin u = 0\.\d+ [<≥] a = [01]\.\d+: (keep|reject) \w+\.$", said), said
    _expect_same_node(page)
    if view == "1366":
        artifact(page, "announce-round-1366")  # the region is not to be seen
        link = sidebar_link(page, "Speedup explorer")
        link.focus()
        _press(page, "Enter")  # a page change by keyboard: its title is said
        _hears(page, r"^Page: Speedup explorer\. Speedup \d+\.\d\dx at K = ")
        _expect_same_node(page)


def _walk_speedup(page, query: str) -> None:
    _open(page, "/Speedup_explorer", query)
    _open_inputs(page, "Inputs", "present=1" in query)
    _same_region_node(page)
    slider = f"{key('speed_k')} input[type='range']"
    _tab_to(page, slider)
    k = int(page.locator(slider).input_value())
    for k_new in (k + 1, k + 2):
        _press(page, "ArrowRight")
        said = _hears(page, rf"^Speedup \d+\.\d\dx at K = {k_new} \(alpha ")
        metric = page.locator("[data-testid='stMetric']").filter(has_text=f"speedup at K = {k_new}")
        shown = metric.locator("[data-testid='stMetricValue']").inner_text().strip()
        assert said.startswith(f"Speedup {shown} at K = {k_new} "), (said, shown)
    _tab_to(page, f"{key('speed_alpha')} input[type='range']", back=True)
    _press(page, "ArrowLeft")
    _hears(page, r"\(alpha 0\.69, c_q ")
    _expect_same_node(page)
    # item 6: whole and decimal costs pass the browser's own validity check
    costs = (("speed_c_p", ("40", "1", "0.5", "12.345")), ("speed_c_q", ("3", "0.25")))
    for field, values in costs:
        box = page.locator(f"{key(field)} input")
        _tab_to(page, f"{key(field)} input")
        for typed in values:
            page.keyboard.press("Control+a")
            page.keyboard.type(typed)
            _press(page, "Enter")
            name = field.removeprefix("speed_")
            _hears(page, rf"{name} {re.escape(typed)} ms")
            assert box.evaluate("(el) => el.validity.valid"), (field, typed)
            expect(box).not_to_have_attribute("aria-invalid", "true")


def _walk_self_test(page, query: str) -> None:
    _open(page, "/Self_test", query)
    _hears(page, r"^Page: Self-test\. Question 1: ")
    _same_region_node(page)
    group = page.get_by_role("radiogroup", name=re.compile(r"^Question 1: What is the accept"))
    expect(group).to_have_count(1)  # named by its question, not "Choose"
    _tab_to(page, f"{key('quiz_seed_0')} [role='radiogroup']")
    before = page.locator(REGION).text_content()
    _press(page, "ArrowRight")  # chooses the second option: graded only on Check
    _press(page, "ArrowRight")
    expect(page.locator(f"{MAIN} [role='alert'], {MAIN} [role='status']")).to_have_count(0)
    assert page.locator(REGION).text_content() == before
    _tab_to(page, f"{key('quiz_seed_check_0')} button")
    _press(page, "Enter")
    said = _hears(page, r"^Question 1: (right|not quite)\. ")
    verdict = page.locator(f"{MAIN} [role='alert'], {MAIN} [role='status']").first
    expect(verdict).to_be_visible()
    assert ("right" in said.split(".")[0]) == ("Right" in verdict.inner_text())
    _tab_to(page, f"{key('quiz_new')} button")
    _press(page, "Enter")
    _hears(page, r"^Question 2: ")
    _tab_to(page, f"{key('quiz_reveal')} button")
    _press(page, "Enter")
    _hears(page, r"^The answer is [\d./%]+\. The worked answer follows\.$")
    _tab_to(page, f"{key('quiz_new')} button", back=True)
    _press(page, "Enter")
    _hears(page, r"^Question 3: ")
    _tab_to(page, f"{key('quiz_answer')} input")
    page.keyboard.type("0.5")
    _press(page, "Enter")
    _hears(page, r"^(Right: |Not quite: you typed 0\.5, the answer is )")
    _expect_same_node(page)


@pytest.mark.parametrize("view", list(VIEWS))
def test_keyboard_walk_hears_every_change(screen_context, view):
    viewport, query = VIEWS[view]
    page = screen_context(viewport, "light").new_page()
    _walk_round(page, query, view)
    _walk_speedup(page, query)
    _walk_self_test(page, query)
