"""The self-test generator: valid p/q, answers and worked numbers that match the engine,
checking typed answers. (The questions' words: tests/ui/test_quiz_words.py.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core import quiz

KINDS = list(quiz.QUESTION_KINDS)


@given(seed=st.integers(0, 2**32 - 1), v=st.integers(quiz.MIN_VOCAB, quiz.MAX_VOCAB_QUIZ))
@settings(max_examples=200, deadline=None)
def test_random_pair_is_two_different_distributions_in_hundredths(seed, v):
    p, q = quiz.random_pair(np.random.default_rng(seed), v)
    for x in (p, q):
        assert x.shape == (v,)
        assert x.sum() == pytest.approx(1.0, abs=1e-12)
        assert x.min() >= 0.01 - 1e-12  # every token possible: q(x) > 0 for every draft
        np.testing.assert_allclose(x * 100, np.rint(x * 100), atol=1e-9)
    assert not np.allclose(p, q)
    assert 0.0 < sc.acceptance_rate(p, q) < 1.0


def test_random_pair_gives_a_spread_of_alphas():
    alphas = [
        sc.acceptance_rate(*quiz.random_pair(np.random.default_rng(s), 5)) for s in range(200)
    ]
    assert min(alphas) >= 0.55
    assert np.percentile(alphas, 10) < 0.7 < np.percentile(alphas, 90)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_question_and_different_seeds_differ(kind):
    a = quiz.make_question(kind, np.random.default_rng(7))
    b = quiz.make_question(kind, np.random.default_rng(7))
    assert a == b
    questions = [quiz.make_question(kind, np.random.default_rng(s)) for s in range(10)]
    assert len({(q.answer, q.p_target, q.q_draft, q.token) for q in questions}) >= 8


@pytest.mark.parametrize("seed", range(25))
def test_acceptance_answer_is_min_one_ratio(seed):
    question = quiz.make_question("acceptance", np.random.default_rng(seed))
    x = question.token
    p_x, q_x = question.p_target[x], question.q_draft[x]
    assert question.answer == pytest.approx(min(1.0, p_x / q_x))
    assert question.numbers["ratio"] == pytest.approx(p_x / q_x)


@pytest.mark.parametrize("seed", range(25))
def test_alpha_answer_is_overlap(seed):
    question = quiz.make_question("alpha", np.random.default_rng(seed), v=6)
    overlap = np.minimum(question.p_target, question.q_draft)
    assert question.answer == pytest.approx(overlap.sum())
    np.testing.assert_allclose(question.numbers["overlap"], overlap)
    assert len(question.labels) == 6


@pytest.mark.parametrize("seed", range(25))
def test_residual_answer_is_normalised_leftover(seed):
    question = quiz.make_question("residual", np.random.default_rng(seed))
    p, q = np.array(question.p_target), np.array(question.q_draft)
    leftover = np.maximum(0.0, p - q)
    assert question.answer == pytest.approx(leftover[question.token] / leftover.sum())
    assert question.numbers["z"] == pytest.approx(leftover.sum())


@pytest.mark.parametrize("seed", range(40))
def test_tokens_out_follows_the_coins(seed):
    """Recount the round by hand from the drafts, their keep chances and the coins."""
    question = quiz.make_question("tokens_out", np.random.default_rng(seed))
    assert question.integer
    n = question.numbers
    k, p, q = n["k"], question.p_target, question.q_draft
    assert len(n["drafts"]) == len(n["coins"]) == len(n["chances"]) == k
    kept = 0
    for x, u, a in zip(n["drafts"], n["coins"], n["chances"], strict=True):
        assert a == pytest.approx(min(1.0, p[x] / q[x]))
        if u >= a:
            break
        kept += 1
    assert n["kept"] == (True,) * kept + ((False,) if kept < k else ())
    if kept < k:
        assert question.answer == kept + 1 < k + 1 and n["final_kind"] == "resample"
    else:
        assert question.answer == k + 1 == kept + 1 and n["final_kind"] == "bonus"
    assert n["n_accepted"] == kept and 1 <= question.answer <= k + 1


def test_tokens_out_covers_early_stops_and_bonus():
    answers = {}
    for s in range(200):
        question = quiz.make_question("tokens_out", np.random.default_rng(s))
        k = question.numbers["k"]
        answers.setdefault("bonus" if question.answer == k + 1 else "early", 0)
        answers["bonus" if question.answer == k + 1 else "early"] += 1
    assert answers["bonus"] >= 20 and answers["early"] >= 20


@pytest.mark.parametrize("seed", range(10))
def test_expected_tokens_answer(seed):
    question = quiz.make_question("expected_tokens", np.random.default_rng(seed))
    alpha, k = question.numbers["alpha"], question.numbers["k"]
    assert question.answer == pytest.approx(sum(alpha**i for i in range(k + 1)))
    assert question.numbers["numerator"] == pytest.approx(1 - alpha ** (k + 1))


def test_check_answer_accepts_decimals_fractions_and_percentages():
    question = quiz.make_question("acceptance", np.random.default_rng(3))
    exact = question.answer
    assert quiz.check_answer(question, f"{exact:.2f}")
    assert quiz.check_answer(question, f"{100 * exact:.1f}%")
    assert not quiz.check_answer(question, f"{exact + 0.02:.3f}")
    half = quiz.QuizQuestion("alpha", 0.5, ("A", "B"), (0.5, 0.5), (1.0, 0.0))
    assert quiz.check_answer(half, "1/2")
    assert quiz.check_answer(half, " 0.505 ")
    assert not quiz.check_answer(half, "0.51")


def test_check_answer_whole_numbers_need_the_exact_count():
    question = quiz.make_question("tokens_out", np.random.default_rng(0))
    n = int(question.answer)
    assert quiz.check_answer(question, str(n))
    assert not quiz.check_answer(question, str(n + 1))
    assert not quiz.check_answer(question, f"{n}.004")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("abc", "not a number"),
        ("1/0", "divides by zero"),
        ("nan", "not a finite number"),
        ("9" * 50, "at most 40"),
    ],
)
def test_check_answer_rejects_non_numbers_with_a_message(text, fragment):
    question = quiz.make_question("alpha", np.random.default_rng(0))
    with pytest.raises(sc.InvalidParameterError, match=fragment):
        quiz.check_answer(question, text)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: quiz.make_question("nope", np.random.default_rng(0)), "unknown"),
        (lambda: quiz.make_question("alpha", 42), "Generator"),
        (lambda: quiz.make_question("alpha", np.random.default_rng(0), v=1), "out of range"),
        (lambda: quiz.make_question("alpha", np.random.default_rng(0), v=9), "out of range"),
        (lambda: quiz.make_question("alpha", np.random.default_rng(0), v=True), "whole number"),
        (lambda: quiz.random_hundredths(np.random.default_rng(0), 2.5), "whole number"),
    ],
)
def test_bad_arguments_raise_named_errors(call, fragment):
    with pytest.raises(sc.InvalidParameterError, match=fragment):
        call()


def test_seed_choices_match_the_seed_self_test():
    assert len(quiz.SEED_CHOICES) == len(sc.SELF_TEST)
    for (_, answer), (options, right) in zip(sc.SELF_TEST, quiz.SEED_CHOICES, strict=True):
        assert len(set(options)) == len(options) >= 3
        assert 0 <= right < len(options)
        if right != 0:  # the seed's own answer names the right option ("0" is too short)
            key = options[right].removeprefix("It tends to ").split(",")[0]
            assert key in answer
    assert quiz.SEED_CHOICES[0][0][quiz.SEED_CHOICES[0][1]] == "1"  # min(1, 0.3/0.2) = 1
    assert quiz.SEED_CHOICES[1][0][quiz.SEED_CHOICES[1][1]] == "K + 1"
    assert quiz.SEED_CHOICES[2][0][quiz.SEED_CHOICES[2][1]] == "0"


# --- one question per variant (issue 11) ------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_multi_draft_answer_uses_the_residual(seed):
    question = quiz.make_question("multi_draft", np.random.default_rng(seed))
    p, q = np.array(question.p_target), np.array(question.q_draft)
    x1, x2 = question.numbers["first"], question.token
    assert q[x1] > p[x1]  # candidate 1 could really be rejected
    p2 = np.maximum(0, p - q) / np.maximum(0, p - q).sum()
    assert question.answer == pytest.approx(min(1.0, p2[x2] / q[x2]))
    np.testing.assert_allclose(question.numbers["p2"], p2)


@pytest.mark.parametrize("seed", range(20))
def test_tree_answer_is_one_plus_beta_plus_beta_alpha(seed):
    question = quiz.make_question("tree", np.random.default_rng(seed), v=5)
    p, q = np.array(question.p_target), np.array(question.q_draft)
    a1 = np.minimum(p, q).sum()
    p2 = np.maximum(0, p - q) / np.maximum(0, p - q).sum()
    beta = 1 - (1 - a1) * (1 - np.minimum(p2, q).sum())
    assert question.answer == pytest.approx(1 + beta + beta * a1)
    assert question.numbers["beta"] == pytest.approx(beta)
    assert question.numbers["alpha_1"] == pytest.approx(a1)


@pytest.mark.parametrize("seed", range(20))
def test_deterministic_answer_is_p_without_the_draft(seed):
    question = quiz.make_question("deterministic", np.random.default_rng(seed))
    p, q = np.array(question.p_target), np.array(question.q_draft)
    assert q.max() == 1.0 and q.sum() == 1.0  # the one-hot draft is what the page shows
    x, y = int(np.argmax(q)), question.token
    assert x != y and x == question.numbers["drafted"]
    assert question.answer == pytest.approx(p[y] / (1 - p[x]))


@pytest.mark.parametrize("seed", range(30))
def test_typical_answer_sums_q_over_tokens_above_the_threshold(seed):
    question = quiz.make_question("typical_acceptance", np.random.default_rng(seed), v=6)
    p, q = np.array(question.p_target), np.array(question.q_draft)
    exact_h = float(-(p * np.log(p)).sum())
    assert question.numbers["entropy"] == pytest.approx(exact_h)
    tau = min(0.09, 0.3 * np.exp(-exact_h))
    assert question.numbers["tau"] == pytest.approx(tau)
    assert question.numbers["passes"] == tuple(np.flatnonzero(p > tau))
    assert question.answer == pytest.approx(q[p > tau].sum())
