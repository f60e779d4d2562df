"""The Teach page's sections, top to bottom (``pages/scripts/teach.py`` calls them).

The lesson path (:data:`specdec_ui.teach.lesson.LESSON`: each step a link that opens its page
in presenter view on its preset, and the page's question to ask), what simple mode folds
away, and the printable worksheets, answer keys and lesson plan as downloads (built only
when a button is pressed, by :mod:`specdec_ui.teach.worksheet`; never rendered here).
Widget keys start with ``teach_``.
"""

from __future__ import annotations

import streamlit as st

from specdec_ui.kit.presenter import share_page
from specdec_ui.kit.simple_mode import FOLDED, simple
from specdec_ui.registry import PageInfo
from specdec_ui.teach import worksheet
from specdec_ui.teach.lesson import LESSON, Step, root_of, worksheet_pages

INTRO = (
    "A 50-minute lesson with this app, ready for tomorrow: seven pages in order, each step a "
    "link that opens its page **in presenter view on the right numbers**, with the question to "
    "put to the class (its worked answer is on the page, folded). Print a worksheet for the "
    "students and keep the answer key. Students follow on their phones by the QR code in "
    "the page's corner."
)
HTML = "text/html"


def _root() -> str:
    """The app's root address as the browser gave it ("" until it is known)."""
    return root_of(st.context.url)


def _step(i: int, start: int, step: Step) -> None:
    """One step: its minutes, page and title, what to show, the question and its link."""
    with st.container(border=True, key=f"teach_step_{i}"):
        st.markdown(
            f"**{start}–{start + step.minutes} min · {step.info.icon} {step.info.title}**: "
            f"{step.title}"
        )
        st.caption(step.show)
        asked = step.ask()
        if asked is not None:
            st.markdown(f"❓ **Ask:** {asked.ask}")
        st.link_button(
            f"▶ Open {step.info.title} in presenter view",
            step.href(present=True, simple=simple()),
            key=f"teach_open_{i}",
            help="Opens in a new tab, on this step's numbers.",
        )


def lesson_path() -> None:
    """The plan: one box per step, in order, with the minutes adding up to the lesson."""
    st.header("The lesson, step by step")
    start = 0
    for i, step in enumerate(LESSON):
        _step(i, start, step)
        start += step.minutes
    st.caption(
        f"{start} minutes in all. Each link opens a fresh tab, so a page opens on the step's "
        "numbers even when you had it open before."
    )


def simple_mode_note() -> None:
    """What simple mode folds away, and whether it is on."""
    st.header("Simple mode for a first lesson")
    state = "on: the links above keep it" if simple() else "off"
    st.markdown(
        f"Simple mode is **{state}** (🌱 in the sidebar, or `simple=1` in a link; it stays on "
        "from page to page). It folds away:"
    )
    st.markdown("\n".join(f"- **{page}**: {what}" for page, what in FOLDED))


def _sheet_page() -> PageInfo:
    pages = worksheet_pages()
    titles = {p.title: p for p in pages}
    chosen = st.selectbox(
        "Worksheet for the page", list(titles), key="teach_sheet_page", format_func=str
    )
    return titles[chosen]


def _page_link(page: PageInfo) -> str:
    """The page's link on the sheet: the lesson step's numbers (students' phones: no
    presenter view), else the page's plain address."""
    step = next((s for s in LESSON if s.page == page.path), None)
    if step is None:
        return _root() + page.url_path
    return step.href(_root(), present=False, simple=simple())


def worksheets() -> None:
    """A student sheet and an answer key for a page, and the lesson plan: HTML to print."""
    st.header("Worksheets to print")
    st.write(
        "Each page's questions as a sheet for the students (with room to answer) and an answer "
        "key with every worked answer; both carry the page's numbers, its link and QR code. "
        "Open the downloaded file in a browser and print it (A4 or Letter)."
    )
    page = _sheet_page()
    link, name = _page_link(page), page.url_path or "Home"
    left, mid, right = st.columns(3)
    left.download_button(
        "📄 Student worksheet",
        lambda: worksheet.student_sheet(page, link),
        file_name=f"worksheet-{name}.html",
        mime=HTML,
        key="teach_sheet",
        on_click="ignore",  # a download changes nothing: no rerun
    )
    mid.download_button(
        "🔑 Answer key",
        lambda: worksheet.answer_key(page, link),
        file_name=f"answer-key-{name}.html",
        mime=HTML,
        key="teach_key",
        on_click="ignore",  # a download changes nothing: no rerun
    )
    root, on = _root(), simple()
    right.download_button(
        "🗓️ Lesson plan",
        lambda: worksheet.lesson_plan(root, simple=on),
        file_name="lesson-plan.html",
        mime=HTML,
        key="teach_plan",
        on_click="ignore",  # a download changes nothing: no rerun
    )
    if not _root():
        st.caption("The QR codes appear on the sheets once the page has loaded in a browser.")


def share() -> None:
    """This page's link and QR code."""
    st.header("Share this page")
    share_page()
