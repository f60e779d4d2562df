"""Deliberately broken rules, each a bug of a named rule, for the labs' tests to catch.

A bug's run is held to the law of the rule it breaks (its tokens to p, its round
lengths to that rule's keep probabilities): :func:`specdec_core.simulate_rounds`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from .. import variants as vr
from ..montecarlo import RoundTables, correct_tables, rounds_chunk
from ..sampling import _overlap, _residual, acceptance_probability, sample_index
from ..variants_sim import candidates_chunk, multidraft_tables, strict_chunk, strict_tables
from .position import draw, geometric_tokens, keep_or_replace
from .published import correct_step, emitted_correct, expected_correct
from .registry import PositionStep, Rule, RuleKind, register_rule


def _emitted_keep(p_target, q_draft, keep, replacement) -> np.ndarray:
    """q * keep + (1 - sum q keep) * replacement: one draft, then the replacement (V,)."""
    kept = q_draft * keep  # (V,)
    return kept + (1.0 - kept.sum()) * replacement


# ----------------------------------------------------------------------------- resample from p
def resample_from_p_tables(p_rows, q_rows) -> RoundTables:
    """Broken rule: after a rejection at position i the token comes from p_i, not the residual."""
    return replace(correct_tables(p_rows, q_rows), final_rows=p_rows.copy())


def resample_from_p_step(p_target, q_draft, rng) -> PositionStep:
    """x ~ q kept with min(1, p/q); a rejection emits a sample of p (the bug)."""
    x = draw(q_draft, rng)
    return keep_or_replace(x, float(acceptance_probability(p_target[x], q_draft[x])), p_target, rng)


def emitted_resample_from_p(p_target, q_draft) -> np.ndarray:
    """min(p, q) + (1 - alpha) p: tokens q over-proposes come out too often."""
    return _emitted_keep(p_target, q_draft, acceptance_probability(p_target, q_draft), p_target)


# ----------------------------------------------------------------------------- accept if p >= q
def _lenient_keep(p_target, q_draft) -> np.ndarray:
    return (p_target >= q_draft).astype(np.float64)


def accept_if_p_ge_q_tables(p_rows, q_rows) -> RoundTables:
    """Broken rule: A_i(x) = 1 if p_i(x) >= q_i(x) else 0 (no coin decides)."""
    k = q_rows.shape[0]
    accept = _lenient_keep(p_rows[:k], q_rows)  # (K, V)
    return replace(
        correct_tables(p_rows, q_rows), accept=accept, keep_probabilities=(accept * q_rows).sum(1)
    )


def accept_if_p_ge_q_step(p_target, q_draft, rng) -> PositionStep:
    """x ~ q kept iff p(x) >= q(x) (the coin is drawn and ignored), else the residual."""
    x = draw(q_draft, rng)
    keep = float(p_target[x] >= q_draft[x])
    return keep_or_replace(x, keep, _residual(p_target, q_draft)[1], rng)


def emitted_accept_if_p_ge_q(p_target, q_draft) -> np.ndarray:
    """The lenient rule: q [p >= q] + (1 - sum q [p >= q]) norm(max(0, p - q)). NOT lossless."""
    keep = _lenient_keep(p_target, q_draft)
    return _emitted_keep(p_target, q_draft, keep, _residual(p_target, q_draft)[1])


def expected_accept_if_p_ge_q(p_target, q_draft, k: int) -> float:
    """E(r, K) with r = sum_x q(x) [p(x) >= q(x)]."""
    return geometric_tokens(float(q_draft @ _lenient_keep(p_target, q_draft)), k)


# ----------------------------------------------------------------------------- ratio, wrong q
def _greedy_keep(p_rows, q_rows) -> np.ndarray:
    """(K,) min(1, p_i(x*) / q_i(x*)) at the draft's argmax x* of each row."""
    best = np.argmax(q_rows, axis=-1)
    rows = np.arange(q_rows.shape[0])
    return acceptance_probability(p_rows[rows, best], q_rows[rows, best])


def ratio_with_wrong_q_tables(p_rows, q_rows) -> RoundTables:
    """The published tables; the draft is argmax q, so a position keeps it with
    min(1, p(x*) / q(x*))."""
    k = q_rows.shape[0]
    right = correct_tables(p_rows, q_rows)
    return replace(right, keep_probabilities=_greedy_keep(p_rows[:k], q_rows))


def ratio_with_wrong_q_step(p_target, q_draft, rng) -> PositionStep:
    """x = argmax q kept with min(1, p(x) / q(x)) (softmax q), else the residual."""
    x = int(np.argmax(q_draft))
    keep = float(acceptance_probability(p_target[x], q_draft[x]))
    return keep_or_replace(x, keep, _residual(p_target, q_draft)[1], rng)


def emitted_ratio_with_wrong_q(p_target, q_draft) -> np.ndarray:
    """a onehot(x*) + (1 - a) norm(max(0, p - q)), x* = argmax q, a = min(1, p(x*)/q(x*))."""
    x = int(np.argmax(q_draft))
    out = (1.0 - (a := float(acceptance_probability(p_target[x], q_draft[x])))) * _residual(
        p_target, q_draft
    )[1]
    out[x] += a
    return out


def expected_ratio_with_wrong_q(p_target, q_draft, k: int) -> float:
    """E(a, K), a = min(1, p(x*) / q(x*)) at x* = argmax q."""
    return geometric_tokens(float(_greedy_keep(p_target[None], q_draft[None])[0]), k)


# ----------------------------------------------------------------------------- no bonus
def expected_no_bonus(p_target, q_draft, k: int) -> float:
    """E(alpha, K) - alpha^K: a round that kept every draft is one token short."""
    alpha = float(_overlap(p_target, q_draft))
    return expected_correct(p_target, q_draft, k) - alpha**k


# ----------------------------------------------------------------------------- strict, fresh
def strict_fresh_step(p_target, q_draft, rng) -> PositionStep:
    """x ~ q, y ~ p; keep x iff x == y, else a NEW sample of p instead of y (the bug)."""
    step = vr.strict_step(p_target, q_draft, draw(q_draft, rng), rng=rng)
    if step.accepted:
        return PositionStep((step.token,), True, step.token, step)
    return PositionStep((step.token,), False, int(sample_index(p_target, rng.random())), step)


def emitted_strict_fresh(p_target, q_draft) -> np.ndarray:
    """p q + (1 - beta) p: NOT lossless unless q is flat on p's support."""
    return vr._strict_emitted(p_target, q_draft, fresh_after_mismatch=True)


# ----------------------------------------------------------------------------- no residual
def no_residual_step(p_target, q_draft, rng, n_candidates=2) -> PositionStep:
    """m candidates, each against the ORIGINAL p; all rejected: norm(max(0, p - q))."""
    candidates = vr.draft_candidates(q_draft, n_candidates, rng)
    for x in candidates:
        if rng.random() < float(acceptance_probability(p_target[x], q_draft[x])):
            return PositionStep(candidates, True, x)
    token = int(sample_index(_residual(p_target, q_draft)[1], rng.random()))
    return PositionStep(candidates, False, token)


def emitted_no_residual(p_target, q_draft, n_candidates=2) -> np.ndarray:
    """sum_{i<=m} (1 - alpha)^(i-1) min(p, q) + (1 - alpha)^m norm(max(0, p - q)): every
    candidate meets the ORIGINAL p, only the final sample uses the residual. NOT lossless."""
    m = vr.check_candidates(n_candidates)
    miss = 1.0 - float(_overlap(p_target, q_draft))
    reach = miss ** np.arange(m)  # (m,)
    return reach.sum() * np.minimum(p_target, q_draft) + miss**m * _residual(p_target, q_draft)[1]


def expected_no_residual(p_target, q_draft, k: int, n_candidates=2) -> float:
    """E(1 - (1 - alpha)^m, K): each candidate is kept with alpha against the original p."""
    m = vr.check_candidates(n_candidates)
    return geometric_tokens(1.0 - (1.0 - float(_overlap(p_target, q_draft))) ** m, k)


def _bug(name, breaks, **fields) -> None:
    register_rule(Rule(name=name, kind=RuleKind.BUG_OF, breaks=breaks, **fields))


_bug(
    "resample_from_p",
    "correct",
    step=resample_from_p_step,
    emitted=emitted_resample_from_p,
    tables=resample_from_p_tables,
    chunk=rounds_chunk,
    expected=expected_correct,
    source=resample_from_p_tables,
    labs=("losslessness",),
)
_bug(
    "accept_if_p_ge_q",
    "correct",
    step=accept_if_p_ge_q_step,
    emitted=emitted_accept_if_p_ge_q,
    tables=accept_if_p_ge_q_tables,
    chunk=rounds_chunk,
    expected=expected_accept_if_p_ge_q,
    source=accept_if_p_ge_q_tables,
    labs=("losslessness",),
)
_bug(
    "ratio_with_wrong_q",
    "correct",
    step=ratio_with_wrong_q_step,
    emitted=emitted_ratio_with_wrong_q,
    tables=ratio_with_wrong_q_tables,
    chunk=partial(rounds_chunk, greedy_draft=True),
    expected=expected_ratio_with_wrong_q,
    source=ratio_with_wrong_q_step,
    labs=("losslessness",),
)
_bug(
    "no_bonus",
    "correct",
    step=correct_step,
    emitted=emitted_correct,
    tables=correct_tables,
    chunk=partial(rounds_chunk, bonus=False),
    expected=expected_no_bonus,
    source=rounds_chunk,
    labs=("losslessness",),
    bonus=False,
    position_law_broken=False,
)
_bug(
    "strict_fresh_sample",
    "strict",
    step=strict_fresh_step,
    emitted=emitted_strict_fresh,
    tables=strict_tables,
    chunk=partial(strict_chunk, fresh_after_mismatch=True),
    expected=lambda p_target, q_draft, k: vr.strict_expected_tokens(p_target, q_draft, k),
    source=strict_fresh_step,
    keep_rule="strict",
)
_bug(
    "multi_draft_no_residual",
    "multi_draft",
    step=no_residual_step,
    emitted=emitted_no_residual,
    tables=partial(multidraft_tables, update_residual=False),
    chunk=candidates_chunk,
    expected=expected_no_residual,
    source=no_residual_step,
    options=("n_candidates",),
    law_options=("n_candidates",),
    labs=("variants",),
)
