"""The Self-test page's sections, top to bottom (``pages/scripts/self_test.py`` calls them).

The questions come from :mod:`specdec_core.quiz` (the seed's quick questions and fresh
numeric ones, each seeded by its number, as numbers); their words from
:mod:`specdec_ui.self_test.quiz_words`, the words for the kinds of question from
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
from specdec_ui.kit.announce import announce, announce_change
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.share import LinkReader
from specdec_ui.kit.simple_mode import simple
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import MAX_SEED, show_error
from specdec_ui.self_test.quiz_words import QuestionText, question_text
from specdec_ui.words import QUESTION_KIND_LABELS

KINDS = list(quiz.QUESTION_KINDS)
# Simple mode (issue 34): only these; no multi-draft, tree, prompt lookup or Medusa.
BASIC_KINDS = ["acceptance", "alpha", "residual", "tokens_out", "expected_tokens"]
MIXED = "mixed"
RESULTS = "quiz__results"  # question id -> right on the first try (kept across page switches)
NUMBER = "quiz__number"  # number of the current generated question
REVEALED = "quiz__revealed"
CHECKED = "quiz__checked"  # seed question index -> the choice its Check graded (None: no choice)
SAY = "quiz__say"  # an action asked to hear the fresh question's verdict (Check, Enter, Show me)
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
    st.session_state.setdefault(CHECKED, {})
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
    _say()


def _say() -> None:
    """Check, Enter in the answer box or Show me: the verdict below is said aloud."""
    st.session_state[SAY] = True


def _reset_score() -> None:
    """Forget the answers: the score, the typed answer and the seed questions' choices."""
    st.session_state[RESULTS] = {}
    st.session_state[CHECKED] = {}
    _clear_answer()
    announce("Score reset: 0 / 0 right on the first try.")
    for i in range(len(sc.SELF_TEST)):
        st.session_state.pop(f"quiz_seed_{i}", None)


# ----------------------------------------------------------------------------- sections
def _seed_verdict(i: int, choice: str | None) -> tuple[str, bool | None]:
    """The words on seed question ``i`` checked with ``choice``, and whether it is right
    (None: nothing was chosen). Plain text: the page escapes it for markdown."""
    answer = sc.SELF_TEST[i][1]
    options, right_index = quiz.SEED_CHOICES[i]
    if choice is None:
        return f"Question {i + 1}: choose an answer first, then press Check.", None
    if choice == options[right_index]:
        return f"Question {i + 1}: right. {answer}", True
    return (
        f"Question {i + 1}: not quite. You chose “{choice}”; the right choice is "
        f"“{options[right_index]}”. {answer}",
        False,
    )


def _check_seed(i: int) -> None:
    """Check on seed question ``i``: grade the choice (the first graded try counts) and say
    the verdict. Choosing alone grades nothing: arrow keys move through the options."""
    choice = st.session_state.get(f"quiz_seed_{i}")
    st.session_state[CHECKED][i] = choice
    words, right = _seed_verdict(i, choice)
    if right is not None:
        _record(f"seed-{i}", right)
    announce(words)


def seed_questions() -> None:
    """The seed's quick questions, multiple choice: each radio group is named by its
    question, graded on its Check button (a form: choosing an option reruns nothing), and
    the verdict with its reason stays under it."""
    st.header("Quick self-test")
    for i, (question, _) in enumerate(sc.SELF_TEST):
        options, _ = quiz.SEED_CHOICES[i]
        with st.form(key=f"quiz_seed_form_{i}", enter_to_submit=False):
            # The label is the group's accessible name as written (Streamlit puts the raw
            # label in aria-label): the seed's own question, plain words without markdown
            # marks or escapes (none of its characters is markdown syntax).
            st.radio(
                f"Question {i + 1}: {question}",
                options,
                index=None,
                key=f"quiz_seed_{i}",
                horizontal=True,
            )
            st.form_submit_button(
                "Check", key=f"quiz_seed_check_{i}", on_click=_check_seed, args=(i,)
            )
        if i not in st.session_state[CHECKED]:
            continue
        words, right = _seed_verdict(i, st.session_state[CHECKED][i])
        box = st.warning if right is None else st.success if right else st.error
        box(md_escape(words), icon="⚠️" if right is None else "✅" if right else "❌")


SIMPLE_NOTE = (
    "Simple mode: the basic kinds only. Switch it off in the sidebar for multi-draft, tree, "
    "prompt-lookup and typical-acceptance (Medusa) questions."
)


def offered_kinds() -> list[str]:
    """The kinds of question on offer: the basic ones in simple mode, else all."""
    return BASIC_KINDS if simple() else KINDS


def _kind_label(kind: str) -> str:
    """The picker's words for a kind of question."""
    return "Mixed (a different kind each time)" if kind == MIXED else QUESTION_KIND_LABELS[kind]


def fresh_inputs() -> None:
    """The kind of question, the vocabulary size and "New question"."""
    st.header("Fresh numeric questions")
    a, b, c = st.columns([2, 1, 1])
    if st.session_state.get("quiz_kind") not in [MIXED, *offered_kinds()]:
        st.session_state["quiz_kind"] = MIXED  # simple mode: an advanced kind is not offered
    a.selectbox(
        "Kind of question",
        [MIXED, *offered_kinds()],
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
    if simple():
        st.caption(SIMPLE_NOTE)


@dataclass(frozen=True)
class Fresh:
    """The fresh question on screen: its number (its seed), kind, vocabulary, question and
    its words."""

    number: int
    kind: str  # one of quiz.QUESTION_KINDS (Mixed picks one by the number)
    vocab: int
    question: quiz.QuizQuestion
    text: QuestionText

    @property
    def question_id(self) -> str:
        """The score's key of this question."""
        return f"gen-{self.number}-{self.kind}-{self.vocab}"


def fresh_question(chosen: dict[str, object]) -> Fresh:
    """The question of the kept values ``chosen`` and the current number (Mixed cycles
    through the kinds); a bad value is said in words and the page stops there."""
    number = int(st.session_state[NUMBER])
    kinds = offered_kinds()  # Mixed cycles through the kinds on offer
    kind = str(chosen["kind"]) if chosen["kind"] in kinds else kinds[(number - 1) % len(kinds)]
    vocab = int(chosen["vocab"])
    try:
        question = quiz.make_question(kind, np.random.default_rng(number), v=vocab)
    except sc.SpecDecError as err:
        show_error(err)
        st.stop()
    return Fresh(number, kind, vocab, question, question_text(question))


def question_and_answer_box(fresh: Fresh) -> None:
    """The question (its p and q as a table), the answer box, Check and Show me."""
    question = fresh.question
    heading = f"Question {fresh.number}: {QUESTION_KIND_LABELS[fresh.kind].lower()}"
    announce_change("quiz_question", fresh.question_id, f"{heading}. {fresh.text.prompt}")
    st.subheader(heading)
    st.write(md_escape(fresh.text.prompt))
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
        on_change=_say,
    )
    left, right = st.columns(2)
    left.button("Check", key="quiz_check", type="primary", on_click=_say)
    right.button("Show me the answer", key="quiz_reveal", on_click=_reveal)


def _verdict(fresh: Fresh, typed: str) -> bool:
    """Right or not quite for a typed answer (recorded); False when it cannot be read."""
    question = fresh.question
    try:
        right_answer = quiz.check_answer(question, typed)
    except sc.SpecDecError as err:
        show_error(err)
        _said(str(err))
        return False
    _record(fresh.question_id, right_answer)
    if right_answer:
        words = f"Right: {question.answer_text}."
        st.success(words, icon="✅")
    else:
        words = f"Not quite: you typed {typed}, the answer is {question.answer_text}."
        st.error(
            f"Not quite: you typed {md_escape(typed)}, the answer is {question.answer_text}.",
            icon="❌",
        )
    _said(words + " The worked answer follows.")
    return True


def _said(words: str) -> None:
    """Say ``words`` when an action asked for the verdict (Check, Enter, Show me)."""
    if st.session_state.pop(SAY, False):
        announce(words)


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
        _said(f"The answer is {question.answer_text}. The worked answer follows.")
    else:
        _said("Type an answer first, then press Check.")
        show_worked = False
    if show_worked:
        worked = fresh.text.worked
        st.latex(fresh.text.formula)
        st.markdown("**Worked answer**\n\n" + "\n".join(f"1. {md_escape(line)}" for line in worked))


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
