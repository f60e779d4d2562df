"""Many rounds of the variants at once: tables and chunk simulators for ``simulate_rounds``.

A round has K positions. At position j the variant's rule is summarised by
tables built once per run (:class:`VariantTables`):

- ``accept`` (K, m, V): the chance that candidate i at position j, token x,
  is kept given that candidates 1..i-1 were rejected;
- ``final_rows`` (K+1, V): what is emitted at position j when no candidate
  is kept there (j < K), or after all K positions were kept (j = K, the bonus).

Multi-draft (SpecInfer, Miao et al. 2024): accept[j, i] = min(1, p_{j,i} / q_j)
along the residual chain p_{j,1} = p_j, p_{j,i+1} = norm(max(0, p_{j,i} - q_j)),
final_rows[j] = p_{j,m+1}, final_rows[K] = p_{K+1}. Typical acceptance
(Medusa, Cai et al. 2024): accept[j, 0] = [p_j > tau_j], final_rows[j] = the
correction (argmax p_j by default). Strict verification (exact match) does not
fit these tables (what a mismatch emits depends on the draft), so it has its own
:class:`StrictTables` and :func:`strict_chunk`. A multi-draft chain with m candidates per
position is a full m-ary tree of depth K when p, q depend only on the depth
(the kept child's subtree is fresh), so it also simulates trees of constant width.

:func:`specdec_core.simulate_rounds` runs these through its chunk loop
(``variant="multi_draft"``, ``"typical_acceptance"``, ...: see
their entries in :data:`specdec_core.rules.RULES`); ``keep_probabilities`` (beta_m
for multi-draft) become the result's ``alphas``, so that
:func:`specdec_core.losslessness_test` tests round lengths against the right law.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InvalidParameterError
from .montecarlo import ChunkOutcome, DraftRowsShape, positions_chunk, token_dtype
from .sampling import _overlap, _residual, acceptance_probability
from .variants import (
    MEDUSA_DELTA,
    MEDUSA_EPSILON,
    _chain,
    _check_typical,
    _correction,
    _entropy,
    _threshold,
    check_candidates,
)


@dataclass(frozen=True)
class VariantTables(DraftRowsShape):
    """What every round of a variant's run reuses (built once per run); K, V from q_rows."""

    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V) each position's candidates are drawn from q_j
    accept: np.ndarray  # (K, m, V) keep chance of candidate i given 1..i-1 rejected
    final_rows: np.ndarray  # (K+1, V) no candidate kept at j (j < K), or the bonus (j = K)
    keep_probabilities: np.ndarray  # (K,) P(position j keeps a candidate | reached)


def _widths(n_candidates, k: int) -> tuple[int, ...]:
    """m for every position: one whole number, or one per position (a tree's widths)."""
    if isinstance(n_candidates, (int, np.integer)) and not isinstance(n_candidates, bool):
        return (check_candidates(n_candidates),) * k
    widths = tuple(n_candidates) if isinstance(n_candidates, (tuple, list)) else None
    if widths is None or len(widths) != k:
        raise InvalidParameterError(
            f"n_candidates must be a whole number or one per position ({k}), got {n_candidates!r}."
        )
    return tuple(check_candidates(m) for m in widths)


def multidraft_tables(
    p_rows: np.ndarray,
    q_rows: np.ndarray,
    *,
    n_candidates: int | tuple[int, ...] = 2,
    update_residual: bool = True,
) -> VariantTables:
    """Tables of the multi-draft rule: accept (K, m, V), final rows (K+1, V), keep (K,).

    accept[j, i] = min(1, p_{j,i} / q_j) along the residual chain (SpecInfer);
    keep[j] = beta_m = 1 - prod_i (1 - alpha_{j,i}). ``n_candidates`` may give
    one width per position (b_1..b_K: a token tree of those widths); slots past
    b_j get accept 0 (drafted, never kept). With ``update_residual=False`` (a
    BUG, for the tests and the lab) every candidate meets the original p_j and
    the final sample is norm(max(0, p_j - q_j)).
    """
    k, v = q_rows.shape
    widths = _widths(n_candidates, k)
    accept = np.zeros((k, max(widths), v))  # (K, m, V)
    final = np.empty((k + 1, v))  # (K+1, V)
    keep = np.empty(k)  # (K,)
    for j, m in enumerate(widths):
        if update_residual:
            chain = _chain(p_rows[j], q_rows[j], m)  # (m+1, V): p_{j,1..m+1}
            met, final[j] = chain[:-1], chain[-1]
        else:
            met = np.tile(p_rows[j], (m, 1))  # (m, V): the original p_j, every time
            final[j] = _residual(p_rows[j], q_rows[j])[1]
        accept[j, :m] = acceptance_probability(met, q_rows[j])
        keep[j] = 1.0 - np.cumprod(1.0 - _overlap(met, q_rows[j]))[-1]
    final[k] = p_rows[k]
    return VariantTables(
        p_rows=p_rows, q_rows=q_rows, accept=accept, final_rows=final, keep_probabilities=keep
    )


def typical_tables(
    p_rows: np.ndarray,
    q_rows: np.ndarray,
    *,
    epsilon: float = MEDUSA_EPSILON,
    delta: float = MEDUSA_DELTA,
    after_rejection: str = "argmax",
) -> VariantTables:
    """Tables of typical acceptance: accept (K, 1, V) = [p_j > tau_j], final (K+1, V), keep (K,).

    tau_j = min(epsilon, delta exp(-H(p_j))) (Medusa); final[j] = the
    correction of p_j (argmax by default) for every j, the bonus included.
    """
    _check_typical(epsilon, delta, after_rejection)
    k = q_rows.shape[0]
    taus = [_threshold(_entropy(p), epsilon, delta) for p in p_rows]  # (K+1,)
    accept = (p_rows[:k] > np.array(taus[:k])[:, None]).astype(float)[:, None, :]  # (K, 1, V)
    final = np.stack(
        [_correction(p, tau, after_rejection) for p, tau in zip(p_rows, taus, strict=True)]
    )
    keep = (accept[:, 0, :] * q_rows).sum(axis=1)  # (K,)
    return VariantTables(
        p_rows=p_rows, q_rows=q_rows, accept=accept, final_rows=final, keep_probabilities=keep
    )


def candidates_chunk(tables: VariantTables, n: int, rng: np.random.Generator) -> ChunkOutcome:
    """n rounds with m candidates per position, from the tables (no loop over rounds).

    Random draws, in order: candidates x ~ q_j (n, K*m uniforms), coins (n, K, m),
    final tokens (n). Position j keeps its FIRST candidate i with
    u < accept[j, i, x] (later coins are drawn but never looked at, like the
    coins after a rejection in a round); a round keeps its leading kept
    positions and emits final_rows[n_accepted].
    Candidates are drawn by the run's inverse-CDF sampler of q (the same token as
    a CDF search): :func:`specdec_core.montecarlo.positions_chunk`.
    """
    return positions_chunk(tables, tables.accept, n, rng)


@dataclass(frozen=True)
class StrictTables(DraftRowsShape):
    """What every round of strict verification reuses (built once per run); K, V from q_rows.

    ``final_rows`` are the target rows themselves: the target samples its own
    token y_j ~ p_j at every position j = 1..K+1 (its final sampler draws them).
    """

    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V) drafts x_j ~ q_j
    final_rows: np.ndarray  # (K+1, V) = p_rows: the target's own samples y_j
    keep_probabilities: np.ndarray  # (K,) beta_j = sum_x p_j(x) q_j(x)


def strict_tables(p_rows: np.ndarray, q_rows: np.ndarray) -> StrictTables:
    """Tables of strict verification: keep (K,) = beta_j = sum_x p_j(x) q_j(x), final = p rows.

    x_j ~ q_j and y_j ~ p_j are independent, so P(x_j = y_j) = sum_x q_j(x) p_j(x)
    (vLLM ``rejection_sample_method = "strict"``; mlx-lm's exact match).
    """
    k = q_rows.shape[0]
    keep = np.clip((p_rows[:k] * q_rows).sum(axis=1), 0.0, 1.0)  # (K,)
    return StrictTables(p_rows=p_rows, q_rows=q_rows, final_rows=p_rows, keep_probabilities=keep)


def strict_chunk(
    tables: StrictTables,
    n: int,
    rng: np.random.Generator,
    *,
    fresh_after_mismatch: bool = False,
) -> ChunkOutcome:
    """n rounds of strict verification: keep x_j while x_j == y_j, then emit y at the stop.

    Random draws, in order: drafts x_j ~ q_j (n, K uniforms), the target's samples
    y_j ~ p_j (n, K+1 uniforms; y_{K+1} is the bonus), and with the BUG
    ``fresh_after_mismatch`` one more uniform per round (n), whose sample of
    p_{n+1} replaces y at a mismatch. Every emitted token is some y_j, and whether
    position j is reached depends only on earlier positions: lossless.
    """
    k, v = tables.k_drafts, tables.vocab
    u_drafts = tables.scratch.draw(rng, n, k, "drafts", by_position=True)  # (K, n)
    u_target = tables.scratch.draw(rng, n, k + 1, "target", by_position=True)  # (K+1, n)
    drafts = np.empty((k, n), dtype=token_dtype(v))  # (K, n)
    sampled = np.empty((k + 1, n), dtype=np.intp)  # (K+1, n) the target's y_j
    alive = np.ones(n, dtype=bool)  # every draft so far matched
    n_accepted = np.zeros(n, dtype=np.intp)
    for j in range(k):
        drafts[j] = tables.draft_sampler.column(j, u_drafts[j])
        sampled[j] = tables.final_sampler.column(j, u_target[j])
        alive &= drafts[j] == sampled[j]
        n_accepted += alive
    sampled[k] = tables.final_sampler.column(k, u_target[k])
    last = np.take_along_axis(sampled, n_accepted[None, :], axis=0)[0]  # (n,) y at the stop
    if fresh_after_mismatch:
        fresh = tables.final_sampler.by_row(n_accepted, rng.random(n))  # (n,)
        last = np.where(n_accepted < k, fresh, last)
    return ChunkOutcome(n_accepted=n_accepted, drafts=drafts, last=last, vocab=v)


__all__ = [
    "StrictTables",
    "VariantTables",
    "candidates_chunk",
    "multidraft_tables",
    "strict_chunk",
    "strict_tables",
    "typical_tables",
]
