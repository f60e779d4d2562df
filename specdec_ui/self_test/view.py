"""The Self-test page's sections, top to bottom (``pages/scripts/self_test.py`` calls them).

The questions come from :mod:`specdec_core.quiz` (the seed's quick questions and fresh
numeric ones, each seeded by its number); the words for the kinds of question from
:mod:`specdec_ui.words`. Session keys besides the widgets' (``quiz_``): ``quiz__results``
(question id -> right on the first try, kept across page switches), ``quiz__number`` (the
number of the fresh question on screen) and ``quiz__revealed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import specdec_core as sc
from specdec_core import quiz
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import MAX_SEED, show_error
from specdec_ui.words import QUESTION_KIND_LABELS

KINDS = list(quiz.QUESTION_KINDS)
MIXED = "mixed"
RESULTS = "quiz__results"  # question id -> right on the first try (kept across page switches)
NUMBER = "quiz__number"  # number of the current generated question
REVEALED = "quiz__revealed"
ANSWER = "quiz_answer"
MAX_NUMBER = MAX_SEED  # the question number seeds its generator
SHARE_CAPTION = (
    "Share this question: add this to the page's address (the address bar already has it)."
)


# ----------------------------------------------------------------------------- link and state
def _values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's question: its kind, vocabulary size and number (``seed``)."""
    st.session_state[NUMBER] = link.int_in("seed", 1, MAX_NUMBER, 1)
    return {
        "kind": link.choice("kind", [MIXED, *KINDS], MIXED),
        "vocab": link.int_in("vocab", quiz.MIN_VOCAB, quiz.MAX_VOCAB_QUIZ, 4),
    }


def page_state() -> PageState:
    """The page's kept state (on a session's first visit, the question of its link), the
    score and the question number."""
    state = PageState("quiz", {"kind": MIXED, "vocab": 4})
    if (link := state.first_visit()) is not None:
        state.start(_values_from_link(link), link.problems)
    state.restore()
    st.session_state.setdefault(RESULTS, {})
    st.session_state.setdefault(NUMBER, 1)
    return state


def _record(question_id: str, right: bool) -> None:
    """Only the first answer to a question counts for the score."""
    st.session_state[RESULTS].setdefault(question_id, right)


def _clear_answer() -> None:
    """A new question or setting: the answer box empties, the answer hides."""
    st.session_state[ANSWER] = ""
    st.session_state[REVEALED] = False


def _new_question() -> None:
    """The next question number (it wraps after MAX_NUMBER)."""
    st.session_state[NUMBER] = st.session_state[NUMBER] % MAX_NUMBER + 1
    _clear_answer()


def _reveal() -> None:
    """Show me the answer (it counts as not right on the first try)."""
    st.session_state[REVEALED] = True


def _reset_score() -> None:
    """Forget the answers: the score, the typed answer and the seed questions' choices."""
    st.session_state[RESULTS] = {}
    _clear_answer()
    for i in range(len(sc.SELF_TEST)):
        st.session_state.pop(f"quiz_seed_{i}", None)


# ----------------------------------------------------------------------------- sections
def seed_questions() -> None:
    """The seed's quick questions, multiple choice, each answer with its reason."""
    st.header("Quick self-test")
    for i, ((question, answer), (options, right_index)) in enumerate(
        zip(sc.SELF_TEST, quiz.SEED_CHOICES, strict=True)
    ):
        st.markdown(f"**{i + 1}. {md_escape(question)}**")
        choice = st.radio(
            f"Answer to question {i + 1}",
            options,
            index=None,
            key=f"quiz_seed_{i}",
            label_visibility="collapsed",
            horizontal=True,
        )
        if choice is None:
            continue
        right = choice == options[right_index]
        _record(f"seed-{i}", right)
        if right:
            st.success(f"Right. {md_escape(answer)}", icon="✅")
        else:
            st.error(
                f"Not quite (the right choice is “{md_escape(options[right_index])}”). "
                f"{md_escape(answer)}",
                icon="❌",
            )


def _kind_label(kind: str) -> str:
    """The picker's words for a kind of question."""
    return "Mixed (a different kind each time)" if kind == MIXED else QUESTION_KIND_LABELS[kind]


def fresh_inputs() -> None:
    """The kind of question, the vocabulary size and "New question"."""
    st.header("Fresh numeric questions")
    a, b, c = st.columns([2, 1, 1])
    a.selectbox(
        "Kind of question",
        [MIXED, *KINDS],
        key="quiz_kind",
        format_func=_kind_label,
        on_change=_clear_answer,
    )
    b.slider(
        "Tokens in the vocabulary",
        quiz.MIN_VOCAB,
        quiz.MAX_VOCAB_QUIZ,
        key="quiz_vocab",
        on_change=_clear_answer,
    )
    c.button("🎲 New question", key="quiz_new", on_click=_new_question)


@dataclass(frozen=True)
class Fresh:
    """The fresh question on screen: its number (its seed), kind, vocabulary and question."""

    number: int
    kind: str  # one of quiz.QUESTION_KINDS (Mixed picks one by the number)
    vocab: int
    question: quiz.QuizQuestion

    @property
    def question_id(self) -> str:
        """The score's key of this question."""
        return f"gen-{self.number}-{self.kind}-{self.vocab}"


def fresh_question(chosen: dict[str, object]) -> Fresh:
    """The question of the kept values ``chosen`` and the current number (Mixed cycles
    through the kinds); a bad value is said in words and the page stops there."""
    number = int(st.session_state[NUMBER])
    kind = KINDS[(number - 1) % len(KINDS)] if chosen["kind"] == MIXED else str(chosen["kind"])
    vocab = int(chosen["vocab"])
    try:
        question = quiz.make_question(kind, np.random.default_rng(number), v=vocab)
    except sc.SpecDecError as err:
        show_error(err)
        st.stop()
    return Fresh(number, kind, vocab, question)


def question_and_answer_box(fresh: Fresh) -> None:
    """The question (its p and q as a table), the answer box, Check and Show me."""
    question = fresh.question
    st.subheader(f"Question {fresh.number}: {QUESTION_KIND_LABELS[fresh.kind].lower()}")
    st.write(md_escape(question.prompt))
    if fresh.kind != "expected_tokens":
        show_table(
            pd.DataFrame(
                {
                    "token": question.labels,
                    "target p": question.p_target,
                    "draft q": question.q_draft,
                }
            )
            .set_index("token")
            .T.rename_axis("distribution")  # a named index: no empty header cell (issue 28)
            .reset_index(),  # the row names as the first column, under its header
            name=f"Question {fresh.number}: target p and draft q of each token",
            width="content",
        )
    st.text_input(
        "Your answer",
        key=ANSWER,
        max_chars=quiz.MAX_ANSWER_LENGTH,
        placeholder="a whole number" if question.integer else "e.g. 0.75, 3/4 or 75%",
        help="Press Enter or Check. Decimals within 0.006 of the exact answer count as right.",
    )
    left, right = st.columns(2)
    left.button("Check", key="quiz_check", type="primary")
    right.button("Show me the answer", key="quiz_reveal", on_click=_reveal)


def _verdict(fresh: Fresh, typed: str) -> bool:
    """Right or not quite for a typed answer (recorded); False when it cannot be read."""
    question = fresh.question
    try:
        right_answer = quiz.check_answer(question, typed)
    except sc.SpecDecError as err:
        show_error(err)
        return False
    _record(fresh.question_id, right_answer)
    if right_answer:
        st.success(f"Right: {question.answer_text}.", icon="✅")
    else:
        st.error(
            f"Not quite: you typed {md_escape(typed)}, the answer is {question.answer_text}.",
            icon="❌",
        )
    return True


def verdict_and_worked_answer(fresh: Fresh) -> None:
    """The verdict on the typed answer (or the revealed one) and, then, the worked answer."""
    question = fresh.question
    typed = st.session_state.get(ANSWER, "").strip()
    if typed:
        show_worked = _verdict(fresh, typed)
    elif st.session_state.get(REVEALED, False):
        _record(fresh.question_id, False)
        show_worked = True
        st.info(f"The answer is {question.answer_text}.", icon="💡")
    else:
        show_worked = False
    if show_worked:
        st.latex(question.formula)
        st.markdown(
            "**Worked answer**\n\n" + "\n".join(f"1. {md_escape(line)}" for line in question.worked)
        )


def score_box():
    """The container of the score, near the top (filled last, by :func:`score`)."""
    return st.container(key="quiz_score", border=True)


def score(box) -> None:
    """Right on the first try out of the questions answered, and Reset score, in ``box``."""
    results = st.session_state[RESULTS]
    with box:
        cols = st.columns([3, 1])
        cols[0].markdown(
            f"Score this session: {sum(results.values())} / {len(results)} right on the first try"
        )
        cols[1].button("Reset score", key="quiz_reset", on_click=_reset_score)


def share(state: PageState, chosen: dict[str, object], fresh: Fresh) -> None:
    """The question's link: the chosen kind (Mixed stays Mixed), vocabulary and number."""
    state.share(
        {"kind": chosen["kind"], "vocab": fresh.vocab, "seed": fresh.number},
        caption=SHARE_CAPTION,
    )
