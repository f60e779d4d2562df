"""The Self-test's generated questions in words: every kind has its words, and the words
say the question's own numbers (specdec_ui.self_test.quiz_words over specdec_core.quiz)."""

import numpy as np
import pytest

from specdec_core import quiz
from specdec_ui.self_test.quiz_words import QUESTION_TEXT, question_text

KINDS = list(quiz.QUESTION_KINDS)


def _text(kind: str, seed: int, v: int = 4):
    question = quiz.make_question(kind, np.random.default_rng(seed), v=v)
    return question, question_text(question)


def test_every_question_kind_has_its_words():
    assert set(QUESTION_TEXT) == set(quiz.QUESTION_KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_different_seeds_ask_different_questions(kind):
    prompts = {_text(kind, s)[1].prompt for s in range(10)}
    assert len(prompts) >= 8


@pytest.mark.parametrize("kind", KINDS)
def test_worked_answer_and_formula_show_the_answer(kind):
    question, text = _text(kind, 11)
    assert text.prompt and text.worked and text.formula
    assert question.answer_text in " ".join(text.worked) + text.formula


@pytest.mark.parametrize("seed", range(25))
def test_acceptance_names_the_drafted_token(seed):
    question, text = _text("acceptance", seed)
    assert f"token {question.labels[question.token]}." in text.prompt


@pytest.mark.parametrize("seed", range(40))
def test_tokens_out_worked_lines_recount_the_round(seed):
    """Recount the round by hand from the worked lines: kept, then at most one rejection."""
    question, text = _text("tokens_out", seed)
    lines = text.worked
    k = len(lines) - 1
    assert k == question.numbers["k"] and f"K = {k} tokens" in text.prompt
    kept = sum(": kept." in line for line in lines[:k])
    rejected = sum("rejected" in line for line in lines[:k])
    assert rejected <= 1
    if rejected:
        assert question.answer == kept + 1 < k + 1
        assert lines[kept].endswith("rejected: stop here.")
    else:
        assert question.answer == k + 1 == kept + 1
    assert lines[-1].endswith(f"= {question.answer_text}.")


@pytest.mark.parametrize("seed", range(10))
def test_expected_tokens_prompt_says_alpha_and_k(seed):
    question, text = _text("expected_tokens", seed)
    alpha = float(text.prompt.split("alpha = ")[1].split(",")[0])
    k = int(text.prompt.split("K = ")[1].split(" ")[0])
    assert (alpha, k) == (question.numbers["alpha"], question.numbers["k"])
    assert question.answer == pytest.approx(sum(alpha**i for i in range(k + 1)))


@pytest.mark.parametrize("seed", range(30))
def test_multi_draft_prompt_names_both_candidates(seed):
    question, text = _text("multi_draft", seed)
    labels = question.labels
    first = text.prompt.split("Candidate 1 (")[1].split(")")[0]
    second = text.prompt.split("candidate 2 (")[1].split(")")[0]
    assert (labels.index(first), labels.index(second)) == (
        question.numbers["first"],
        question.token,
    )


@pytest.mark.parametrize("seed", range(30))
def test_typical_prompt_gives_the_entropy(seed):
    question, text = _text("typical_acceptance", seed, v=6)
    p = np.array(question.p_target)
    h = float(text.prompt.split("H(p) = ")[1].split(" ")[0])
    assert h == pytest.approx(float(-(p * np.log(p)).sum()), abs=5e-4)


def test_a_rejected_draft_token_gets_no_resample_mass_in_words():
    for seed in range(200):
        question, text = _text("residual", seed)
        if question.numbers["leftover"][question.token] == 0:
            assert text.worked[-1].endswith("Tokens with p <= q get no resample mass.")
            assert question.answer == 0
            return
    raise AssertionError("no residual question about a token with p <= q in 200 seeds")
