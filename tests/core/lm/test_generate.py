"""The engine: greedy equality, losslessness at T = 1, bookkeeping, errors."""

from __future__ import annotations

import numpy as np
import pytest

import specdec_core.lm.generate as gen
import specdec_core.sampling as sampling
from specdec_core import InvalidParameterError, chi_square_test, verify_round
from specdec_core.lm import (
    ContextLengthError,
    PairUnavailableError,
    PromptError,
    autoregressive_generate,
    available_pairs,
    compare_pair,
    encode_prompt,
    load_pair,
    load_tokenizer,
    speculative_generate,
)
from specdec_core.lm.generate import probabilities, verify_block

TOK = load_tokenizer()
PROMPT = encode_prompt(TOK, "The for statement is used to")
SHIPPED = ["gpt-1L-to-gpt-4L", "trigram-to-gpt-4L", "bigram-to-5gram"]


def test_every_shipped_pair_is_available_and_loads():
    assert set(SHIPPED) <= set(available_pairs())
    for name in SHIPPED:
        draft, target = load_pair(name)
        assert draft.tokenizer is target.tokenizer


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_greedy_speculative_output_equals_the_targets_greedy_output(name, k):
    draft, target = load_pair(name)
    plain = autoregressive_generate(
        target, PROMPT, max_new_tokens=40, temperature=0.0, rng=np.random.default_rng(0)
    )
    spec = speculative_generate(
        draft, target, PROMPT, k=k, max_new_tokens=40, temperature=0.0, rng=np.random.default_rng(1)
    )
    assert spec.tokens == plain.tokens
    assert len(spec.tokens) == 40 == len(spec.kinds)
    # bookkeeping: every round checks up to its first rejection, then emits one more token
    assert spec.checked == spec.accepted + sum(r.final_kind == "resample" for r in spec.rounds)
    assert spec.drafted == k * spec.n_rounds
    calls_per_round = 1 if target.parallel_verify else k + 1
    assert spec.target_calls == calls_per_round * spec.n_rounds
    assert sum(len(r.emitted) for r in spec.rounds) >= 40
    # the untraced greedy path (argmax comparison, used for timing) decides the same way
    fast = speculative_generate(
        draft,
        target,
        PROMPT,
        k=k,
        max_new_tokens=40,
        temperature=0.0,
        rng=np.random.default_rng(2),
        trace=False,
    )
    assert fast.tokens == spec.tokens and fast.kinds == spec.kinds
    assert (fast.n_rounds, fast.checked, fast.accepted, fast.target_calls) == (
        spec.n_rounds,
        spec.checked,
        spec.accepted,
        spec.target_calls,
    )
    assert np.isclose(fast.expected_acceptance_rate, spec.expected_acceptance_rate)


def test_greedy_drafts_agree_often_with_the_gpt_target():
    draft, target = load_pair("trigram-to-gpt-4L")
    prompt = encode_prompt(TOK, ">>> import")
    spec = speculative_generate(
        draft, target, prompt, k=4, max_new_tokens=60, temperature=0.0, rng=np.random.default_rng(0)
    )
    assert spec.acceptance_rate > 0.3
    assert spec.tokens_per_round > 1.3


def _first_tokens(draft, target, n, seed, k=2, temperature=1.0):
    counts = np.zeros(TOK.vocab_size)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        res = speculative_generate(
            draft,
            target,
            PROMPT,
            k=k,
            max_new_tokens=1,
            temperature=temperature,
            rng=rng,
            trace=False,
        )
        counts[res.tokens[0]] += 1
    return counts


def _target_first_distribution(target, temperature=1.0):
    runner = target.fresh()
    return probabilities(runner.extend(PROMPT)[-1:], temperature)[0]


@pytest.mark.parametrize("name", ["gpt-1L-to-gpt-4L", "bigram-to-5gram"])
def test_first_token_at_temperature_1_follows_the_target(name):
    draft, target = load_pair(name)
    fit = chi_square_test(
        _first_tokens(draft, target, 1500, seed=11), _target_first_distribution(target)
    )
    assert fit.p_value > 1e-3


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_first_token_follows_the_temperature_adjusted_target(temperature):
    draft, target = load_pair("bigram-to-5gram")
    counts = _first_tokens(draft, target, 1500, seed=12, k=1, temperature=temperature)
    fit = chi_square_test(counts, _target_first_distribution(target, temperature))
    assert fit.p_value > 1e-3
    # and not the plain (T = 1) target distribution: the test can tell them apart
    assert chi_square_test(counts, _target_first_distribution(target, 1.0)).p_value < 1e-6


def test_the_classic_bug_raw_q_in_the_ratio_fails_the_same_test(monkeypatch):
    """Drafting from softmax(z / T) but putting the raw softmax(z) of the draft in p/q."""
    draft, target = load_pair("bigram-to-5gram")
    honest, temperature = gen.verify_block, 2.0

    def raw_q_ratio(p_rows, q_rows, drafts, rng):
        raw = q_rows**temperature  # softmax(z) from softmax(z / T), up to normalisation
        return honest(p_rows, raw / raw.sum(axis=1, keepdims=True), drafts, rng)

    monkeypatch.setattr(gen, "verify_block", raw_q_ratio)
    counts = _first_tokens(draft, target, 1500, seed=12, k=1, temperature=temperature)
    assert chi_square_test(counts, _target_first_distribution(target, temperature)).p_value < 1e-6


def test_a_broken_sampler_that_keeps_every_draft_fails_the_same_test(monkeypatch):
    draft, target = load_pair("bigram-to-5gram")
    monkeypatch.setattr(sampling, "acceptance_probability", lambda p_x, q_x: np.ones_like(p_x))
    fit = chi_square_test(
        _first_tokens(draft, target, 1500, seed=11), _target_first_distribution(target)
    )
    assert fit.p_value < 1e-6


def test_verify_block_makes_the_same_decisions_as_the_cores_verify_round():
    rng = np.random.default_rng(3)
    for trial in range(200):
        k, v, t = int(rng.integers(1, 6)), 9, [0.0, 0.7, 1.0][trial % 3]
        lp = rng.normal(size=(k + 1, v)) * 2
        p, q = probabilities(lp, t), probabilities(lp[:k] + rng.normal(size=(k, v)), t)
        drafts = [int(np.argmax(q[i])) if t == 0 else int(rng.choice(v, p=q[i])) for i in range(k)]
        a = verify_block(p, q, drafts, np.random.default_rng(trial))
        b = verify_round(p, q, drafts, rng=np.random.default_rng(trial))
        assert a.emitted_tokens == b.emitted_tokens and a.final_kind == b.final_kind
        assert [s.accepted for s in a.steps] == [s.accepted for s in b.steps]
        assert [s.coin for s in a.steps] == [s.coin for s in b.steps]


def test_temperature_zero_is_argmax_without_division():
    rows = probabilities(np.array([[1.0, 3.0, 3.0, -2.0]]), 0.0)
    assert rows.tolist() == [[0.0, 1.0, 0.0, 0.0]]
    hot = probabilities(np.array([[0.0, np.log(3.0)]]), 1.0)
    assert np.allclose(hot, [[0.25, 0.75]])
    cool = probabilities(np.array([[0.0, np.log(3.0)]]), 0.5)
    assert np.allclose(cool, [[0.1, 0.9]])


def test_trace_records_each_round():
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    spec = speculative_generate(
        draft, target, PROMPT, k=3, max_new_tokens=30, temperature=1.0, rng=np.random.default_rng(5)
    )
    for rnd in spec.rounds:
        assert len(rnd.positions) == 4  # K drafts + the bonus position
        statuses = [p.status for p in rnd.positions[:-1]]
        assert statuses[: rnd.n_accepted] == ["accepted"] * rnd.n_accepted
        if rnd.final_kind == "resample":
            assert statuses[rnd.n_accepted] == "rejected"
            assert set(statuses[rnd.n_accepted + 1 :]) <= {"discarded"}
        for p in rnd.positions[: rnd.n_accepted + (rnd.final_kind == "resample")]:
            assert (p.coin < p.acceptance_probability) == (p.status == "accepted")
            assert np.isclose(p.acceptance_probability, min(1.0, p.p_x / p.q_x))
        assert rnd.final_token in [t for t, _ in rnd.final_top]
        assert spec.tokens[rnd.start : rnd.start + len(rnd.emitted)] == tuple(
            rnd.emitted[: len(spec.tokens) - rnd.start]
        )


def test_same_seed_same_tokens_and_compare_pair_reports_consistent_numbers():
    draft, target = load_pair("trigram-to-gpt-4L")
    run = compare_pair(
        draft, target, PROMPT, k=2, max_new_tokens=30, temperature=0.0, seed=4, repeats=1
    )
    assert run.identical
    assert run.plain.target_calls == 30
    assert run.target_calls_saved == 30 - run.spec.target_calls > 0
    assert run.cost.v > 0 and run.cost.c >= 0 and run.cost.measured_speedup > 0
    assert run.cost.seed_prediction >= run.cost.corrected_prediction or run.cost.v < 1


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"prompt_ids": []}, PromptError, "empty"),
        ({"max_new_tokens": 250}, ContextLengthError, "ask for at most"),
        ({"prompt_ids": list(range(300))}, ContextLengthError, "shorten the prompt"),
        ({"temperature": -0.1}, InvalidParameterError, "temperature"),
        ({"temperature": float("nan")}, InvalidParameterError, "temperature"),
        ({"k": 0}, InvalidParameterError, "K"),
        ({"max_new_tokens": 0}, InvalidParameterError, "max_new_tokens"),
        ({"prompt_ids": [5, 600]}, PromptError, "600"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, error, fragment):
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    args = {"prompt_ids": PROMPT, "k": 4, "max_new_tokens": 20, "temperature": 1.0} | kwargs
    with pytest.raises(error, match=fragment):
        speculative_generate(
            draft, target, args.pop("prompt_ids"), rng=np.random.default_rng(0), **args
        )


def test_unknown_pair_is_a_clear_error():
    with pytest.raises(PairUnavailableError, match="available"):
        load_pair("gpt-5")


def test_cost_model_on_hand_made_timings():
    from specdec_core.lm import GenerationResult, cost_model

    spec = GenerationResult(
        (1,),
        [0] * 25,
        ["accepted"] * 25,
        k=2,
        temperature=0.0,
        n_rounds=10,
        drafted=20,
        checked=20,
        accepted=10,
        target_calls=10,
        draft_calls=20,
        time_draft=0.2,
        time_verify=1.2,
        time_total=1.6,
    )
    plain = GenerationResult(
        (1,),
        [0] * 25,
        ["target"] * 25,
        k=0,
        temperature=0.0,
        target_calls=25,
        time_verify=2.5,
        time_total=2.5,
    )
    m = cost_model(spec, plain)
    assert np.isclose(m.target_step, 0.1) and np.isclose(m.c, 0.1) and np.isclose(m.v, 1.2)
    assert np.isclose(m.alpha, 0.5) and np.isclose(m.expected_tokens, 1.75)
    assert np.isclose(m.seed_prediction, 1.75 / 1.2)  # E / (K c + 1)
    assert np.isclose(m.corrected_prediction, 1.75 / 1.4)  # E / (K c + v)
    assert np.isclose(m.measured_speedup, 2.5 / 1.6)
    assert np.isclose(m.error, (1.75 / 1.4) / (2.5 / 1.6) - 1)


def test_the_engines_sampler_draws_the_same_token_as_the_cores_sample_index():
    from specdec_core.sampling import sample_index

    rows = np.random.default_rng(7).dirichlet(np.full(16, 0.3), size=50)  # (50, 16)
    rows[:, ::3] = 0.0  # tokens of probability 0 must never be drawn
    rows /= rows.sum(axis=1, keepdims=True)
    for seed, row in enumerate(rows):
        x = gen._sample(row, 1.0, np.random.default_rng(seed))
        u = np.random.default_rng(seed).random()
        assert x == int(sample_index(row, u)) and row[x] > 0
    assert gen._sample(np.array([0.0, 0.0, 1.0]), 1.0, np.random.default_rng(0)) == 2
