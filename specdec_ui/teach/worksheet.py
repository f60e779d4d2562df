"""Printable worksheets (issue 34): a page's questions as a student sheet and an answer key,
and the lesson plan, each one standalone HTML file the teacher downloads and prints.

Built from the same :class:`~specdec_ui.page_questions.Question` objects as the pages'
"What this page asks" (the worked answers' numbers come from the core), with the page's
numbers (:func:`~specdec_ui.teach.lesson.page_numbers`), its link and its QR code (a PNG from
:mod:`specdec_ui.kit.qr`, embedded as a data URI). Every string is escaped with
``html.escape`` before it enters the HTML; the answers' ``**bold**`` becomes ``<strong>``
after escaping. ``@page`` CSS with margins that fit A4 and Letter, no app chrome, no
script. The files are downloads: the app never renders them. No Streamlit here.
"""

from __future__ import annotations

import base64
import re
from html import escape

from specdec_ui.kit.qr import LinkTooLongError, qr_png
from specdec_ui.page_questions import Question, questions_for
from specdec_ui.registry import PageInfo
from specdec_ui.teach.lesson import LESSON, Step, page_numbers

APP = "Speculative Decoding Lab"
# Static print CSS (a module constant, no user text). A4 is 210 x 297 mm, Letter 216 x 279
# mm: 15 mm margins leave 180 mm of width on both, and no box is wider than that.
PRINT_CSS = """
@page { margin: 15mm; }
* { box-sizing: border-box; }
html { color: #000; background: #fff; }
body { font: 11pt/1.45 "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 0 auto;
       max-width: 180mm; }
h1 { font-size: 17pt; margin: 0 0 2mm; }
h2 { font-size: 13pt; margin: 5mm 0 2mm; }
.sub { color: #333; margin: 0 0 4mm; }
.head { display: flex; gap: 6mm; align-items: center; border-bottom: 1px solid #000;
        padding-bottom: 3mm; margin-bottom: 3mm; }
.head img { width: 32mm; height: 32mm; flex: none; }
.link { font-family: "DejaVu Sans Mono", monospace; font-size: 9pt; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #555; padding: 1.5mm 2mm; text-align: left; vertical-align: top; }
th { background: #eee; }
.q { break-inside: avoid; page-break-inside: avoid; margin: 0 0 4mm; }
.space { border: 1px solid #777; height: 38mm; margin-top: 2mm; }
.answer { border-left: 2mm solid #0072B2; padding: 1mm 0 1mm 3mm; margin-top: 2mm; }
.step img { width: 22mm; height: 22mm; }
.name { margin: 0 0 3mm; }
@media screen { body { padding: 10mm 0; } }
@media print { a { color: #000; text-decoration: none; } }
"""
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def text_html(markdown: str) -> str:
    """A question's or answer's markdown as HTML: escaped, then ``**x**`` -> <strong>."""
    return _BOLD.sub(r"<strong>\1</strong>", escape(markdown))


def qr_html(link: str, alt: str = "QR code of the page's link") -> str:
    """The link's QR code as an <img> with a PNG data URI, or a note when there is none."""
    if not link.startswith(("http://", "https://")):
        return '<p class="sub">(No QR code: open the app in a browser to get its address.)</p>'
    try:
        png = qr_png(link)
    except LinkTooLongError as err:
        return f'<p class="sub">(No QR code: {escape(str(err))}.)</p>'
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}">'


def document(title: str, body: str) -> str:
    """A standalone printable HTML document (``title`` is escaped here, ``body`` is HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{PRINT_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _header(page: PageInfo, link: str, what: str) -> str:
    return (
        f'<div class="head">{qr_html(link)}<div><h1>{escape(page.title)}: {escape(what)}</h1>'
        f'<p class="sub">{escape(APP)}. Open the page (scan the code or type the link):</p>'
        f'<p class="link">{escape(link)}</p></div></div>'
    )


def _numbers(page: PageInfo) -> str:
    rows = page_numbers(page.path)
    if not rows:
        return '<p class="sub">Every number you need is in the question.</p>'
    cells = "".join(f"<tr><th>{escape(a)}</th><td>{escape(b)}</td></tr>" for a, b in rows)
    return f"<h2>The numbers on the page</h2><table>{cells}</table>"


def _question(i: int, q: Question, *, key: bool) -> str:
    after = (
        f'<div class="answer"><strong>Worked answer.</strong> {text_html(q.answer)}</div>'
        if key
        else '<div class="space" aria-label="Space for your answer"></div>'
    )
    return f'<div class="q"><p><strong>{i}.</strong> {text_html(q.ask)}</p>{after}</div>'


def _sheet(page: PageInfo, link: str, *, key: bool) -> str:
    questions = questions_for(page.path)
    what = "answer key" if key else "worksheet"
    name = "" if key else '<p class="name">Name: ____________________ Date: ____________</p>'
    body = "".join(_question(i, q, key=key) for i, q in enumerate(questions, start=1))
    return document(
        f"{page.title}: {what} · {APP}",
        f"{_header(page, link, what)}{name}{_numbers(page)}<h2>Questions</h2>{body}",
    )


def student_sheet(page: PageInfo, link: str) -> str:
    """The page's questions with room to answer, its numbers, link and QR code."""
    return _sheet(page, link, key=False)


def answer_key(page: PageInfo, link: str) -> str:
    """The same sheet with every worked answer under its question."""
    return _sheet(page, link, key=True)


def _step_row(start: int, step: Step, base: str, simple: bool) -> str:
    link = step.href(base, present=True, simple=simple)
    asked = step.ask()
    ask = text_html(asked.ask) if asked is not None else "(Point at it.) " + escape(step.show)
    return (
        f'<tr class="q step"><td>{start}–{start + step.minutes} min</td>'
        f"<td><strong>{escape(step.info.title)}</strong><br>{escape(step.title)}<br>"
        f'<span class="sub">{escape(step.show)}</span></td><td>{ask}</td>'
        f'<td>{qr_html(link, "QR code of this step")}<br><span class="link">{escape(link)}'
        "</span></td></tr>"
    )


def lesson_plan(base: str, *, simple: bool = False) -> str:
    """The 50-minute plan as a printable table: minutes, page, what to show, the question
    to ask and each step's link (presenter view) with its QR code."""
    rows, start = [], 0
    for step in LESSON:
        rows.append(_step_row(start, step, base, simple))
        start += step.minutes
    head = "<tr><th>time</th><th>page and step</th><th>ask the class</th><th>open</th></tr>"
    body = (
        f"<h1>A {start}-minute lesson on speculative decoding</h1>"
        f'<p class="sub">{escape(APP)}: each link opens its page in presenter view on the '
        "right numbers. The worked answers are on each page under “What this page asks” and "
        "in the answer keys.</p>"
        f"<table>{head}{''.join(rows)}</table>"
    )
    return document(f"Lesson plan · {APP}", body)
