"""What each page asks its class: the shared pieces, and the finder of a page's questions.

A teacher needs two or three questions to put to the class, with a worked answer to unfold
after the students have tried. Every question is about numbers a student can open on the
page (its default preset or example), and every number in an answer is computed by the core
(:mod:`specdec_core`), never typed: ``tests/app/test_held_speedup_and_page_questions.py``
recomputes each one and checks that an answer states no number that is neither given in its
question nor one of its computed ``facts``.

A page's questions live in its own room, ``specdec_ui/<room>/questions.py``, whose
``questions()`` returns them; the registry names the room (:attr:`PageInfo.room
<specdec_ui.registry.PageInfo.room>`) and says whether the page asks (``asks``, True unless
the entry says otherwise). :func:`questions_for` loads them by that convention and fails
loudly (:class:`MissingQuestions`) where a page that asks has no questions, so a new page's
"What this page asks" cannot silently vanish; :func:`questions_box` draws them (Streamlit),
each answer in its own folded box.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np
import streamlit as st

from specdec_ui.registry import PageInfo, page_info

BOX_LABEL = "What this page asks"


@dataclass(frozen=True)
class Question:
    """One question for the class, its worked answer (markdown) and the numbers the answer
    states, by name, as the core computed them."""

    ask: str
    answer: str
    facts: tuple[tuple[str, float], ...] = ()
    # Asked in class (specdec_ui.classroom): multiple choice (``choices``, ``right`` the index
    # of the right one) or a number (the fact named ``number``, within ``tolerance``, the half
    # unit of the last digit its worked answer writes; ``unit`` says what the number is).
    choices: tuple[str, ...] = ()
    right: int = 0
    number: str = ""
    tolerance: float = 0.0
    unit: str = ""

    def fact(self, name: str) -> float:
        return dict(self.facts)[name]


class MissingQuestions(LookupError):
    """A page the registry says asks questions (``asks=True``) has none in its room."""


def half_unit(x: float, digits: int = 3) -> float:
    """Half a unit of the last of ``digits`` significant digits of ``x``: the tolerance its
    worked answer implies (``sig_text(x, digits)``)."""
    return 0.5 * 10.0 ** (np.floor(np.log10(abs(x))) - digits + 1) if x else 0.5 * 10.0**-digits


def sig_text(x: float, digits: int = 3) -> str:
    """A computed number as the answers write it (``digits`` significant digits)."""
    return f"{x:.{digits}g}"


def prob_text(x: float) -> str:
    """A probability with two decimals, as the pages write vector entries (0 for zero)."""
    return "0" if x == 0 else f"{x:.2f}"


# The worked round's target p (A..E) and its draft q: Home, the Round page and the Variants lab
# ask about them.
WORKED_P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
WORKED_Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])


def questions_module(info: PageInfo) -> str:
    """The module that holds the questions of the page ``info``: its room's ``questions``."""
    return f"specdec_ui.{info.room}.questions"


def page_questions(info: PageInfo) -> tuple[Question, ...]:
    """The questions of the registered page ``info`` (``()`` where its entry says
    ``asks=False``); :class:`MissingQuestions` names what is missing where it asks but its
    room has no ``questions.py``, no ``questions()`` or an empty one."""
    if not info.asks:
        return ()
    name = questions_module(info)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name not in (name, name.rpartition(".")[0]):  # not the room or its questions
            raise
        raise MissingQuestions(
            f"{info.title} ({info.path}) asks questions (its PageInfo has asks=True), but "
            f"{name.replace('.', '/')}.py does not exist: write it with a questions() that "
            "returns the page's Question tuple, or register the page with asks=False"
        ) from None
    make = getattr(module, "questions", None)
    found = make() if callable(make) else ()
    if not found:
        raise MissingQuestions(
            f"{info.title} ({info.path}): {name} has no questions() returning at least one "
            "Question; a page that asks none is registered with asks=False"
        )
    return found


def questions_for(page_path: str) -> tuple[Question, ...]:
    """The questions of the page whose script is ``page_path`` (a path the registry knows,
    e.g. ``"pages/scripts/round.py"``; KeyError names an unregistered one)."""
    return page_questions(page_info(page_path))


def questions_box(questions: tuple[Question, ...], intro: str | None = None) -> None:
    """ "What this page asks" (folded): each question, its worked answer folded under it;
    then the page's intro, when the page shows it nowhere else (``intro``)."""
    with st.expander(BOX_LABEL, key="page_questions"):
        st.caption("Questions for the class; unfold an answer once they have tried.")
        for i, q in enumerate(questions, start=1):
            st.markdown(f"**{i}.** {q.ask}")
            with st.expander("Worked answer", key=f"page_answer_{i}"):
                st.markdown(q.answer)
        if intro is not None:
            st.divider()
            st.markdown(intro)
