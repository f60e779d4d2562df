"""The greedy rule (T = 0): decide_round on one-hot rows, and its closed form.

The engine's untraced T = 0 rounds use :func:`greedy_match` (no V-wide rows); these tests
prove it equal to :func:`greedy_decide` (the acceptance rule itself) on every pattern of
matches up to K = 8, and that the rule's uniforms decide nothing at T = 0.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from specdec_core.greedy import greedy_decide, greedy_match, one_hot_rows
from specdec_core.sampling import decide_round

V = 16


def _round(pattern: tuple[bool, ...], rng: np.random.Generator):
    """Target argmax b_1..b_{K+1} and drafts that match b_i where ``pattern`` says."""
    best = [int(b) for b in rng.integers(0, V, len(pattern) + 1)]
    other = [(b + 1 + int(rng.integers(0, V - 1))) % V for b in best]  # never b itself
    drafts = [b if same else o for b, o, same in zip(best, other, pattern, strict=False)]
    return best, drafts


@pytest.mark.parametrize("k", range(0, 9))
def test_the_closed_form_equals_the_rule_on_every_pattern_of_matches(k):
    rng = np.random.default_rng(k)
    for pattern in itertools.product((True, False), repeat=k):
        best, drafts = _round(pattern, rng)
        rr = greedy_decide(best, drafts, V, np.random.default_rng(0))
        n, emitted = greedy_match(best, drafts)
        assert (n, emitted) == (rr.n_accepted, rr.emitted_tokens)
        first_miss = pattern.index(False) if False in pattern else k
        assert n == first_miss and emitted[-1] == best[n]
        assert rr.final_kind == ("resample" if n < k else "bonus")


def test_the_rule_is_decide_round_on_one_hot_rows_and_its_coins_decide_nothing():
    best, drafts = [3, 5, 7, 9], [3, 5, 8]
    rr = greedy_decide(best, drafts, V, np.random.default_rng(1))
    same = decide_round(
        one_hot_rows(best, V), one_hot_rows(drafts, V), (3, 5, 8), rng=np.random.default_rng(1)
    )
    assert rr.emitted_tokens == same.emitted_tokens == (3, 5, 7)
    assert [s.coin for s in rr.steps] == [s.coin for s in same.steps]
    for seed in range(20):  # any uniforms: the same decisions
        assert greedy_decide(best, drafts, V, np.random.default_rng(seed)).emitted_tokens == (
            3,
            5,
            7,
        )
    assert [s.acceptance_probability for s in rr.steps] == [1.0, 1.0, 0.0]
