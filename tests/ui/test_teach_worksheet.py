"""The Teach page's lesson and printable worksheets (issue 34), without a Streamlit session:
every question on the student sheet, every worked answer on the key, strings escaped, print
CSS, the QR code of the page's link embedded, the lesson plan's links; and the README's page
table names every registered page."""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest

from specdec_ui.kit.qr import qr_png
from specdec_ui.page_questions import questions_for
from specdec_ui.registry import PAGES
from specdec_ui.teach import worksheet
from specdec_ui.teach.lesson import LESSON, LESSON_MINUTES, page_numbers, worksheet_pages
from tests.ui.test_qr import decode  # zxing-cpp reads the PNG back

ROOT = Path(__file__).resolve().parents[2]
LINK = "https://class.example.org/Speedup_explorer?preset=003-H&simple=1"
DATA_URI = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.mark.parametrize("page", worksheet_pages(), ids=lambda p: p.title)
def test_the_sheet_has_every_question_and_the_key_every_worked_answer(page):
    questions = questions_for(page.path)
    assert questions
    sheet = worksheet.student_sheet(page, LINK)
    key = worksheet.answer_key(page, LINK)
    for q in questions:
        assert worksheet.text_html(q.ask) in sheet and worksheet.text_html(q.ask) in key
        assert worksheet.text_html(q.answer) in key
        assert worksheet.text_html(q.answer) not in sheet  # the students' sheet: room instead
    assert sheet.count('class="space"') == len(questions)
    for name, value in page_numbers(page.path):  # the page's numbers
        assert f"<th>{escape(name)}</th><td>{escape(value)}</td>" in sheet


def test_the_speedup_sheet_carries_the_presets_numbers_and_the_computed_answers():
    page = next(p for p in PAGES if p.path == "pages/scripts/speedup.py")
    key = worksheet.answer_key(page, LINK)
    speed = questions_for(page.path)[1]
    assert f"{speed.fact('ms per token'):.2f} ms" in key  # the core's number, as the page says
    assert "<th>alpha</th><td>0.7</td>" in key and "<th>K</th><td>4</td>" in key


def test_every_string_is_escaped_and_no_script_reaches_the_file():
    evil = '<script>alert("x")</script> & "quotes"'
    page = replace(worksheet_pages()[0], title=evil)
    link = 'https://x.org/?a=<img src=x onerror="alert(1)">&b=1'
    for html in (worksheet.student_sheet(page, link), worksheet.answer_key(page, link)):
        assert "<script" not in html.lower() and "<img src=x" not in html
        assert escape(evil) in html and escape(link) in html
    assert worksheet.text_html("**0.85** <b>") == "<strong>0.85</strong> &lt;b&gt;"
    assert worksheet.text_html("a ** b") == "a ** b"  # an unpaired ** stays as written


def test_print_css_fits_a4_and_letter_and_keeps_questions_whole():
    html = worksheet.student_sheet(worksheet_pages()[0], LINK)
    assert "@page { margin: 15mm; }" in html  # the printer's paper, 15 mm all round
    assert "max-width: 180mm" in html  # 210 - 30 (A4) and 216 - 30 (Letter) both hold it
    assert "break-inside: avoid" in html
    assert html.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in html
    assert "stApp" not in html and "streamlit" not in html.lower()  # no app chrome


def test_the_qr_code_is_the_pages_link_as_an_embedded_png():
    html = worksheet.student_sheet(worksheet_pages()[0], LINK)
    (data,) = DATA_URI.findall(html)
    png = base64.b64decode(data)
    assert png == qr_png(LINK)
    assert decode(png) == [LINK]
    relative = worksheet.student_sheet(worksheet_pages()[0], "Speedup_explorer?preset=003-H")
    assert not DATA_URI.findall(relative) and "No QR code" in relative


def test_the_lesson_plan_lists_every_step_with_its_link_qr_and_question():
    base = "https://class.example.org/"
    plan = worksheet.lesson_plan(base, simple=True)
    assert sum(s.minutes for s in LESSON) == LESSON_MINUTES
    assert f"A {LESSON_MINUTES}-minute lesson" in plan
    links = [s.href(base, present=True, simple=True) for s in LESSON]
    for step, link in zip(LESSON, links, strict=True):
        assert escape(link) in plan and "simple=1" in link and "present=1" in link
        asked = step.ask()
        assert (worksheet.text_html(asked.ask) if asked else escape(step.show)) in plan
    codes = [decode(base64.b64decode(d))[0] for d in DATA_URI.findall(plan)]
    assert codes == links
    start = 0
    for step in LESSON:  # the time slots follow each other
        assert f"{start}–{start + step.minutes} min" in plan
        start += step.minutes


def test_the_lesson_asks_the_pages_own_questions_by_reference():
    for step in LESSON:
        if step.question is None:
            assert not questions_for(step.page) and step.show
        else:
            assert step.ask() == questions_for(step.page)[step.question]


def test_the_readme_page_table_has_a_row_for_every_registered_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("| page | what a student does there |", 1)[1].split("\n\n", 1)[0]
    for page in PAGES:
        assert f"| **{page.title}**" in table, page.title
