"""Many rounds of the variants at once: vectorised Monte Carlo (no loop over rounds).

A round has K positions. At position j the variant's rule is summarised by
two tables, built once:

- ``accept`` (K, m, V): the chance that candidate i at position j, token x,
  is kept given that candidates 1..i-1 were rejected;
- ``final`` (K+1, V): what is emitted at position j when no candidate is
  kept there (j < K), or after all K positions were kept (j = K, the bonus).

Multi-draft (SpecInfer): accept[j, i] = min(1, p_{j,i} / q_j) along the
residual chain p_{j,1} = p_j, p_{j,i+1} = norm(max(0, p_{j,i} - q_j)), final[j]
= p_{j,m+1}, final[K] = p_{K+1}. Typical acceptance (Medusa): accept[j, 0] =
[p_j > tau_j], final[j] = the correction (argmax p_j by default). A
multi-draft chain with m candidates per position is a full m-ary tree of
depth K when p, q depend only on the depth (the kept child's subtree is
fresh), so it also simulates trees of constant width.

The result is a :class:`VariantSimulationResult`, a
:class:`specdec_core.SimulationResult` whose ``alphas`` are the variant's
per-position keep probabilities (beta_m for multi-draft), so that
:func:`specdec_core.losslessness_test` tests round lengths against the right law.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .distributions import check_k, validate_rows
from .errors import MAX_ROUNDS, MAX_SIM_CELLS, InvalidDistributionError, InvalidParameterError
from .sampling import acceptance_probability, residual_distribution
from .simulate import SimulationResult, _sample_rows
from .variants import (
    AFTER_REJECTION,
    MEDUSA_DELTA,
    MEDUSA_EPSILON,
    _check_typical,
    check_candidates,
    typical_correction,
    typical_threshold,
)

SIM_VARIANTS: dict[str, str] = {
    "multi_draft": "SpecInfer's multi-draft rule: m candidates per position, tried in order "
    "with min(1, p_i/q), the target shrinking to its residual after each rejection. Lossless.",
    "multi_draft_no_residual": "Bug: m candidates each tried against the ORIGINAL p (no residual "
    "update), then the usual residual. Extra candidates are kept too often.",
    "typical_acceptance": "Medusa's typical acceptance: keep x iff p(x) > min(epsilon, "
    "delta exp(-H(p))), no coin; after the kept prefix, argmax p. Faster, NOT lossless.",
}
_CHUNK = 1 << 15  # rounds per numpy block (K * m candidates each)


@dataclass(frozen=True)
class VariantSimulationResult(SimulationResult):
    """A SimulationResult whose per-position keep probabilities come from the variant."""

    keep_probabilities: np.ndarray | None = None  # (K,) P(position j keeps | reached)
    n_candidates: int = 1

    @property
    def alphas(self) -> np.ndarray:
        """(K,) chance that position j keeps a candidate (beta_m for multi-draft)."""
        return self.keep_probabilities

    @property
    def drafted_per_round(self) -> int:
        """Candidates drafted per round: K * m."""
        return self.k_drafts * self.n_candidates


def _rows(x, name: str, n_rows: int, v: int | None = None) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = np.tile(arr, (n_rows, 1))
    return validate_rows(arr, name, n_rows, v)


def _check(p, q, k, n_rounds):
    k = check_k(k)
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise InvalidParameterError(f"n_rounds must be a whole number, got {n_rounds!r}.")
    if not 1 <= n_rounds <= MAX_ROUNDS:
        raise InvalidParameterError(
            f"n_rounds = {n_rounds} is out of range; allowed: 1 to {MAX_ROUNDS:,}."
        )
    q_rows = _rows(q, "q", k)  # (K, V)
    v = q_rows.shape[1]
    if np.shape(p)[-1:] != (v,):
        raise InvalidDistributionError(
            f"p has {np.shape(p)[-1] if np.ndim(p) else 1} entries but q has {v}; they must match."
        )
    if n_rounds * v > MAX_SIM_CELLS:
        raise InvalidParameterError(
            f"n_rounds x V = {n_rounds * v:,} is too large; at most {MAX_SIM_CELLS:,}."
        )
    return _rows(p, "p", k + 1, v), q_rows, k, int(n_rounds)


def multidraft_tables(p_rows, q_rows, m: int, *, update_residual: bool = True):
    """Tables of the multi-draft rule: accept (K, m, V), final (K+1, V), keep (K,).

    accept[j, i] = min(1, p_{j,i} / q_j) along the residual chain (SpecInfer);
    keep[j] = beta_m = 1 - prod_i (1 - alpha_{j,i}). With
    ``update_residual=False`` (a BUG, for the tests and the lab) every
    candidate meets the original p_j and the final sample is norm(max(0, p_j - q_j)).
    """
    m = check_candidates(m)
    k = q_rows.shape[0]
    accept = np.empty((k, m, q_rows.shape[1]))  # (K, m, V)
    final = np.empty((k + 1, q_rows.shape[1]))  # (K+1, V)
    keep = np.empty(k)  # (K,)
    for j in range(k):
        p_i, reject = p_rows[j], 1.0
        for i in range(m):
            accept[j, i] = acceptance_probability(p_i, q_rows[j])
            reject *= 1.0 - float(np.clip(np.minimum(p_i, q_rows[j]).sum(), 0.0, 1.0))
            if update_residual:
                p_i = residual_distribution(p_i, q_rows[j])
        final[j] = p_i if update_residual else residual_distribution(p_rows[j], q_rows[j])
        keep[j] = 1.0 - reject
    final[k] = p_rows[k]
    return accept, final, keep


def typical_tables(p_rows, q_rows, epsilon, delta, after_rejection):
    """Tables of typical acceptance: accept (K, 1, V) = [p_j > tau_j], final (K+1, V), keep (K,).

    tau_j = min(epsilon, delta exp(-H(p_j))) (Medusa); final[j] = the
    correction of p_j (argmax by default) for every j, the bonus included.
    """
    k = q_rows.shape[0]
    accept = np.stack(
        [(p > typical_threshold(p, epsilon, delta)).astype(float) for p in p_rows[:k]]
    )[:, None, :]  # (K, 1, V)
    final = np.stack([typical_correction(p, epsilon, delta, after_rejection) for p in p_rows])
    keep = (accept[:, 0, :] * q_rows).sum(axis=1)  # (K,)
    return accept, final, keep


def _chunk(rng, q_rep, flat_accept, offsets, final, n, k, m):
    """One block of n rounds -> (drafts kept per position (n, K), n_accepted (n,), last (n,))."""
    drafts = _sample_rows(q_rep, None, rng.random((n, k * m))).reshape(n, k, m)  # (n, K, m)
    kept = rng.random((n, k, m)) < flat_accept[drafts + offsets]  # (n, K, m)
    first = np.argmax(kept, axis=2)  # (n, K) first kept candidate
    any_kept = kept.any(axis=2)  # (n, K)
    chosen = np.take_along_axis(drafts, first[:, :, None], axis=2)[:, :, 0]  # (n, K)
    n_accepted = np.cumprod(any_kept, axis=1).sum(axis=1)  # (n,) leading kept positions
    last = _sample_rows(final, n_accepted, rng.random(n))  # (n,)
    return chosen, n_accepted, last


def simulate_tables(p_rows, q_rows, tables, n_rounds, *, rng, variant, progress=None):
    """Run ``n_rounds`` rounds from the tables (accept, final, keep) -> VariantSimulationResult.

    Per block: draft (n, K, m) candidates x ~ q_j, coins u (n, K, m); a
    position keeps its first candidate with u < accept[j, i, x]; a round
    keeps its leading kept positions and emits final[n_accepted] after them.
    """
    accept, final, keep = tables
    k, m, v = accept.shape
    q_rep = np.repeat(q_rows, m, axis=0)  # (K*m, V): column j*m + i drafts from q_j
    offsets = (np.arange(k)[:, None] * m + np.arange(m)[None, :]) * v  # (K, m)
    flat_accept = accept.reshape(-1)
    position_counts = np.zeros((k + 1, v + 1), dtype=np.int64)  # column V: not emitted
    all_accepted = np.empty(n_rounds, dtype=np.int16)
    for start in range(0, n_rounds, _CHUNK):
        n = min(_CHUNK, n_rounds - start)
        chosen, n_accepted, last = _chunk(rng, q_rep, flat_accept, offsets, final, n, k, m)
        for j in range(k):
            emitted = np.where(n_accepted > j, chosen[:, j], np.where(n_accepted == j, last, v))
            position_counts[j] += np.bincount(emitted, minlength=v + 1)
        position_counts[k] += np.bincount(np.where(n_accepted == k, last, v), minlength=v + 1)
        all_accepted[start : start + n] = n_accepted
        if progress is not None:
            progress((start + n) / n_rounds)
    counts = position_counts[:, :v]
    return VariantSimulationResult(
        variant=variant,
        k_drafts=k,
        n_rounds=n_rounds,
        p_rows=p_rows,
        q_rows=q_rows,
        n_accepted=all_accepted,
        tokens_per_round=all_accepted + 1,
        position_counts=counts,
        reached=counts.sum(axis=1),
        keep_probabilities=keep,
        n_candidates=m,
    )


def simulate_variant(
    p,
    q,
    k: int,
    n_rounds: int,
    *,
    rng: np.random.Generator,
    variant: str = "multi_draft",
    n_candidates: int = 2,
    epsilon: float = MEDUSA_EPSILON,
    delta: float = MEDUSA_DELTA,
    after_rejection: str = "argmax",
    progress: Callable[[float], None] | None = None,
) -> VariantSimulationResult:
    """Simulate ``n_rounds`` rounds of a variant in ``SIM_VARIANTS`` (vectorised).

    p: (V,) or (K+1, V); q: (V,) or (K, V). ``n_candidates`` m for the
    multi-draft variants (K * m candidates drafted per round); ``epsilon``,
    ``delta`` (Medusa defaults 0.09, 0.3) and ``after_rejection`` for typical
    acceptance. Same ``emitted_counts`` and ``tokens_per_round`` as
    :func:`specdec_core.simulate_rounds`.
    """
    if variant not in SIM_VARIANTS:
        raise InvalidParameterError(
            f"variant {variant!r} is unknown; choose one of {', '.join(SIM_VARIANTS)}."
        )
    p_rows, q_rows, k, n_rounds = _check(p, q, k, n_rounds)
    if variant == "typical_acceptance":
        _check_typical(epsilon, delta, after_rejection)
        tables = typical_tables(p_rows, q_rows, epsilon, delta, after_rejection)
    else:
        update = variant == "multi_draft"
        tables = multidraft_tables(p_rows, q_rows, n_candidates, update_residual=update)
    return simulate_tables(
        p_rows, q_rows, tables, n_rounds, rng=rng, variant=variant, progress=progress
    )


__all__ = [
    "AFTER_REJECTION",
    "SIM_VARIANTS",
    "VariantSimulationResult",
    "multidraft_tables",
    "simulate_tables",
    "simulate_variant",
    "typical_tables",
]
