"""Variants of speculative decoding at one position: multi-draft, one-hot drafts, typical.

Notation of the seeds: p = TARGET distribution, q = DRAFT distribution, x a
drafted token, alpha = sum_x min(p(x), q(x)).

- Multi-draft verification (SpecInfer's multi-step speculative sampling,
  Miao et al., ASPLOS 2024, arXiv 2305.09781): m candidates x_1..x_m for one
  position, tried in order; candidate i is kept with probability
  min(1, p_i(x_i) / q_i(x_i)), p_1 = p, and after a rejection the target
  shrinks to its residual p_{i+1} = norm(max(0, p_i - q_i)). If all m are
  rejected, a sample of p_{m+1} is emitted. Lossless: each step is ordinary
  rejection sampling of p_i with proposal q_i.
- Deterministic (one-hot) drafts (prompt lookup, n-gram and greedy drafts):
  with q one-hot on x the rule reduces to "keep x with probability p(x),
  otherwise sample p with x removed", which is the same law as "sample
  y ~ p, keep x iff y == x" (Hugging Face transformers' rule for candidates
  without probabilities).
- Typical acceptance (Medusa, Cai et al., ICML 2024, arXiv 2401.10774; code
  FasterDecoding/Medusa ``medusa/model/utils.py`` ``evaluate_posterior``):
  keep x iff p(x) > min(epsilon, delta * exp(-H(p))). Not lossless.
- Strict verification (vLLM ``rejection_sample_method = "strict"``, mlx-lm's
  exact match): the target samples y ~ p itself and keeps the draft x ~ q iff
  x = y; at the first mismatch it emits y. Lossless, but a draft is kept with
  beta = sum_x p(x) q(x) <= alpha.
- Greedy verification (T = 0): keep x iff x = argmax p.

Everything is numpy; randomness comes from an explicit ``np.random.Generator``
or from given uniforms (coins), like :func:`specdec_core.verify_round`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from .distributions import as_float_array, check_k, validate_distribution, validate_pair
from .errors import InvalidDistributionError, InvalidParameterError, mismatch_message
from .sampling import (
    RESIDUAL_TOLERANCE,
    _check_drafted,
    _check_final_token,
    _overlap,
    _residual,
    _token_id,
    acceptance_probability,
    check_coins,
    sample_index,
    take_coin,
)
from .theory import expected_tokens

MAX_CANDIDATES = 16  # candidates at one position (the page offers 1..8)
MAX_CANDIDATES_THEORY = 64  # largest m for multidraft_acceptance
MEDUSA_EPSILON = 0.09  # Medusa's posterior_threshold default (medusa_generate)
MEDUSA_DELTA = 0.3  # Medusa's posterior_alpha default, "recommended sqrt(posterior_threshold)"
# What typical acceptance emits after the kept prefix: "argmax" is Medusa's default
# (fast=True), argmax p; "truncated_sample" is Medusa with fast=False, a sample of p
# restricted to the tokens whose probability reaches the threshold.
AfterRejection = Literal["argmax", "truncated_sample"]
AFTER_REJECTION: tuple[AfterRejection, ...] = get_args(AfterRejection)

# Each public function below checks its arguments once, then calls private helpers
# (``_name``) that trust them, as sampling.validate_round checks and decide_round decides.


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def check_candidates(m: object, *, m_max: int = MAX_CANDIDATES) -> int:
    """Validate a number of candidates m: a whole number in [1, ``m_max``]."""
    return check_k(m, k_max=m_max, name="number of candidates m")


def _draft_rows_for(q, m: int) -> np.ndarray:
    """q as (V,) shared by every candidate, or one row per candidate -> (m, V)."""
    q_arr = as_float_array(q, "q: not a table of numbers")
    if q_arr.ndim == 1:
        return np.tile(validate_distribution(q_arr, "q"), (m, 1))
    if q_arr.ndim != 2 or q_arr.shape[0] != m:
        raise InvalidDistributionError(
            f"q must be one distribution (V,) or one row per candidate ({m}, V); "
            f"got shape {q_arr.shape}."
        )
    return np.stack(
        [validate_distribution(r, f"q of candidate {i + 1}") for i, r in enumerate(q_arr)]
    )


def _same_size(p_target: np.ndarray, q_rows: np.ndarray) -> None:
    if q_rows.shape[-1] != p_target.size:
        raise InvalidDistributionError(mismatch_message(p_target.size, q_rows.shape[-1]))


def _one_coin(uniform: float | None) -> tuple[float, ...]:
    """The single coin of a one-token step, checked like a round's coins (None: none given)."""
    return check_coins(None if uniform is None else [uniform], 1, count="tokens", per="token")


def _final(dist: np.ndarray, final_token, rng, what: str) -> tuple[int, float | None]:
    """Sample ``dist`` (or check a given token): returns (token, uniform or None)."""
    if final_token is None:
        u = take_coin((), 0, rng, what)
        return int(sample_index(dist, u)), u
    token = _token_id(final_token, dist.size, "final token")
    _check_final_token(dist, token, what)
    return token, None


# ---------------------------------------------------------------------------
# Multi-draft verification (SpecInfer)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidateStep:
    """The decision on candidate i (0-based ``index``) against the current target p_i.

    Kept apart from :class:`specdec_core.sampling.RoundStep` although the
    fields look alike: a RoundStep is one POSITION of a round, checked against
    that position's fixed p, and a rejection ends the round; a CandidateStep
    is one of m candidates for the SAME position, checked against the residual
    p_i left by the earlier rejections, and a rejection moves on to candidate
    i + 1. Mixing them up in a display would be exactly the bug this lab shows.
    """

    index: int
    token: int
    p_x: float  # p_i(x_i): the CURRENT target (residual after earlier rejections)
    q_x: float  # q_i(x_i)
    ratio: float  # p_x / q_x
    acceptance_probability: float  # min(1, ratio)
    coin: float  # u_i ~ U[0, 1)
    accepted: bool  # coin < acceptance_probability


@dataclass(frozen=True, eq=False)
class MultiDraftResult:
    """One position verified with m candidates (compare fields, not results)."""

    candidates: tuple[int, ...]  # (m,)
    q_rows: np.ndarray  # (m, V) draft distribution of each candidate
    targets: tuple[np.ndarray, ...]  # p_1 = p, p_2, ...: the target each tried candidate met,
    #                                  plus p_{m+1} when all m were rejected
    steps: tuple[CandidateStep, ...]  # candidates tried, up to the kept one
    kept_index: int | None  # 0-based index of the kept candidate, None if all were rejected
    emitted_token: int
    final_coin: float | None  # uniform that sampled p_{m+1} (None if kept or given)

    @property
    def final_distribution(self) -> np.ndarray | None:
        """(V,) p_{m+1}, the last residual that was sampled, or None if a candidate was kept."""
        return self.targets[-1] if self.kept_index is None else None


def _check_step_inputs(p, q, candidates):
    p_target = validate_distribution(p, "p")  # (V,)
    tokens = tuple(np.asarray(candidates).reshape(-1).tolist())
    m = check_candidates(len(tokens))
    q_rows = _draft_rows_for(q, m)  # (m, V)
    _same_size(p_target, q_rows)
    for i, x in enumerate(tokens):
        _token_id(x, p_target.size, f"candidate {i + 1}")
        _check_drafted(q_rows[i, x], f"candidate {i + 1} (id {x})")
    return p_target, q_rows, tuple(int(x) for x in tokens)


def _candidate_step(i: int, x: int, p_i: np.ndarray, q_x: float, u: float) -> CandidateStep:
    """Candidate i (token x) against the current target p_i: keep iff u < min(1, p_i(x)/q(x))."""
    a = float(acceptance_probability(p_i[x], q_x))
    return CandidateStep(
        index=i,
        token=x,
        p_x=float(p_i[x]),
        q_x=q_x,
        ratio=float(p_i[x]) / q_x,
        acceptance_probability=a,
        coin=u,
        accepted=u < a,
    )


def multidraft_step(
    p,
    q,
    candidates,
    *,
    uniforms: Sequence[float] | None = None,
    final_token: int | None = None,
    rng: np.random.Generator | None = None,
) -> MultiDraftResult:
    """Verify m candidates for ONE position: SpecInfer's multi-step speculative sampling.

    p: (V,) target; q: (V,) shared draft or (m, V) one row per candidate;
    candidates: (m,) ids with q_i(x_i) > 0. For i = 1..m: keep x_i iff
    u_i < min(1, p_i(x_i) / q_i(x_i)); else p_{i+1} = norm(max(0, p_i - q_i)).
    All rejected: emit a sample of p_{m+1}. (Miao et al. 2024, Algorithm 2.)
    ``uniforms`` (up to m coins) and ``final_token`` replay a given step; the
    rest is drawn from ``rng``. With m = 1 this is one position of
    :func:`specdec_core.verify_round`.
    """
    p_target, q_rows, tokens = _check_step_inputs(p, q, candidates)
    coins = check_coins(uniforms, len(tokens), count="m", per="candidate")
    targets, steps = [p_target], []
    for i, x in enumerate(tokens):
        u = take_coin(coins, i, rng, f"the coin for candidate {i + 1}")
        steps.append(_candidate_step(i, x, targets[-1], float(q_rows[i, x]), u))
        if steps[-1].accepted:
            break
        targets.append(_residual(targets[-1], q_rows[i])[1])
    kept = len(steps) - 1 if steps[-1].accepted else None
    if kept is None:
        token, u_final = _final(targets[-1], final_token, rng, "the last residual p_(m+1)")
    else:
        token, u_final = tokens[kept], None
    return MultiDraftResult(
        candidates=tokens,
        q_rows=q_rows,
        targets=tuple(targets),
        steps=tuple(steps),
        kept_index=kept,
        emitted_token=token,
        final_coin=u_final,
    )


def _chain(p_target: np.ndarray, q_draft: np.ndarray, m: int) -> np.ndarray:
    """p_1 = p, p_{i+1} = norm(max(0, p_i - q)), i = 1..m -> (m+1, V), on checked rows."""
    chain = [p_target]
    for _ in range(m):
        chain.append(_residual(chain[-1], q_draft)[1])
    return np.stack(chain)


def chain_alphas(p, q, m: int) -> np.ndarray:
    """alpha_i = sum_x min(p_i(x), q(x)) along the residual chain, i = 1..m -> (m,)."""
    m = check_candidates(m, m_max=MAX_CANDIDATES_THEORY)
    p_target, q_draft = validate_pair(p, q)
    return _overlap(_chain(p_target, q_draft, m)[:-1], q_draft)


def multidraft_acceptance(p, q, m):
    """beta_m = 1 - prod_{i=1..m} (1 - alpha_i): chance that one of m i.i.d. candidates is kept.

    alpha_i along the residual chain p_1 = p, p_{i+1} = norm(max(0, p_i - q))
    (SpecInfer, Miao et al. 2024). beta_1 = alpha; beta_m grows with m, with
    diminishing returns, and stops growing once p_i and q are disjoint
    (alpha_i = 0). ``m`` is a whole number or an array of them (1..64);
    returns a float or an array of the same shape.
    """
    m_arr = np.asarray(m)
    if m_arr.dtype.kind not in "iu" or m_arr.size == 0:
        raise InvalidParameterError(f"number of candidates m must be whole numbers, got {m!r}.")
    if m_arr.min() < 1 or m_arr.max() > MAX_CANDIDATES_THEORY:
        raise InvalidParameterError(
            f"number of candidates m must lie in 1..{MAX_CANDIDATES_THEORY}, got {m!r}."
        )
    p_target, q_draft = validate_pair(p, q)
    alphas = _overlap(_chain(p_target, q_draft, int(m_arr.max()))[:-1], q_draft)  # (max m,)
    beta = 1.0 - np.cumprod(1.0 - alphas)  # (max m,)
    out = beta[m_arr - 1]
    return float(out) if out.ndim == 0 else out


def _multidraft_emitted(p_target: np.ndarray, q_draft: np.ndarray, m: int) -> np.ndarray:
    """The law of :func:`multidraft_emitted` on checked p, q (V,) and m."""
    chain = _chain(p_target, q_draft, m)  # (m+1, V)
    overlap = np.minimum(chain[:-1], q_draft)  # (m, V)
    alphas = overlap.sum(axis=1)  # (m,)
    reach = np.concatenate([[1.0], np.cumprod(1.0 - alphas)])  # (m+1,)
    return (reach[:-1, None] * overlap).sum(axis=0) + reach[-1] * chain[-1]


def multidraft_emitted(p, q, m: int) -> np.ndarray:
    """What m-candidate verification emits at one position, built term by term -> (V,).

    e = sum_{i=1..m} prod_{j<i} (1 - alpha_j) min(p_i, q) + prod_{j<=m} (1 - alpha_j) p_{m+1}:
    candidate i is reached with prob prod_{j<i}(1 - alpha_j) and then emits
    token y with prob q(y) min(1, p_i(y)/q(y)) = min(p_i(y), q(y)). Equals p
    (the losslessness of SpecInfer's rule); computed, not assumed.
    """
    m = check_candidates(m, m_max=MAX_CANDIDATES_THEORY)
    p_target, q_draft = validate_pair(p, q)
    return _multidraft_emitted(p_target, q_draft, m)


# ---------------------------------------------------------------------------
# Deterministic (one-hot) drafts: prompt lookup, n-gram and greedy drafts
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OneHotRule:
    """The law of one position with a deterministic draft x: keep prob and what replaces x."""

    token: int
    keep_probability: float  # P(x is kept)
    replacement: np.ndarray  # (V,) distribution of the token emitted instead of x

    def emitted(self) -> np.ndarray:
        """(V,) keep_probability * onehot(x) + (1 - keep_probability) * replacement."""
        out = (1.0 - self.keep_probability) * self.replacement
        out[self.token] += self.keep_probability
        return out


def _one_hot(v: int, x: int) -> np.ndarray:
    """onehot(x) over V tokens -> (V,), for a checked token id x."""
    q_draft = np.zeros(v)
    q_draft[x] = 1.0
    return q_draft


def one_hot(v: int, x: int) -> np.ndarray:
    """The draft distribution of a deterministic draft: q = onehot(x) -> (V,)."""
    return _one_hot(int(v), _token_id(x, int(v), "token"))


def _general_rule(p_target: np.ndarray, x: int) -> OneHotRule:
    """The rule of :func:`onehot_general_rule` on a checked p (V,) and token x."""
    q_draft = _one_hot(p_target.size, x)
    return OneHotRule(
        token=x,
        keep_probability=float(acceptance_probability(p_target[x], q_draft[x])),
        replacement=_residual(p_target, q_draft)[1],
    )


def onehot_general_rule(p, x: int) -> OneHotRule:
    """The general rule with q = onehot(x): keep with min(1, p(x)/1) = p(x), else the residual.

    max(0, p - onehot(x)) is p with x removed (p(x) - 1 <= 0), so the
    replacement is p(y) [y != x] / (1 - p(x)) (Leviathan et al. 2023,
    Algorithm 1 with a one-hot q; variants note section 2). When p(x) = 1
    nothing is ever rejected and the replacement falls back to p.
    """
    p_target = validate_distribution(p, "p")
    return _general_rule(p_target, _token_id(x, p_target.size, "draft token"))


def onehot_match_rule(p, x: int) -> OneHotRule:
    """ "Sample y ~ p at the position, keep x iff y == x; a mismatch emits y" as a law.

    P(keep) = P(y = x) = p(x); given a mismatch, y follows p(y) [y != x] /
    (1 - p(x)). Hugging Face transformers' rule for candidates without
    probabilities (prompt lookup). Computed from the event y ~ p, not from
    the general rule, so the two can be compared.
    """
    p_target = validate_distribution(p, "p")
    x = _token_id(x, p_target.size, "draft token")
    mismatch = p_target.copy()
    mismatch[x] = 0.0  # the event y != x
    total = mismatch.sum()
    # A mismatch this unlikely is no event at all: the same cut as the residual's.
    replacement = mismatch / total if total > RESIDUAL_TOLERANCE else p_target.copy()
    return OneHotRule(token=x, keep_probability=float(p_target[x]), replacement=replacement)


@dataclass(frozen=True)
class MatchStep:
    """One draft checked against the target's own sample: y ~ p from uniform u, keep iff y == x.

    A deterministic draft (:func:`onehot_match_step`) or a sampled one under strict
    verification (:func:`strict_step`).
    """

    token: int  # the drafted x
    sampled: int  # y = inverse-CDF sample of p at u
    coin: float  # u
    accepted: bool  # y == x
    emitted_token: int  # x if kept, else y


def _match_step(p_target: np.ndarray, x: int, u: float) -> MatchStep:
    """y = F_p^{-1}(u); keep x iff y == x, else emit y (checked p, x and u)."""
    y = int(sample_index(p_target, u))
    return MatchStep(token=x, sampled=y, coin=u, accepted=y == x, emitted_token=y)


def onehot_match_step(p, x: int, *, uniform: float | None = None, rng=None) -> MatchStep:
    """Verify a deterministic draft x: y = F_p^{-1}(u), keep x iff y == x, else emit y."""
    p_target = validate_distribution(p, "p")
    x = _token_id(x, p_target.size, "draft token")
    return _match_step(p_target, x, take_coin(_one_coin(uniform), 0, rng, "the coin"))


def greedy_rule(p, x: int) -> OneHotRule:
    """Greedy verification (T = 0): keep x iff x = argmax p, else emit argmax p.

    The output is the target's greedy token whatever the draft: "lossless"
    against greedy decoding (p one-hot on its argmax), not against p.
    Ties go to the lowest token id (numpy's argmax), as in the papers' code.
    """
    p_target = validate_distribution(p, "p")
    x = _token_id(x, p_target.size, "draft token")
    best = int(np.argmax(p_target))
    return OneHotRule(
        token=x, keep_probability=float(x == best), replacement=_one_hot(p_target.size, best)
    )


# ---------------------------------------------------------------------------
# Strict verification (exact match): vLLM's rejection_sample_method = "strict", mlx-lm
# ---------------------------------------------------------------------------


def strict_acceptance(p, q) -> float:
    """beta = sum_x p(x) q(x): the chance that a draft x ~ q equals the target's own y ~ p.

    Strict verification keeps x iff x = y with x, y independent, so P(keep) =
    sum_x q(x) p(x) <= sum_x min(p(x), q(x)) = alpha (each term p q <= min(p, q), as
    max(p, q) <= 1). For p = q it is sum p^2 < 1 unless p is one-hot, where the
    probabilistic rule keeps everything. Seed 000: 0.245 against alpha = 0.85.
    (vLLM ``rejection_sample_method = "strict"``; mlx-lm's exact-match check.)
    """
    p_target, q_draft = validate_pair(p, q)
    return float(np.clip(np.dot(p_target, q_draft), 0.0, 1.0))


def _strict_emitted(
    p_target: np.ndarray, q_draft: np.ndarray, fresh_after_mismatch: bool
) -> np.ndarray:
    """The law of :func:`strict_emitted` on checked p, q (V,)."""
    kept = p_target * q_draft  # (V,) x = y = token
    if fresh_after_mismatch:
        return kept + (1.0 - kept.sum()) * p_target
    return kept + p_target * (1.0 - q_draft)  # (V,) x != y = token


def strict_emitted(p, q, *, fresh_after_mismatch: bool = False) -> np.ndarray:
    """(V,) law of the token strict verification emits at a drafted position, from the rule.

    Two disjoint events emit y: the draft is y and the target sampled y (kept),
    probability q(y) p(y); or the draft is some x != y and the target sampled y
    (mismatch, y emitted), probability sum_{x != y} q(x) p(y) = p(y) (1 - q(y)). So
    e(y) = p(y) q(y) + p(y) (1 - q(y)) = p(y): lossless (computed, not assumed).
    With ``fresh_after_mismatch`` (a BUG: the mismatch emits a new sample of p instead
    of y) e(y) = p(y) q(y) + (1 - beta) p(y), which is p only when q is flat on p's
    support; tokens with q(y) > beta come out too often.
    """
    p_target, q_draft = validate_pair(p, q)
    return _strict_emitted(p_target, q_draft, fresh_after_mismatch)


def strict_step(p, q, x: int, *, uniform: float | None = None, rng=None) -> MatchStep:
    """Strict verification of a draft x ~ q: the target samples y = F_p^{-1}(u), keeps x iff
    y == x, and emits y otherwise (which ends the round).

    The same check as :func:`onehot_match_step`, here for a draft sampled from q
    (so x must have q(x) > 0): P(keep | x) = p(x), P(keep) = :func:`strict_acceptance`.
    ``uniform`` replays a given target sample; otherwise it is drawn from ``rng``.
    """
    q_draft = validate_distribution(q, "q")
    p_target = validate_distribution(p, "p")
    _same_size(p_target, q_draft)
    x = _token_id(x, q_draft.size, "draft token")
    _check_drafted(q_draft[x], f"draft token {x}")
    return _match_step(p_target, x, take_coin(_one_coin(uniform), 0, rng, "the coin"))


def strict_expected_tokens(p, q, k: int) -> float:
    """E[tokens per round] of strict verification: E(beta, K) = sum_{i=0..K} beta^i.

    Positions are i.i.d. with keep chance beta = :func:`strict_acceptance`, so the
    round length is the truncated geometric law of Leviathan et al. 2023, Eq. 1,
    with alpha replaced by beta (the bonus included: all K matched emits y_{K+1} ~ p).
    """
    k = check_k(k)
    return float(expected_tokens(strict_acceptance(p, q), k))


# ---------------------------------------------------------------------------
# Typical acceptance (Medusa): faster, not lossless
# ---------------------------------------------------------------------------


def _check_typical(epsilon: float, delta: float, after_rejection: str) -> None:
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise InvalidParameterError(f"{name} must be a number, got {value!r}.")
        if not 0.0 < float(value) <= 1.0:
            raise InvalidParameterError(f"{name} = {value!r} is out of range; allowed: (0, 1].")
    if after_rejection not in AFTER_REJECTION:
        raise InvalidParameterError(
            f"after_rejection {after_rejection!r} is unknown; choose one of "
            f"{', '.join(AFTER_REJECTION)}."
        )


def _entropy(p_target: np.ndarray) -> float:
    """H(p) = -sum_x p(x) ln p(x) in nats (0 ln 0 = 0), for a checked p (V,)."""
    nz = p_target[p_target > 0]
    return float(-(nz * np.log(nz)).sum())


def entropy(p) -> float:
    """Shannon entropy H(p) = -sum_x p(x) ln p(x) in nats (0 ln 0 = 0).

    Medusa's code adds 1e-5 inside the log; the difference is below 1e-4
    for the small vocabularies here, and the exact value is what we teach.
    """
    return _entropy(validate_distribution(p, "p"))


def _threshold(entropy_nats: float, epsilon: float, delta: float) -> float:
    """tau = min(epsilon, delta * exp(-H)) for the entropy H of p."""
    return float(min(epsilon, delta * np.exp(-entropy_nats)))


def typical_threshold(p, epsilon: float = MEDUSA_EPSILON, delta: float = MEDUSA_DELTA) -> float:
    """tau = min(epsilon, delta * exp(-H(p))): Medusa's typical acceptance threshold.

    Cai et al. 2024, Sec. 2.3.1; code defaults posterior_threshold (epsilon)
    = 0.09, posterior_alpha (delta) = 0.3. A flat p has a high entropy and
    so a LOW threshold: almost every token passes.
    """
    _check_typical(epsilon, delta, "argmax")
    return _threshold(entropy(p), epsilon, delta)


def _correction(p_target: np.ndarray, tau: float, after_rejection: str) -> np.ndarray:
    """The correction of :func:`typical_correction` on a checked p (V,) with threshold tau."""
    if after_rejection == "argmax":
        return _one_hot(p_target.size, int(np.argmax(p_target)))
    kept = np.where(p_target >= tau, p_target, 0.0)
    return kept / kept.sum()


def typical_correction(
    p,
    epsilon: float = MEDUSA_EPSILON,
    delta: float = MEDUSA_DELTA,
    after_rejection: AfterRejection = "argmax",
) -> np.ndarray:
    """(V,) the token emitted after the kept prefix (also when all drafts are kept).

    In Medusa's code the next round's first token comes from the target's
    logits at the first non-kept position: argmax p with fast=True (the
    default of medusa_generate), or with fast=False a sample of p with every
    token below tau = min(epsilon, delta exp(-H(p))) removed
    (``get_typical_one_token``). argmax p always passes: exp(-H) <= max p.
    """
    _check_typical(epsilon, delta, after_rejection)
    p_target = validate_distribution(p, "p")
    tau = _threshold(_entropy(p_target), epsilon, delta)
    return _correction(p_target, tau, after_rejection)


def _typical_emitted(
    p_target: np.ndarray, q_draft: np.ndarray, epsilon: float, delta: float, after_rejection: str
) -> np.ndarray:
    """The law of :func:`typical_emitted` on checked p, q (V,) and options."""
    tau = _threshold(_entropy(p_target), epsilon, delta)
    passes = p_target > tau  # (V,)
    keep = float(q_draft[passes].sum())
    return np.where(passes, q_draft, 0.0) + (1.0 - keep) * _correction(
        p_target, tau, after_rejection
    )


def typical_emitted(
    p,
    q,
    epsilon: float = MEDUSA_EPSILON,
    delta: float = MEDUSA_DELTA,
    after_rejection: AfterRejection = "argmax",
) -> np.ndarray:
    """(V,) exact law of the token typical acceptance emits at a drafted position.

    e(y) = q(y) [p(y) > tau] + (1 - sum_x q(x) [p(x) > tau]) c(y), with
    tau = min(epsilon, delta exp(-H(p))) and c = :func:`typical_correction`.
    The draft x ~ q is kept iff p(x) > tau (no coin, q never enters the
    test), so e follows q on the typical tokens: e != p in general.
    """
    p_target, q_draft = validate_pair(p, q)
    _check_typical(epsilon, delta, after_rejection)
    return _typical_emitted(p_target, q_draft, epsilon, delta, after_rejection)


def typical_keep_rate(p, q, epsilon: float = MEDUSA_EPSILON, delta: float = MEDUSA_DELTA) -> float:
    """P(a draft x ~ q is kept) = sum_x q(x) [p(x) > tau] under typical acceptance."""
    p_target, q_draft = validate_pair(p, q)
    _check_typical(epsilon, delta, "argmax")
    return float(q_draft[p_target > _threshold(_entropy(p_target), epsilon, delta)].sum())


@dataclass(frozen=True)
class TypicalStep:
    """Typical acceptance of one drafted token x."""

    token: int
    p_x: float
    entropy: float  # H(p) in nats
    threshold: float  # tau = min(epsilon, delta exp(-H))
    accepted: bool  # p_x > threshold
    emitted_token: int  # x if kept, else the correction token


def typical_step(
    p,
    x: int,
    *,
    epsilon: float = MEDUSA_EPSILON,
    delta: float = MEDUSA_DELTA,
    after_rejection: AfterRejection = "argmax",
    uniform: float | None = None,
    rng: np.random.Generator | None = None,
) -> TypicalStep:
    """Keep x iff p(x) > min(epsilon, delta exp(-H(p))); else emit the correction token.

    Medusa ``evaluate_posterior`` (typical branch). With
    ``after_rejection="truncated_sample"`` the correction is drawn with
    ``uniform`` or ``rng``; with "argmax" it is deterministic.
    """
    p_target = validate_distribution(p, "p")
    x = _token_id(x, p_target.size, "draft token")
    _check_typical(epsilon, delta, after_rejection)
    coins = _one_coin(uniform)
    h = _entropy(p_target)
    tau = _threshold(h, epsilon, delta)
    accepted = bool(p_target[x] > tau)
    if accepted:
        emitted = x
    elif after_rejection == "argmax":
        emitted = int(np.argmax(p_target))  # the correction is onehot(argmax p)
    else:
        correction = _correction(p_target, tau, after_rejection)
        emitted = int(sample_index(correction, take_coin(coins, 0, rng, "the correction coin")))
    return TypicalStep(
        token=x,
        p_x=float(p_target[x]),
        entropy=h,
        threshold=tau,
        accepted=accepted,
        emitted_token=emitted,
    )


# ---------------------------------------------------------------------------
# Distance between two laws
# ---------------------------------------------------------------------------


def total_variation(a, b) -> float:
    """TV(a, b) = 1/2 sum_x |a(x) - b(x)|: the largest gap in probability of any event."""
    a_arr = validate_distribution(a, "first distribution")
    b_arr = validate_distribution(b, "second distribution")
    _same_size(a_arr, b_arr)
    return float(0.5 * np.abs(a_arr - b_arr).sum())


# ---------------------------------------------------------------------------
# Drafting candidates and tokens per round (for the Variants lab's charts)
# ---------------------------------------------------------------------------


def draft_candidates(q, m: int, rng: np.random.Generator) -> tuple[int, ...]:
    """m i.i.d. candidates x_i ~ q, with replacement (SpecInfer's sampling) -> (m,) ids."""
    m = check_candidates(m)
    q_draft = validate_distribution(q, "q")
    return tuple(int(sample_index(q_draft, rng.random())) for _ in range(m))


def multidraft_expected_tokens(p, q, k: int, m):
    """E[tokens per round] with m candidates at each of K positions: sum_{i=0..K} beta_m^i.

    Each position keeps one of its m candidates with beta_m
    (:func:`multidraft_acceptance`), so the law is the truncated geometric
    one of Leviathan et al. 2023, Eq. 1, with alpha replaced by beta_m
    (i.i.d. p, q; equal to a full m-ary token tree of depth K). Vectorised
    over ``m``; m = 1 gives (1 - alpha^(K+1)) / (1 - alpha).
    """
    k = check_k(k)
    beta = np.asarray(multidraft_acceptance(p, q, m), dtype=np.float64)
    out = (beta[..., None] ** np.arange(k + 1)).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def typical_expected_tokens(
    p, q, k: int, epsilon: float = MEDUSA_EPSILON, delta: float = MEDUSA_DELTA
) -> float:
    """E[tokens per round] of typical acceptance: sum_{i=0..K} r^i, r = sum_x q(x) [p(x) > tau].

    Every round emits its kept prefix plus one correction token.
    """
    k = check_k(k)
    r = typical_keep_rate(p, q, epsilon, delta)
    return float(np.sum(r ** np.arange(k + 1)))
