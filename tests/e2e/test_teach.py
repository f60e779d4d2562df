"""The Teach page in a browser (issue 34): it renders at 1366 x 768 and 390 x 844, a lesson
link opens its page in presenter view on its preset in a new tab, and a downloaded worksheet,
answer key and lesson plan print to PDF on A4 and Letter with every question in them."""

from __future__ import annotations

import io

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from specdec_ui.page_questions import questions_for
from specdec_ui.teach.lesson import LESSON
from tests.e2e.conftest import artifact, horizontal_overflow, key, settle

pytestmark = pytest.mark.e2e

TEACH = "/Teach_with_it"
SLOW = 90_000
VIEWPORTS = {"1366": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
# PDF page sizes in points (1/72 inch): A4 210 x 297 mm, Letter 8.5 x 11 in
PAPER = {"A4": (595.3, 841.9), "Letter": (612.0, 792.0)}


def _open(page, path: str) -> None:
    page.goto(path)
    settle(page, timeout=SLOW)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("view", list(VIEWPORTS))
def test_the_teach_page_renders_with_every_step_and_its_link(screen_context, view):
    page = screen_context(VIEWPORTS[view]).new_page()
    _open(page, TEACH)
    expect(page.get_by_role("heading", level=1)).to_contain_text("Teach with it")
    for i, step in enumerate(LESSON):
        box = page.locator(key(f"teach_step_{i}"))
        expect(box).to_contain_text(step.title)
        link = box.get_by_role("link", name=f"Open {step.info.title} in presenter view")
        expect(link).to_have_attribute("href", step.href(present=True))
    assert not horizontal_overflow(page)["offenders"], horizontal_overflow(page)
    artifact(page, f"teach-{view}")
    artifact(page, f"teach-{view}-whole", whole=True)


def test_a_lesson_link_opens_its_page_in_presenter_view_on_its_preset(screen_context):
    context = screen_context(VIEWPORTS["1366"])
    page = context.new_page()
    _open(page, TEACH)
    rejection = next(i for i, s in enumerate(LESSON) if ("preset", "000-rejection") in s.params)
    with context.expect_page() as opened:
        page.locator(key(f"teach_open_{rejection}")).get_by_role("link").click()
    tab = opened.value
    settle(tab, timeout=SLOW)
    assert "/Step_through_a_round?" in tab.url and "present=1" in tab.url
    # the page's own share link, written from its state: the step's preset (the picker is
    # folded away in presenter view)
    share = tab.locator('[data-testid="stCode"]').filter(has_text="/Step_through_a_round?")
    expect(share.first).to_contain_text("preset=000-rejection", timeout=SLOW)
    expect(tab.locator('[data-testid="stException"]')).to_have_count(0)
    asked = LESSON[rejection].ask()
    expect(tab.get_by_text(asked.ask[:40], exact=False).first).to_be_attached()
    artifact(tab, "lesson-link-presenter")


def _download(page, button: str) -> str:
    settle(page)
    with page.expect_download(timeout=SLOW) as got:
        page.locator(key(button)).get_by_role("button").click()
    return got.value.path().read_text(encoding="utf-8")


def _pdf_text(page, html: str, paper: str) -> str:
    printer = page.context.new_page()
    printer.set_content(html)
    pdf = PdfReader(io.BytesIO(printer.pdf(format=paper, print_background=True)))
    printer.close()
    width, height = PAPER[paper]
    for sheet in pdf.pages:
        assert abs(float(sheet.mediabox.width) - width) < 2, sheet.mediabox
        assert abs(float(sheet.mediabox.height) - height) < 2, sheet.mediabox
    return _words(" ".join(sheet.extract_text() for sheet in pdf.pages))


def test_a_worksheet_its_key_and_the_lesson_plan_print_on_a4_and_letter(screen_context):
    page = screen_context(VIEWPORTS["1366"]).new_page()
    _open(page, TEACH)
    sheet, answers = _download(page, "teach_sheet"), _download(page, "teach_key")
    plan = _download(page, "teach_plan")
    questions = questions_for("pages/scripts/home.py")  # the picker's first page
    for paper in PAPER:
        text = _pdf_text(page, sheet, paper)
        key_text = _pdf_text(page, answers, paper)
        for q in questions:
            start = _words(q.ask)[:45]
            assert start in text and start in key_text, (paper, start)
            assert "Worked answer" in key_text and "Worked answer" not in text
        assert "Teach_with_it" not in text  # the page's own link, not the Teach page's
        plan_text = _pdf_text(page, plan, paper)
        assert "50-minute lesson" in plan_text
        for step in LESSON:
            assert _words(step.title) in plan_text, step.title
    printer = page.context.new_page()
    printer.set_content(sheet)
    printer.emulate_media(media="print")
    expect(printer.locator("img")).to_have_count(1)  # the QR code
    printer.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    artifact(printer, "worksheet-a4", whole=False)
