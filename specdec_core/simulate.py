"""Many rounds at once: a vectorised Monte Carlo of speculative sampling.

Each round draws K draft tokens x_i ~ q_i, K coins u_i ~ U[0, 1) and one
uniform for the last token, exactly as :func:`specdec_core.verify_round`
does one at a time, but for a whole block of rounds per numpy call. Besides
the correct algorithm it runs deliberately broken VARIANTS, so that a
student can watch the chi-square test catch each bug.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from .distributions import check_k, validate_rows
from .errors import MAX_ROUNDS, MAX_SIM_CELLS, InvalidDistributionError, InvalidParameterError
from .sampling import acceptance_probability, residual_distribution
from .theory import tokens_per_round_distribution

VARIANTS: dict[str, str] = {
    "correct": "As published: keep x with probability min(1, p/q), replace the first rejected "
    "token by a sample of norm(max(0, p - q)), and draw a bonus token from p when all K are kept.",
    "resample_from_p": "Bug: a rejected token is replaced by a sample of p instead of the residual "
    "max(0, p - q). Tokens the draft already over-proposes come out too often.",
    "accept_if_p_ge_q": "Bug: keep x if and only if p(x) >= q(x), a rule some tutorials state, "
    "instead of keeping it with probability min(1, p/q).",
    "ratio_with_wrong_q": "Bug: the draft proposes its top token greedily, but the ratio still "
    "uses its softmax q. The q in p/q must be the distribution the draft really sampled from.",
    "no_bonus": "Bug: when all K drafts are kept, no bonus token is drawn. The tokens still follow "
    "p, but rounds are shorter: only the tokens-per-round law catches this one.",
}
_CHUNK = 1 << 16  # rounds per numpy block: keeps the working set in cache


@dataclass(frozen=True)
class SimulationResult:
    """Counts from ``n_rounds`` simulated rounds."""

    variant: str
    k_drafts: int
    n_rounds: int
    p_rows: np.ndarray  # (K+1, V) target rows used
    q_rows: np.ndarray  # (K, V) draft rows used
    n_accepted: np.ndarray  # (n_rounds,) drafts kept in each round, 0..K
    tokens_per_round: np.ndarray  # (n_rounds,) tokens each round emitted, 1..K+1
    position_counts: np.ndarray  # (K+1, V) emitted tokens by position in the round
    reached: np.ndarray  # (K+1,) rounds that emitted a token at each position

    @property
    def emitted_counts(self) -> np.ndarray:
        """(V,) how often each token was emitted, over all rounds and positions."""
        return self.position_counts.sum(axis=0)

    @property
    def expected_counts(self) -> np.ndarray:
        """(V,) what a lossless sampler would emit: sum_j reached_j * p_j."""
        return (self.reached[:, None] * self.p_rows).sum(axis=0)

    @property
    def alphas(self) -> np.ndarray:
        """(K,) alpha_i = sum_x min(p_i, q_i) of the correct algorithm at each position."""
        return np.clip(np.minimum(self.p_rows[:-1], self.q_rows).sum(axis=1), 0.0, 1.0)

    @property
    def drafted_accepted_fraction(self) -> float:
        """Empirical acceptance: drafts kept / drafts checked. Positions after the
        first rejection are never checked and do not count."""
        checked = np.minimum(self.n_accepted + 1, self.k_drafts).sum()
        return float(self.n_accepted.sum() / checked)


def _rows(x, name: str, n_rows: int, v: int | None = None) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = np.tile(arr, (n_rows, 1))
    return validate_rows(arr, name, n_rows, v)


def _threshold_sample(cdf: np.ndarray, u: np.ndarray, last: int) -> np.ndarray:
    """Inverse CDF for a small vocabulary: token = #{j : cdf_j <= u} (one pass per token)."""
    out = np.zeros(u.shape, dtype=np.intp)
    for c in cdf[:-1]:
        out += u >= c
    return np.minimum(out, last)


def _sample_rows(dist_rows: np.ndarray, row_of: np.ndarray | None, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sample from ``dist_rows[row_of[r]]`` with uniform ``u[r]``.

    ``row_of`` None means column j of ``u`` (n, J) uses row j.
    """
    cdf = np.cumsum(dist_rows, axis=1)  # (R, V)
    u = u * cdf[:, -1:].T if row_of is None else u * cdf[row_of, -1]
    lasts = [int(np.flatnonzero(row > 0)[-1]) for row in dist_rows]
    out = np.empty(u.shape, dtype=np.intp)
    small = dist_rows.shape[1] <= 32
    for j, (c, last) in enumerate(zip(cdf, lasts, strict=True)):
        sel = (slice(None), j) if row_of is None else (row_of == j)
        uj = u[sel]
        out[sel] = (
            _threshold_sample(c, uj, last)
            if small
            else np.minimum(np.searchsorted(c, uj, side="right"), last)
        )
    return out


def _check_simulation(p, q, k, n_rounds, variant):
    k = check_k(k)
    if variant not in VARIANTS:
        raise InvalidParameterError(
            f"variant {variant!r} is unknown; choose one of {', '.join(VARIANTS)}."
        )
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise InvalidParameterError(f"n_rounds must be a whole number, got {n_rounds!r}.")
    if not 1 <= n_rounds <= MAX_ROUNDS:
        raise InvalidParameterError(
            f"n_rounds = {n_rounds} is out of range; allowed: 1 to {MAX_ROUNDS:,}."
        )
    q_rows = _rows(q, "q", k)  # (K, V)
    v = q_rows.shape[1]
    p_rows = _rows(p, "p", k + 1, v) if np.ndim(p) == 2 or np.size(p) == v else None
    if p_rows is None:
        raise InvalidDistributionError(
            f"p has {np.size(p)} entries but q has {v}; they must match."
        )
    if n_rounds * v > MAX_SIM_CELLS:
        raise InvalidParameterError(
            f"n_rounds x V = {n_rounds * v:,} is too large; at most {MAX_SIM_CELLS:,}."
        )
    return p_rows, q_rows, k, int(n_rounds)


def _round_tables(p_rows, q_rows, variant):
    """Acceptance table A (K, V) and last-token tables F (K+1, V) for a variant."""
    k = q_rows.shape[0]
    if variant == "accept_if_p_ge_q":
        accept = (p_rows[:k] >= q_rows).astype(np.float64)
    else:
        accept = acceptance_probability(p_rows[:k], q_rows)
    if variant == "resample_from_p":
        final = p_rows.copy()
    else:
        residuals = [residual_distribution(p, q) for p, q in zip(p_rows, q_rows, strict=False)]
        final = np.vstack([residuals, p_rows[k]])  # (K+1, V): zip stops at the K draft rows
    return accept, final


def simulate_rounds(
    p,
    q,
    k: int,
    n_rounds: int,
    *,
    rng: np.random.Generator,
    variant: str = "correct",
    progress: Callable[[float], None] | None = None,
) -> SimulationResult:
    """Simulate ``n_rounds`` independent rounds with K drafts each.

    p: (V,) or (K+1, V) target rows; q: (V,) or (K, V) draft rows. A 1-D p, q
    is the same at every position (the i.i.d. model behind
    E[tokens] = (1 - alpha^(K+1)) / (1 - alpha)). ``variant`` picks the
    correct algorithm or one of the broken ones in ``VARIANTS``.
    ``progress(fraction)`` is called after each block of rounds.
    """
    p_rows, q_rows, k, n_rounds = _check_simulation(p, q, k, n_rounds, variant)
    v = q_rows.shape[1]
    accept, final_rows = _round_tables(p_rows, q_rows, variant)
    greedy = np.argmax(q_rows, axis=1)  # (K,) for "ratio_with_wrong_q"
    position_counts = np.zeros((k + 1, v + 1), dtype=np.int64)  # column V = "not emitted"
    all_accepted = np.empty(n_rounds, dtype=np.int16)
    tokens_per_round = np.empty(n_rounds, dtype=np.int16)
    flat_accept = accept.reshape(-1)
    column_offset = np.arange(k) * v  # (K,)
    for start in range(0, n_rounds, _CHUNK):
        n = min(_CHUNK, n_rounds - start)
        if variant == "ratio_with_wrong_q":
            drafts = np.broadcast_to(greedy, (n, k))
        else:
            drafts = _sample_rows(q_rows, None, rng.random((n, k)))  # (n, K)
        coins = rng.random((n, k))  # (n, K)
        kept = coins < flat_accept[drafts + column_offset]  # (n, K)
        alive = np.ones(n, dtype=bool)
        n_accepted = np.zeros(n, dtype=np.intp)
        for j in range(k):
            alive &= kept[:, j]
            n_accepted += alive
        last = _sample_rows(final_rows, n_accepted, rng.random(n))  # (n,)
        if variant == "no_bonus":
            last[n_accepted == k] = v
        for j in range(k):
            emitted = np.where(n_accepted > j, drafts[:, j], np.where(n_accepted == j, last, v))
            position_counts[j] += np.bincount(emitted, minlength=v + 1)
        position_counts[k] += np.bincount(np.where(n_accepted == k, last, v), minlength=v + 1)
        all_accepted[start : start + n] = n_accepted
        tokens_per_round[start : start + n] = n_accepted + (last != v)
        if progress is not None:
            progress((start + n) / n_rounds)
    counts = position_counts[:, :v]
    return SimulationResult(
        variant=variant,
        k_drafts=k,
        n_rounds=n_rounds,
        p_rows=p_rows,
        q_rows=q_rows,
        n_accepted=all_accepted,
        tokens_per_round=tokens_per_round,
        position_counts=counts,
        reached=counts.sum(axis=1),
    )


@dataclass(frozen=True)
class GoodnessOfFit:
    """Pearson chi-square goodness of fit of observed counts to expected counts."""

    statistic: float
    dof: int
    p_value: float
    observed: np.ndarray
    expected: np.ndarray


def chi_square_test(observed, probabilities) -> GoodnessOfFit:
    """Pearson's X^2 = sum (O - E)^2 / E against E = N * probabilities.

    Cells with E < 5 are pooled into one cell (the usual validity rule); a
    count in a cell of probability 0 gives X^2 = inf and p-value 0, since
    such a token can never come from the reference distribution.
    """
    obs = np.asarray(observed, dtype=np.float64)
    probs = np.asarray(probabilities, dtype=np.float64)
    expected = obs.sum() * probs / probs.sum()
    impossible = (probs <= 0) & (obs > 0)
    if impossible.any():
        return GoodnessOfFit(float("inf"), max(int((probs > 0).sum()) - 1, 1), 0.0, obs, expected)
    small = (expected < 5) & (probs > 0)
    cells_o = list(obs[(expected >= 5)])
    cells_e = list(expected[(expected >= 5)])
    if small.any():
        pooled_o, pooled_e = obs[small].sum(), expected[small].sum()
        if pooled_e >= 5 or not cells_e:
            cells_o.append(pooled_o)
            cells_e.append(pooled_e)
        else:
            i = int(np.argmin(cells_e))
            cells_o[i] += pooled_o
            cells_e[i] += pooled_e
    o, e = np.array(cells_o), np.array(cells_e)
    dof = max(len(o) - 1, 0)
    if dof == 0:
        return GoodnessOfFit(0.0, 0, 1.0, obs, expected)
    stat = float(((o - e) ** 2 / e).sum())
    return GoodnessOfFit(stat, dof, float(chi2.sf(stat, dof)), obs, expected)


@dataclass(frozen=True)
class LosslessnessReport:
    """Two tests of a simulation: tokens follow p, and round lengths follow theory."""

    tokens: GoodnessOfFit  # emitted tokens, position by position, against p
    tokens_per_round: GoodnessOfFit  # histogram of 1..K+1 against the truncated geometric law
    significance: float

    @property
    def passed(self) -> bool:
        """True when neither test rejects at the significance level."""
        return min(self.tokens.p_value, self.tokens_per_round.p_value) >= self.significance


def losslessness_test(
    result: SimulationResult, *, significance: float = 1e-3
) -> LosslessnessReport:
    """Check a simulation against the theory with two chi-square tests.

    1. Tokens: at each position j of a round, the emitted tokens follow p_j
       (Leviathan et al. 2023, Thm 3.5); the per-position statistics and
       degrees of freedom are added up (positions are conditionally
       independent given which rounds reach them).
    2. Round lengths: P(n + 1 tokens) = alpha_1..alpha_n (1 - alpha_{n+1}),
       and alpha_1..alpha_K for K + 1 (the bonus).
    """
    if not 0 < significance < 1:
        raise InvalidParameterError(f"significance must lie in (0, 1), got {significance!r}.")
    fits = [
        chi_square_test(result.position_counts[j], result.p_rows[j])
        for j in range(result.k_drafts + 1)
        if result.reached[j] > 0
    ]
    stat = float(sum(f.statistic for f in fits))
    dof = int(sum(f.dof for f in fits))
    p_value = 1.0 if dof == 0 else (0.0 if not np.isfinite(stat) else float(chi2.sf(stat, dof)))
    observed = result.emitted_counts.astype(np.float64)
    pooled = GoodnessOfFit(stat, dof, p_value, observed, result.expected_counts)
    lengths = np.bincount(result.tokens_per_round, minlength=result.k_drafts + 2)[1:]  # (K+1,)
    law = tokens_per_round_distribution(result.alphas)
    return LosslessnessReport(pooled, chi_square_test(lengths, law), significance)
