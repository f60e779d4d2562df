"""The issue-12 pairs (prompt lookup, distilled drafts): greedy equality, losslessness at
T = 1 with a broken sampler that must fail, lookup rounds without drafts, checksums."""

from __future__ import annotations

import numpy as np
import pytest

import specdec_core.lm.generate as gen
from specdec_core import chi_square_test
from specdec_core.lm import (
    PairUnavailableError,
    autoregressive_generate,
    available_pairs,
    encode_prompt,
    load_pair,
    load_tokenizer,
    speculative_generate,
)
from specdec_core.lm import pairs as pairs_module
from specdec_core.lm.generate import probabilities

TOK = load_tokenizer()
NEW = [
    "lookup-to-gpt-4L",
    "gpt-1L-aligned-to-gpt-4L",
    "trigram-aligned-to-gpt-4L",
    "lookup-table-to-gpt-4L",
]
# repeats itself, so prompt lookup has something to propose from the first round on
PROMPT = encode_prompt(TOK, "the list and the list and the")


def test_every_new_pair_is_listed():  # their words: tests/ui/test_model_pair_words.py
    assert set(NEW) <= set(available_pairs())
    for name in NEW:
        assert pairs_module.pair_info(name).name == name


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_greedy_output_equals_the_targets_greedy_output(name, k):
    draft, target = load_pair(name)
    prompt = encode_prompt(TOK, "The for statement is used to")
    plain = autoregressive_generate(
        target, prompt, max_new_tokens=60, temperature=0.0, rng=np.random.default_rng(0)
    )
    for trace in (True, False):  # the traced rule and the argmax fast path
        spec = speculative_generate(
            draft,
            target,
            prompt,
            k=k,
            max_new_tokens=60,
            temperature=0.0,
            rng=np.random.default_rng(1),
            trace=trace,
        )
        assert spec.tokens == plain.tokens
        assert len(spec.kinds) == 60
        assert spec.drafted == sum(spec.draft_sizes) and max(spec.draft_sizes) <= k
        if trace:  # every round checks up to its first rejection
            rejections = sum(r.final_kind == "resample" for r in spec.rounds)
            assert spec.checked == spec.accepted + rejections


def test_prompt_lookup_rounds_without_a_match_are_plain_steps():
    draft, target = load_pair("lookup-to-gpt-4L")
    prompt = encode_prompt(TOK, "How do I read a file line by line in Python?")
    spec = speculative_generate(
        draft, target, prompt, k=3, max_new_tokens=80, temperature=1.0, rng=np.random.default_rng(2)
    )
    empty = [r for r in spec.rounds if len(r.positions) == 1]  # only the bonus position
    assert spec.empty_rounds == len(empty) == spec.draft_sizes.count(0) > 0
    assert all(len(r.emitted) == 1 and r.final_kind == "plain" for r in empty)
    # a plain step is its own kind of token and round, never counted as a bonus
    starts = [r.start for r in empty if r.start < len(spec.kinds)]
    assert {spec.kinds[i] for i in starts} == {"plain"}
    assert spec.kinds.count("plain") == len(starts)
    assert spec.plain_rounds == len(empty)
    assert spec.bonus_rounds == sum(r.final_kind == "bonus" for r in spec.rounds)
    assert spec.resample_rounds == sum(r.final_kind == "resample" for r in spec.rounds)
    assert spec.plain_rounds + spec.bonus_rounds + spec.resample_rounds == spec.n_rounds
    assert spec.accepted_sizes == tuple(r.n_accepted for r in spec.rounds)
    assert spec.n_rounds > spec.empty_rounds  # and some rounds did find a match
    assert spec.draft_calls == spec.n_rounds  # one lookup a round, whatever it proposed


def _first_tokens(draft, target, n, seed, k=3):
    counts = np.zeros(TOK.vocab_size)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        res = speculative_generate(
            draft, target, PROMPT, k=k, max_new_tokens=1, temperature=1.0, rng=rng, trace=False
        )
        counts[res.tokens[0]] += 1
    return counts


def _target_first(target):
    return probabilities(target.fresh().extend(PROMPT)[-1:], 1.0)[0]


def _verify_against_the_draft(monkeypatch):
    """Broken sampler: checks the drafts against q instead of p (so it keeps them all)."""
    honest = gen.verify_block

    def broken(p_rows, q_rows, drafts, rng):
        return honest(np.vstack([q_rows, p_rows[-1:]]), q_rows, drafts, rng)

    monkeypatch.setattr(gen, "verify_block", broken)


@pytest.mark.parametrize("name", NEW)
def test_first_token_at_temperature_1_follows_the_target(name):
    draft, target = load_pair(name)
    fit = chi_square_test(_first_tokens(draft, target, 1500, seed=21), _target_first(target))
    assert fit.p_value > 1e-3


@pytest.mark.parametrize("name", NEW)
def test_a_sampler_that_verifies_against_the_draft_fails_the_same_test(name, monkeypatch):
    draft, target = load_pair(name)
    _verify_against_the_draft(monkeypatch)
    fit = chi_square_test(_first_tokens(draft, target, 1500, seed=21), _target_first(target))
    assert fit.p_value < 1e-6


def test_a_damaged_asset_is_refused_by_its_checksum(monkeypatch):
    assert all(len(h) == 64 for h in pairs_module.SHA256.values())
    pairs_module.checked_asset("gpt_draft_aligned.npz")  # the shipped file passes
    monkeypatch.setitem(pairs_module.SHA256, "gpt_draft_aligned.npz", "0" * 64)
    with pytest.raises(PairUnavailableError, match="checksum"):
        pairs_module.checked_asset("gpt_draft_aligned.npz")
