"""Self-test page: seed questions, generated questions, worked answers, the score."""

import numpy as np

import specdec_core as sc
from specdec_core import quiz
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


def test_default_render():
    at = open_page(PAGE)
    assert not at.exception and not at.error
    assert _score(at) == "Score this session: 0 / 0 right on the first try"
    assert len([r for r in at.radio if r.key.startswith("quiz_seed_")]) == len(sc.SELF_TEST)
    first = _question(1)
    assert any(first.prompt.split(".")[0] in m.value.replace("\\", "") for m in at.markdown)


def test_seed_questions_right_and_wrong():
    at = open_page(PAGE)
    options, right = quiz.SEED_CHOICES[0]
    at.radio(key="quiz_seed_0").set_value(options[right]).run()
    assert len(at.success) == 1 and "always accept" in at.success[0].value
    wrong = next(o for i, o in enumerate(quiz.SEED_CHOICES[1][0]) if i != quiz.SEED_CHOICES[1][1])
    at.radio(key="quiz_seed_1").set_value(wrong).run()
    assert len(at.error) == 1 and "bonus" in at.error[0].value
    assert _score(at) == "Score this session: 1 / 2 right on the first try"


def test_only_the_first_try_counts():
    at = open_page(PAGE)
    options, right = quiz.SEED_CHOICES[2]
    at.radio(key="quiz_seed_2").set_value(options[(right + 1) % len(options)]).run()
    at.radio(key="quiz_seed_2").set_value(options[right]).run()
    assert len(at.success) == 1  # feedback follows the current choice
    assert _score(at) == "Score this session: 0 / 1 right on the first try"


def test_generated_question_checked_with_worked_answer():
    at = open_page(PAGE)
    question = _question(1)
    at.text_input(key="quiz_answer").input(question.answer_text).run()
    assert not at.exception
    assert any(s.value.startswith("Right") for s in at.success)
    assert question.formula in at.latex[-1].value
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
