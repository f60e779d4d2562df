"""Many rounds at once: a vectorised Monte Carlo of speculative sampling.

Each round draws K draft tokens x_i ~ q_i, K coins u_i ~ U[0, 1) and one
uniform for the last token, exactly as :func:`specdec_core.verify_round`
does one at a time, but for a whole chunk of rounds per numpy call (the steps
live in :mod:`specdec_core.montecarlo`). Besides the correct algorithm it runs
deliberately broken VARIANTS, so that a student can watch the chi-square test
catch each bug. ``SIMULATED_VARIANTS`` is the one registry of rules: name ->
flags, per-run tables and per-chunk simulator (the pages' words for each name
live in ``specdec_ui/words.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

import numpy as np

from .distributions import as_float_array, check_k, position_rows
from .errors import (
    MAX_ROUNDS,
    MAX_SIM_CELLS,
    InvalidDistributionError,
    InvalidParameterError,
    mismatch_message,
)
from .montecarlo import ChunkOutcome, RoundTables, correct_tables, count_step, rounds_chunk
from .sampling import _overlap
from .theory import tokens_per_round_distribution
from .variants_sim import (
    candidates_chunk,
    multidraft_tables,
    strict_chunk,
    strict_tables,
    typical_tables,
)

KeepRule = Literal["probabilistic", "strict"]  # which keep chance the round-length law uses


@dataclass(frozen=True)
class SimulatedVariant:
    """One rule the Monte Carlo can run: its flags, its tables and its chunk of rounds.

    ``tables(p_rows, q_rows, **options)`` runs once per run and returns what the
    chunks reuse (a :class:`RoundTables`, or any object the variant's own
    ``chunk`` reads); it checks its option values and raises a ``SpecDecError``.
    ``chunk(tables, n, rng)`` simulates n rounds, vectorised, and returns a
    :class:`ChunkOutcome`; counting is shared. ``options`` names the keyword
    options ``simulate_rounds`` may pass on to ``tables``. ``lossless``: the rule's
    tokens follow p, so the chi-square must pass (a deliberately broken rule is not).
    ``keep_rule``: which keep chance the round-length theory uses, "probabilistic"
    (alpha = sum min(p, q), or the variant's own keep probabilities) or "strict"
    (beta = sum p q, an exact match of the target's own sample).
    """

    tables: Callable[..., Any]  # (p_rows (K+1, V), q_rows (K, V), **options), once per run
    chunk: Callable[[Any, int, np.random.Generator], ChunkOutcome]  # n rounds at a time
    options: tuple[str, ...] = ()  # keyword options simulate_rounds passes on to ``tables``
    lossless: bool = False  # the emitted tokens follow p (True for the correct rules)
    keep_rule: KeepRule = "probabilistic"  # min(1, p/q), or "strict": x == y ~ p


def _tables_accept_if_p_ge_q(p_rows: np.ndarray, q_rows: np.ndarray) -> RoundTables:
    """Broken rule: A_i(x) = 1 if p_i(x) >= q_i(x) else 0 (no coin decides)."""
    right = correct_tables(p_rows, q_rows)
    k = q_rows.shape[0]
    return replace(right, accept=(p_rows[:k] >= q_rows).astype(np.float64))


def _tables_resample_from_p(p_rows: np.ndarray, q_rows: np.ndarray) -> RoundTables:
    """Broken rule: after a rejection at position i the token comes from p_i, not the residual."""
    return replace(correct_tables(p_rows, q_rows), final_rows=p_rows.copy())


# The variant vocabulary, defined once: name -> flags, tables and chunk simulator. To add
# a rule, add one entry here (its chunk function may live in another module) and its words
# to specdec_ui/words.py (a test checks that every name has them).
SIMULATED_VARIANTS: dict[str, SimulatedVariant] = {
    # As published (Leviathan et al. 2023, Algorithm 1).
    "correct": SimulatedVariant(
        tables=correct_tables,
        chunk=rounds_chunk,
        lossless=True,
    ),
    # vLLM's rejection_sample_method = "strict", mlx-lm: keep x iff x == y ~ p, else emit y.
    "strict": SimulatedVariant(
        tables=strict_tables,
        chunk=strict_chunk,
        lossless=True,
        keep_rule="strict",
    ),
    # Bug: after a rejection the token comes from p, not the residual.
    "resample_from_p": SimulatedVariant(
        tables=_tables_resample_from_p,
        chunk=rounds_chunk,
    ),
    # Bug: keep x iff p(x) >= q(x), no coin.
    "accept_if_p_ge_q": SimulatedVariant(
        tables=_tables_accept_if_p_ge_q,
        chunk=rounds_chunk,
    ),
    # Bug: the draft proposes argmax q, the ratio still divides by the softmax q.
    "ratio_with_wrong_q": SimulatedVariant(
        tables=correct_tables,
        chunk=partial(rounds_chunk, greedy_draft=True),
    ),
    # Bug: no bonus token after K kept drafts (tokens follow p, round lengths do not).
    "no_bonus": SimulatedVariant(
        tables=correct_tables,
        chunk=partial(rounds_chunk, bonus=False),
    ),
    # Bug: strict verification that emits a fresh sample of p at a mismatch instead of y.
    "strict_fresh_sample": SimulatedVariant(
        tables=strict_tables,
        chunk=partial(strict_chunk, fresh_after_mismatch=True),
        keep_rule="strict",
    ),
}
VARIANTS: tuple[str, ...] = tuple(SIMULATED_VARIANTS)  # the Losslessness lab's menu, in order
# Variants of the algorithm itself (issue 11; tables and chunk in specdec_core/variants_sim.py),
# run by the Variants lab. Kept apart from VARIANTS, the Losslessness lab's correct-or-bug menu.
ALGORITHM_VARIANTS: dict[str, SimulatedVariant] = {
    # SpecInfer: m candidates per position, the residual update after each rejection.
    "multi_draft": SimulatedVariant(
        tables=multidraft_tables,
        chunk=candidates_chunk,
        options=("n_candidates",),
        lossless=True,
    ),
    # Bug: every candidate meets the original p, never its residual.
    "multi_draft_no_residual": SimulatedVariant(
        tables=partial(multidraft_tables, update_residual=False),
        chunk=candidates_chunk,
        options=("n_candidates",),
    ),
    # Medusa: keep x iff p(x) > min(epsilon, delta exp(-H(p))), no coin; NOT lossless.
    "typical_acceptance": SimulatedVariant(
        tables=typical_tables,
        chunk=candidates_chunk,
        options=("epsilon", "delta", "after_rejection"),
    ),
}
_ALL_RULES: dict[str, SimulatedVariant] = SIMULATED_VARIANTS | ALGORITHM_VARIANTS
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
    keep_probabilities: np.ndarray | None = None  # (K,) a variant's own P(position kept)
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
        """(K,) alpha_i = sum_x min(p_i, q_i) of the correct algorithm at each position,
        or the variant's own keep probabilities (beta_m for multi-draft, sum_x p_i q_i for
        strict verification) when it has them."""
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
    if variant not in _ALL_RULES:
        raise InvalidParameterError(
            f"variant {variant!r} is unknown; choose one of {', '.join(_ALL_RULES)}."
        )
    if unknown := sorted(set(options) - set(_ALL_RULES[variant].options)):
        raise InvalidParameterError(
            f"option(s) {', '.join(unknown)} do not apply to variant {variant!r}; allowed: "
            f"{', '.join(_ALL_RULES[variant].options) or 'none'}."
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
    ``variant`` picks the correct algorithm or one of the broken ones in
    ``VARIANTS``, or a variant of the algorithm in ``ALGORITHM_VARIANTS``
    (``variant="multi_draft"`` with ``n_candidates``; ``"typical_acceptance"``
    with ``epsilon``, ``delta``, ``after_rejection``), whose ``**options`` go to
    its tables. ``progress(fraction)`` is called after each chunk of rounds.

    Memory: rounds run in chunks of ``CHUNK_ROUNDS`` and only counts are kept,
    so a run's peak memory does not grow with ``n_rounds``. Seeds: every chunk
    draws its drafts (n x K uniforms), then its coins (n x K), then its final
    tokens (n), so the same seed gives exactly the same run for the same
    ``CHUNK_ROUNDS``; a different chunk size would split the random stream
    differently and give other (equally valid) numbers. It stays 2^16, the
    block size the lab has always used, so earlier links show the same counts.
    """
    p_rows, q_rows, k, n_rounds = _check_simulation(p, q, k, n_rounds, variant, options)
    spec = _ALL_RULES[variant]
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
        keep_probabilities=getattr(tables, "keep_probabilities", None),
        options=dict(options),
    )


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
