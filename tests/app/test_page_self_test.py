"""Self-test page: seed questions, generated questions, worked answers, the score."""

import numpy as np

import specdec_core as sc
from specdec_core import quiz
from specdec_ui.self_test.quiz_words import question_text
from tests.app.conftest import open_page
from tests.app.shown_tables import shown_table

PAGE = "pages/scripts/self_test.py"
KINDS = list(quiz.QUESTION_KINDS)


def _score(at) -> str:
    box = at.get_by_key("quiz_score")
    return next(m.value for m in box if getattr(m, "type", "") == "markdown")


def _question(number: int, kind: str | None = None, v: int = 4) -> quiz.QuizQuestion:
    kind = kind or KINDS[(number - 1) % len(KINDS)]
    return quiz.make_question(kind, np.random.default_rng(number), v=v)


def _prompt(number: int) -> str:
    """The words of question ``number`` (Mixed: its kind by the number)."""
    return question_text(_question(number)).prompt


def test_default_render():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    assert _score(at) == "Score this session: 0 / 0 right on the first try"
    assert len([r for r in at.radio if r.key.startswith("quiz_seed_")]) == len(sc.SELF_TEST)
    assert any(_prompt(1).split(".")[0] in m.value.replace("\\", "") for m in at.markdown)


def _said(at) -> str:
    """The live region's text (the container keyed "announce")."""
    return " ".join(e.value for e in at.get_by_key("announce") if e.type == "text")


def _check_seed(at, i: int, choice: str | None):
    """Choose ``choice`` in seed question ``i`` (its form) and press its Check."""
    if choice is not None:
        at.radio(key=f"quiz_seed_{i}").set_value(choice)
    at.button(key=f"quiz_seed_check_{i}").click().run()
    assert not at.exception
    return at


def test_seed_questions_right_and_wrong():
    at = open_page(PAGE)
    options, right = quiz.SEED_CHOICES[0]
    _check_seed(at, 0, options[right])
    assert len(at.success) == 1 and "always accept" in at.success[0].value
    assert _said(at) == f"Question 1: right. {sc.SELF_TEST[0][1]}"
    wrong = next(o for i, o in enumerate(quiz.SEED_CHOICES[1][0]) if i != quiz.SEED_CHOICES[1][1])
    _check_seed(at, 1, wrong)
    assert len(at.error) == 1 and "bonus" in at.error[0].value
    right_1 = quiz.SEED_CHOICES[1][0][quiz.SEED_CHOICES[1][1]]
    assert _said(at).startswith(
        f"Question 2: not quite. You chose “{wrong}”; the right choice is “{right_1}”."
    )
    assert _score(at) == "Score this session: 1 / 2 right on the first try"


def test_choosing_alone_grades_nothing_check_does():
    """Issue 33, item 4: arrow keys choose an option; only Check grades it."""
    at = open_page(PAGE)
    options, right = quiz.SEED_CHOICES[0]
    wrong = options[(right + 1) % len(options)]
    at.radio(key="quiz_seed_0").set_value(wrong).run()  # chosen, not checked
    assert not at.exception and not at.error and not at.success
    assert _score(at) == "Score this session: 0 / 0 right on the first try"
    _check_seed(at, 0, None)  # Check with nothing chosen: a word, no score
    assert _said(at) == "Question 1: choose an answer first, then press Check."
    assert len(at.warning) == 1 and _score(at).startswith("Score this session: 0 / 0")
    _check_seed(at, 0, options[right])
    assert len(at.success) == 1 and not at.error
    assert _score(at) == "Score this session: 1 / 1 right on the first try"


def test_each_radio_group_is_named_by_its_question():
    at = open_page(PAGE)
    for i, (question, _) in enumerate(sc.SELF_TEST):
        radio = at.radio(key=f"quiz_seed_{i}")
        assert radio.label == f"Question {i + 1}: {question}"  # its accessible name
        assert radio.proto.label_visibility.value == 0  # VISIBLE: no hidden "Answer to" name


def test_only_the_first_try_counts():
    at = open_page(PAGE)
    options, right = quiz.SEED_CHOICES[2]
    _check_seed(at, 2, options[(right + 1) % len(options)])
    _check_seed(at, 2, options[right])
    assert len(at.success) == 1 and not at.error  # feedback follows the last check
    assert _score(at) == "Score this session: 0 / 1 right on the first try"


def test_generated_question_checked_with_worked_answer():
    at = open_page(PAGE)
    question = _question(1)
    at.text_input(key="quiz_answer").input(question.answer_text).run()
    assert not at.exception
    assert any(s.value.startswith("Right") for s in at.success)
    assert question_text(question).formula in at.latex[-1].value
    worked = " ".join(m.value for m in at.markdown)
    assert "Worked answer" in worked
    assert _score(at) == "Score this session: 1 / 1 right on the first try"


def test_wrong_answer_shows_the_right_one():
    at = open_page(PAGE)
    question = _question(1)
    wrong = f"{question.answer + 0.2:.3f}"
    at.text_input(key="quiz_answer").input(wrong).run()
    assert any(question.answer_text in e.value for e in at.error)
    assert _score(at) == "Score this session: 0 / 1 right on the first try"


def test_every_kind_can_be_answered():
    at = open_page(PAGE)
    for kind in KINDS:
        at.selectbox(key="quiz_kind").set_value(kind).run()
        question = _question(1, kind)
        at.text_input(key="quiz_answer").input(question.answer_text).run()
        assert not at.exception, kind
        assert any(s.value.startswith("Right") for s in at.success), kind
    assert _score(at) == f"Score this session: {len(KINDS)} / {len(KINDS)} right on the first try"


def test_bad_answer_text_is_an_error_not_a_score():
    at = open_page(PAGE)
    at.text_input(key="quiz_answer").input("<b>lots</b>").run()
    assert not at.exception
    assert len(at.error) == 1 and "not a number" in at.error[0].value
    assert "<b>" not in at.error[0].value
    assert _score(at) == "Score this session: 0 / 0 right on the first try"


def test_new_question_clears_the_answer_and_reveal_counts_as_a_miss():
    at = open_page(PAGE)
    at.text_input(key="quiz_answer").input("0.1").run()
    at.button(key="quiz_new").click().run()
    assert at.text_input(key="quiz_answer").value == ""
    assert any(h.value.startswith("Question 2:") for h in at.subheader)
    at.button(key="quiz_reveal").click().run()
    assert any(_question(2).answer_text in i.value for i in at.info)
    assert _score(at).endswith("/ 2 right on the first try")
    at.button(key="quiz_reset").click().run()
    assert _score(at) == "Score this session: 0 / 0 right on the first try"


def test_vocabulary_size_changes_the_question():
    at = open_page(PAGE)
    at.selectbox(key="quiz_kind").set_value("alpha").run()
    at.slider(key="quiz_vocab").set_value(7).run()
    question = _question(1, "alpha", v=7)
    at.text_input(key="quiz_answer").input(question.answer_text).run()
    assert any(s.value.startswith("Right") for s in at.success)
    table = shown_table(at, "distribution")  # a column per token after the row names
    assert len(table.value.columns) == 1 + 7
    assert list(table.shown["distribution"]) == ["target p", "draft q"]


def test_source_expander():
    at = open_page(PAGE)
    sources = " ".join(c.value for c in at.code)
    assert "def acceptance_probability" in sources and "def residual_distribution" in sources


def test_share_link_reopens_the_same_question():
    at = open_page(PAGE)
    at.selectbox(key="quiz_kind").set_value("alpha").run()
    at.slider(key="quiz_vocab").set_value(6).run()
    at.button(key="quiz_new").click().run()
    at.button(key="quiz_new").click().run()
    assert at.query_params == {"kind": "alpha", "vocab": "6", "seed": "3"}
    assert "?kind=alpha&vocab=6&seed=3" in [c.value for c in at.code]
    again = open_page(PAGE, dict(at.query_params))
    assert not again.exception and not again.warning
    assert any(h.value.startswith("Question 3: ") for h in again.subheader)
    question = _question(3, "alpha", v=6)
    again.text_input(key="quiz_answer").input(question.answer_text).run()
    assert any(s.value.startswith("Right") for s in again.success)


def test_bad_link_values_warn_and_fall_back_to_defaults():
    at = open_page(PAGE, {"kind": "<b>nope</b>", "vocab": "99", "seed": "-4"})
    assert not at.exception and len(at.warning) == 1
    text = at.warning[0].value
    for name in ("'kind'", "'vocab'", "'seed'"):
        assert name in text
    assert "<b>" not in text
    assert at.selectbox(key="quiz_kind").value == "mixed"
    assert at.slider(key="quiz_vocab").value == 4
    assert any(h.value.startswith("Question 1: ") for h in at.subheader)
    at.run()
    assert not at.warning  # shown once


def test_every_action_is_said_in_the_live_region():
    """Issue 33, item 8: New question, Show me the answer and Check are announced."""
    at = open_page(PAGE)
    first = _question(1)
    assert _said(at).startswith("Page: Self-test. Question 1: ")
    assert _prompt(1) in _said(at)
    at.text_input(key="quiz_answer").input(first.answer_text).run()  # Enter
    assert _said(at) == f"Right: {first.answer_text}. The worked answer follows."
    at.button(key="quiz_check").click().run()  # Check again: said again
    assert _said(at) == f"Right: {first.answer_text}. The worked answer follows."
    at.button(key="quiz_new").click().run()
    second = _question(2)
    assert _said(at).startswith("Question 2: ") and _prompt(2) in _said(at)
    at.button(key="quiz_reveal").click().run()
    assert _said(at) == f"The answer is {second.answer_text}. The worked answer follows."
    at.button(key="quiz_new").click().run()
    wrong = f"{_question(3).answer + 0.2:.3f}"
    at.text_input(key="quiz_answer").input(wrong).run()
    at.button(key="quiz_check").click().run()
    assert _said(at) == (
        f"Not quite: you typed {wrong}, the answer is {_question(3).answer_text}. "
        "The worked answer follows."
    )
    at.selectbox(key="quiz_kind").run()  # a rerun that changes nothing says nothing
    assert _said(at) == ""
