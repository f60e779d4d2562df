"""Self-test: the seed's quick questions and fresh numeric ones, with worked answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import specdec_core as sc
from specdec_core import quiz
from specdec_ui.page_state import PageState
from specdec_ui.share import LinkReader
from specdec_ui.text import md_escape
from specdec_ui.widgets import MAX_SEED, page_setup, show_error, show_source
from specdec_ui.words import QUESTION_KIND_LABELS

PAGE = page_setup(__file__)

KINDS = list(quiz.QUESTION_KINDS)
MIXED = "mixed"
RESULTS = "quiz__results"  # question id -> right on the first try (kept across page switches)
NUMBER = "quiz__number"  # number of the current generated question

MAX_NUMBER = MAX_SEED  # the question number seeds its generator


def _values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's question: its kind, vocabulary size and number (``seed``)."""
    st.session_state[NUMBER] = link.int_in("seed", 1, MAX_NUMBER, 1)
    return {
        "kind": link.choice("kind", [MIXED, *KINDS], MIXED),
        "vocab": link.int_in("vocab", quiz.MIN_VOCAB, quiz.MAX_VOCAB_QUIZ, 4),
    }


state = PageState("quiz", {"kind": MIXED, "vocab": 4})
if (link := state.first_visit()) is not None:
    state.start(_values_from_link(link), link.problems)
state.restore()
st.session_state.setdefault(RESULTS, {})
st.session_state.setdefault(NUMBER, 1)


def _record(question_id: str, right: bool) -> None:
    """Only the first answer to a question counts for the score."""
    st.session_state[RESULTS].setdefault(question_id, right)


def _new_question() -> None:
    st.session_state[NUMBER] = st.session_state[NUMBER] % MAX_NUMBER + 1
    _clear_answer()


def _clear_answer() -> None:
    st.session_state["quiz_answer"] = ""
    st.session_state["quiz__revealed"] = False


def _reveal() -> None:
    st.session_state["quiz__revealed"] = True


def _reset_score() -> None:
    st.session_state[RESULTS] = {}
    _clear_answer()
    for i in range(len(sc.SELF_TEST)):
        st.session_state.pop(f"quiz_seed_{i}", None)


st.title(f"{PAGE.icon} {PAGE.title}")
st.write(
    "Check yourself: first the quick questions from the worked examples, then as many fresh "
    "numeric questions as you like. Every answer shows how to get there; only your first "
    "try at each question counts for the score."
)
state.warn_link()

results = st.session_state[RESULTS]
score_box = st.container(key="quiz_score", border=True)

st.header("Quick self-test (seed 003)")
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
    if choice is not None:
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

st.header("Fresh numeric questions")
a, b, c = st.columns([2, 1, 1])
a.selectbox(
    "Kind of question",
    [MIXED, *KINDS],
    key="quiz_kind",
    format_func=lambda k: (
        "Mixed (a different kind each time)" if k == MIXED else QUESTION_KIND_LABELS[k]
    ),
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
chosen = state.keep()
number = int(st.session_state[NUMBER])
kind = KINDS[(number - 1) % len(KINDS)] if chosen["kind"] == MIXED else str(chosen["kind"])
vocab = int(chosen["vocab"])
question_id = f"gen-{number}-{kind}-{vocab}"
try:
    question = quiz.make_question(kind, np.random.default_rng(number), v=vocab)
except sc.SpecDecError as err:
    show_error(err)
    st.stop()

st.subheader(f"Question {number}: {QUESTION_KIND_LABELS[kind].lower()}")
st.write(md_escape(question.prompt))
if kind != "expected_tokens":
    st.dataframe(
        pd.DataFrame(
            {"token": question.labels, "target p": question.p_target, "draft q": question.q_draft}
        )
        .set_index("token")
        .T,
        width="content",
    )
st.text_input(
    "Your answer",
    key="quiz_answer",
    max_chars=quiz.MAX_ANSWER_LENGTH,
    placeholder="a whole number" if question.integer else "e.g. 0.75, 3/4 or 75%",
    help="Press Enter or Check. Decimals within 0.006 of the exact answer count as right.",
)
left, right = st.columns(2)
left.button("Check", key="quiz_check", type="primary")
right.button("Show me the answer", key="quiz_reveal", on_click=_reveal)

typed = st.session_state.get("quiz_answer", "").strip()
revealed = st.session_state.get("quiz__revealed", False)
show_worked = False
if typed:
    try:
        right_answer = quiz.check_answer(question, typed)
    except sc.SpecDecError as err:
        show_error(err)
    else:
        _record(question_id, right_answer)
        show_worked = True
        if right_answer:
            st.success(f"Right: {question.answer_text}.", icon="✅")
        else:
            st.error(
                f"Not quite: you typed {md_escape(typed)}, the answer is {question.answer_text}.",
                icon="❌",
            )
elif revealed:
    _record(question_id, False)
    show_worked = True
    st.info(f"The answer is {question.answer_text}.", icon="💡")
if show_worked:
    st.latex(question.formula)
    st.markdown(
        "**Worked answer**\n\n" + "\n".join(f"1. {md_escape(line)}" for line in question.worked)
    )

results = st.session_state[RESULTS]
n_right = sum(results.values())
with score_box:
    cols = st.columns([3, 1])
    cols[0].markdown(f"Score this session: {n_right} / {len(results)} right on the first try")
    cols[1].button("Reset score", key="quiz_reset", on_click=_reset_score)

state.share(
    {"kind": chosen["kind"], "vocab": vocab, "seed": number},
    caption="Share this question: add this to the page's address (the address bar already has it).",
)
show_source(sc.acceptance_probability, sc.residual_distribution, quiz.make_question)
