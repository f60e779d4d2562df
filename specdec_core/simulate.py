"""Many rounds at once: a vectorised Monte Carlo of speculative sampling.

Each round draws K draft tokens x_i ~ q_i, K coins u_i ~ U[0, 1) and one
uniform for the last token, exactly as :func:`specdec_core.verify_round`
does one at a time, but for a whole chunk of rounds per numpy call (the steps
live in :mod:`specdec_core.montecarlo`). It runs any rule of
:data:`specdec_core.rules.RULES` (the correct ones, the lossy ones and the
deliberately broken ones, so that a student can watch the chi-square test catch
each bug): the rule's tables once per run, its chunk per block of rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .distributions import as_float_array, check_k, position_rows
from .errors import (
    MAX_ROUNDS,
    MAX_SIM_CELLS,
    InvalidDistributionError,
    InvalidParameterError,
    mismatch_message,
)
from .montecarlo import count_step
from .rules import get_rule, reference_rule
from .sampling import _overlap
from .theory import tokens_per_round_distribution

CHUNK_ROUNDS = 1 << 16  # rounds per numpy block: bounds a run's memory; part of the seed's stream


@dataclass(frozen=True)
class SimulationResult:
    """Counts from ``n_rounds`` simulated rounds (histograms only: no per-round arrays)."""

    variant: str
    k_drafts: int
    n_rounds: int
    p_rows: np.ndarray  # (K+1, V) target rows used
    q_rows: np.ndarray  # (K, V) draft rows used
    position_counts: np.ndarray  # (K+1, V) emitted tokens by position in the round
    reached: np.ndarray  # (K+1,) rounds that emitted a token at each position
    n_accepted_counts: np.ndarray  # (K+1,) rounds that kept 0..K drafts
    tokens_per_round_counts: np.ndarray  # (K+2,) rounds that emitted 0..K+1 tokens
    # (K,) P(position kept) of the rule the run is held to (a bug: the rule it breaks)
    keep_probabilities: np.ndarray | None = None
    options: dict[str, Any] = field(default_factory=dict)  # the variant's options, as given

    @property
    def n_accepted(self) -> np.ndarray:
        """(n_rounds,) drafts kept in each round, 0..K, in sorted order.

        Rebuilt from ``n_accepted_counts`` (the run keeps counts, not the order of
        rounds); prefer the counts for large runs.
        """
        return np.repeat(np.arange(self.k_drafts + 1, dtype=np.int16), self.n_accepted_counts)

    @property
    def tokens_per_round(self) -> np.ndarray:
        """(n_rounds,) tokens each round emitted, 1..K+1, in sorted order (see n_accepted)."""
        lengths = np.arange(self.k_drafts + 2, dtype=np.int16)
        return np.repeat(lengths, self.tokens_per_round_counts)

    @property
    def mean_tokens_per_round(self) -> float:
        """Tokens emitted per round (per target pass), averaged over the run: the mean
        acceptance length AL of the engines, bonus included."""
        lengths = np.arange(self.k_drafts + 2)  # (K+2,) 0..K+1 tokens
        return float((lengths * self.tokens_per_round_counts).sum() / self.n_rounds)

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
        """(K,) the keep probabilities of the rule the run is held to (alpha_i = sum_x
        min(p_i, q_i) for the published rule, beta_m for multi-draft, sum_x p_i q_i for
        strict verification, ...); alpha_i when the result has none."""
        if self.keep_probabilities is not None:
            return self.keep_probabilities
        return _overlap(self.p_rows[:-1], self.q_rows)

    @property
    def drafted_accepted_fraction(self) -> float:
        """Empirical acceptance: drafts kept / drafts checked. Positions after the
        first rejection are never checked and do not count."""
        kept = np.arange(self.k_drafts + 1)  # (K+1,) drafts kept in a round, 0..K
        checked = (np.minimum(kept + 1, self.k_drafts) * self.n_accepted_counts).sum()
        return float((kept * self.n_accepted_counts).sum() / checked)


def _check_simulation(p, q, k, n_rounds, variant, options=()):
    """Checked (p_rows (K+1, V), q_rows (K, V), K, n_rounds) of one simulate_rounds call."""
    k = check_k(k)
    rule = get_rule(variant)
    if unknown := sorted(set(options) - set(rule.options)):
        raise InvalidParameterError(
            f"option(s) {', '.join(unknown)} do not apply to variant {variant!r}; allowed: "
            f"{', '.join(rule.options) or 'none'}."
        )
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise InvalidParameterError(f"n_rounds must be a whole number, got {n_rounds!r}.")
    if not 1 <= n_rounds <= MAX_ROUNDS:
        raise InvalidParameterError(
            f"n_rounds = {n_rounds} is out of range; allowed: 1 to {MAX_ROUNDS:,}."
        )
    q_rows = position_rows(q, "q", k)  # (K, V)
    v = q_rows.shape[1]
    p_arr = as_float_array(p, "p: not an array of numbers")
    if p_arr.ndim == 1 and p_arr.size != v:
        raise InvalidDistributionError(mismatch_message(p_arr.size, v))
    p_rows = position_rows(p_arr, "p", k + 1, v)  # (K+1, V)
    if n_rounds * v > MAX_SIM_CELLS:
        raise InvalidParameterError(
            f"n_rounds x V = {n_rounds * v:,} is too large; at most {MAX_SIM_CELLS:,}."
        )
    return p_rows, q_rows, k, int(n_rounds)


def simulate_rounds(
    p,
    q,
    k: int,
    n_rounds: int,
    *,
    rng: np.random.Generator,
    variant: str = "correct",
    progress: Callable[[float], None] | None = None,
    **options: Any,
) -> SimulationResult:
    """Simulate ``n_rounds`` independent rounds with K drafts each.

    p: (V,) or (K+1, V) target rows; q: (V,) or (K, V) draft rows. A 1-D p, q
    is the same at every position (the i.i.d. model behind
    E[tokens] = (1 - alpha^(K+1)) / (1 - alpha), Leviathan et al. 2023, Eq. 1).
    ``variant`` names a rule of :data:`specdec_core.rules.RULES` (``"correct"``,
    ``"strict"``, ``"multi_draft"`` with ``n_candidates``, ``"typical_acceptance"``
    with ``epsilon``, ``delta``, ``after_rejection``, a deliberate bug, ...), whose
    ``**options`` go to its tables. The result's ``keep_probabilities`` are those of
    the rule the run is held to: the rule's own, or for a bug those of the rule it
    breaks (:func:`specdec_core.rules.reference_rule`). ``progress(fraction)`` is
    called after each chunk of rounds.

    Memory: rounds run in chunks of ``CHUNK_ROUNDS`` and only counts are kept,
    so a run's peak memory does not grow with ``n_rounds``. Seeds: every chunk
    draws its drafts (n x K uniforms), then its coins (n x K), then its final
    tokens (n), so the same seed gives exactly the same run for the same
    ``CHUNK_ROUNDS``; a different chunk size would split the random stream
    differently and give other (equally valid) numbers. It stays 2^16, the
    block size the lab has always used, so earlier links show the same counts.
    """
    p_rows, q_rows, k, n_rounds = _check_simulation(p, q, k, n_rounds, variant, options)
    spec = get_rule(variant)
    tables = spec.tables(p_rows, q_rows, **options)
    v = q_rows.shape[1]
    totals = None
    for start in range(0, n_rounds, CHUNK_ROUNDS):
        n = min(CHUNK_ROUNDS, n_rounds - start)
        counts = count_step(spec.chunk(tables, n, rng), v)
        totals = counts if totals is None else totals + counts
        if progress is not None:
            progress((start + n) / n_rounds)
    return SimulationResult(
        variant=variant,
        k_drafts=k,
        n_rounds=n_rounds,
        p_rows=p_rows,
        q_rows=q_rows,
        position_counts=totals.position_counts,
        reached=totals.position_counts.sum(axis=1),
        n_accepted_counts=totals.n_accepted_counts,
        tokens_per_round_counts=totals.tokens_per_round_counts,
        keep_probabilities=_reference_keep(variant, tables, p_rows, q_rows, options),
        options=dict(options),
    )


def _reference_keep(variant: str, tables, p_rows, q_rows, options: dict) -> np.ndarray:
    """(K,) keep probabilities of the rule a run of ``variant`` is held to: its own tables'
    for a rule that is no bug, else those of the rule it breaks (with the options that rule
    takes), so that a bug's round lengths are tested against the law it should follow."""
    reference = reference_rule(variant)
    if reference.name == variant:
        return np.asarray(tables.keep_probabilities, dtype=np.float64)
    shared = {name: value for name, value in options.items() if name in reference.options}
    return np.asarray(reference.tables(p_rows, q_rows, **shared).keep_probabilities, np.float64)


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X^2 >= statistic) for dof degrees of freedom: scipy.stats.chi2.sf, the same number.

    scipy.special.chdtrc(dof, x) is what chi2.sf calls; imported here, not at module
    import, so that importing specdec_core does not load scipy (about a second).
    """
    from scipy.special import chdtrc

    return float(chdtrc(dof, statistic))


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
        dof = max(int((probs > 0).sum()) - 1, 1)
        return GoodnessOfFit(
            statistic=float("inf"), dof=dof, p_value=0.0, observed=obs, expected=expected
        )
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
        return GoodnessOfFit(statistic=0.0, dof=0, p_value=1.0, observed=obs, expected=expected)
    stat = float(((o - e) ** 2 / e).sum())
    p_value = chi2_sf(stat, dof)
    return GoodnessOfFit(statistic=stat, dof=dof, p_value=p_value, observed=obs, expected=expected)


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
    p_value = 1.0 if dof == 0 else (0.0 if not np.isfinite(stat) else chi2_sf(stat, dof))
    observed = result.emitted_counts.astype(np.float64)
    pooled = GoodnessOfFit(
        statistic=stat,
        dof=dof,
        p_value=p_value,
        observed=observed,
        expected=result.expected_counts,
    )
    lengths = result.tokens_per_round_counts[1:]  # (K+1,) rounds of 1..K+1 tokens
    law = tokens_per_round_distribution(result.alphas)
    return LosslessnessReport(
        tokens=pooled,
        tokens_per_round=chi_square_test(lengths, law),
        significance=significance,
    )
