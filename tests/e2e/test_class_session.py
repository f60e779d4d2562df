"""Issue 34 in a real browser: one projector (presenter view, 1366 x 768) and three phones
(390 x 844), each its own browser context on one server. The projector starts a class and
asks a question; the phones join by the QR code's link, answer (one by keyboard only) and
run rounds; the answers and rounds appear on the projector by its own refresh, no reload.
Screenshots of both screens, light and dark, go to tests/e2e/artifacts/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import (
    PHONE_VIEWPORT,
    PRESENTER_VIEWPORT,
    artifact,
    decode_qr_image,
    key,
    laid_out,
    settle,
)

pytestmark = pytest.mark.e2e
MAIN = '[data-testid="stMainBlockContainer"]'
SLOW = 60_000


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator(f"{MAIN} h1")).to_have_count(1, timeout=SLOW)


def _press(page, name: str) -> None:
    button = page.locator(f"{key(name)} button")
    expect(button).to_be_enabled(timeout=SLOW)
    button.click()
    settle(page, timeout=SLOW)


def _start(page) -> tuple[str, str]:
    """Start a class on the projector: its code and the join link its QR code carries."""
    _open(page, "/Class?present=1")
    _press(page, "class_start")
    expect(page.get_by_text("Join code:", exact=False)).to_be_visible(timeout=SLOW)
    code = re.search(r"[?&]class=([A-Z0-9]{6})", page.url).group(1)
    image = page.locator(f'{MAIN} [data-testid="stImage"] img').first
    expect(image).to_have_js_property("complete", True, timeout=SLOW)
    (link,) = decode_qr_image(image.screenshot())
    return code, link


def _answer_by_keyboard(page) -> None:
    """Tab to the choices, arrow down to B, Tab to Send and press Enter: no mouse."""
    page.evaluate("() => document.activeElement?.blur()")  # from the top of the document
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.type === 'radio'"):
            break
    else:
        pytest.fail("Tab never reached the answer's choices")
    page.keyboard.press("ArrowDown")  # A (first focused, unchecked) -> B
    page.keyboard.press("Space")
    expect(page.get_by_role("radio", name=re.compile(r"^B\."))).to_be_checked(timeout=SLOW)
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.innerText?.includes('Send')"):
            break
    else:
        pytest.fail("Tab never reached Send")
    page.keyboard.press("Enter")


def test_three_phones_answer_and_pool_on_the_projector(screen_context):
    projector = screen_context(PRESENTER_VIEWPORT, "light").new_page()
    code, link = _start(projector)
    assert link.endswith(f"/Class?join={code}") and "teach" not in link
    # The teacher's own link is in the sidebar, which presenter view keeps closed.
    sidebar = projector.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Your teacher link", exact=False)).not_to_be_in_viewport()
    teacher_link = sidebar.locator('[data-testid="stCode"] code').text_content(timeout=SLOW).strip()
    assert "teach=" in teacher_link and "teach=" not in projector.url
    _press(projector, "class_ask")  # the first question: Home's, multiple choice (B)
    phones = [screen_context(PHONE_VIEWPORT, "light").new_page() for _ in range(3)]
    for phone in phones:
        _open(phone, link.split("/Class", 1)[1].join(["/Class", ""]))
        expect(phone.get_by_text("Home, question 1", exact=False)).to_be_visible(timeout=SLOW)
        assert re.search(r"[?&]me=", phone.url), phone.url  # the reload link
    _answer_by_keyboard(phones[0])
    expect(phones[0].get_by_text("Sent: B", exact=False)).to_be_visible(timeout=SLOW)
    for phone, letter in zip(phones[1:], ("B", "D"), strict=True):
        phone.get_by_role("radio", name=re.compile(rf"^{letter}\. ")).check(force=True)
        _press(phone, "class_send")
        expect(phone.get_by_text(f"Sent: {letter}", exact=False)).to_be_visible(timeout=SLOW)
    # The projector's panel refreshes itself: no click, no reload.
    expect(projector.get_by_text("3 of 3 students")).to_be_visible(timeout=SLOW)
    _press(projector, "class_reveal")
    chart = projector.locator(f'{MAIN} [data-testid="stPlotlyChart"]').first
    expect(chart).to_be_visible(timeout=SLOW)
    expect(projector.get_by_text("2 of 3 chose the right one (B)", exact=False)).to_be_attached(
        timeout=SLOW
    )
    expect(phones[2].get_by_text("Yours: D ✗ not right", exact=False)).to_be_visible(timeout=SLOW)
    # The class's Monte Carlo: the projector opens the experiment, the phones run rounds.
    _press(projector, "class_exp_open")
    for n, phone in enumerate(phones):
        for _ in range(1 + (n == 0)):
            _press(phone, "class_run")
            expect(phone.get_by_text("to the class's pool", exact=False)).to_be_visible(
                timeout=SLOW
            )
    expect(projector.get_by_text("3 students pooled 80 rounds", exact=False)).to_be_visible(
        timeout=SLOW
    )
    expect(projector.get_by_text("Chi-square of the pooled tokens", exact=False)).to_be_visible()
    laid_out(projector)
    artifact(projector, "class-presenter-light", whole=True)
    artifact(phones[0], "class-phone-light", whole=True)
    # A reload puts a phone back with its answer.
    phones[1].reload()
    settle(phones[1], timeout=SLOW)
    expect(phones[1].get_by_text("Yours: B ✓ right", exact=False)).to_be_visible(timeout=SLOW)
    # Dark: the teacher's own link on a dark projector, a fourth phone in dark.
    dark = screen_context(PRESENTER_VIEWPORT, "dark").new_page()
    _open(dark, teacher_link.split("/Class", 1)[1].join(["/Class", ""]) + "&present=1")
    expect(dark.locator(f"{key('class_reveal')} button")).to_be_visible(timeout=SLOW)
    assert "teach=" not in dark.url
    _press(dark, "class_next")
    dark_phone = screen_context(PHONE_VIEWPORT, "dark").new_page()
    _open(dark_phone, f"/Class?join={code}")
    expect(dark_phone.get_by_text("Your answer:", exact=False).first).to_be_visible(timeout=SLOW)
    expect(dark.get_by_text("4 students joined", exact=False)).to_be_visible(timeout=SLOW)
    laid_out(dark)
    artifact(dark, "class-presenter-dark", whole=True)
    artifact(dark_phone, "class-phone-dark", whole=True)
