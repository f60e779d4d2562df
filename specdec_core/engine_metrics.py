"""The acceptance numbers serving engines print, with their definitions and identities.

A run of R rounds (vLLM: ``num_drafts``), each drafting K tokens and keeping the
leading n of them (0 <= n <= K), then emitting one more token from the target (the
replacement after a rejection, or the bonus when all K are kept). With A_i the
rounds whose draft i (1-based) was kept (vLLM: ``num_accepted_tokens_per_pos``):

- unconditional per-position rate r_i = A_i / R = P(n >= i): the share of rounds
  whose draft i was kept (vLLM's "Per-position acceptance rate"). Draft i is kept
  only if draft i - 1 was, so 1 >= r_1 >= r_2 >= ... >= r_K >= 0;
- mean acceptance length AL = E[n + 1] = tokens emitted per target forward pass,
  bonus included = 1 + sum_i r_i (E[n] = sum_{i>=1} P(n >= i));
  vLLM's "Mean acceptance length" = 1 + num_accepted_tokens / num_drafts;
- conditional rate c_i = r_i / r_{i-1} (r_0 = 1): the chance draft i is kept given
  that draft i - 1 was; undefined (None) where r_{i-1} = 0 (no round got there);
- draft acceptance rate (AL - 1) / K = accepted drafts / (R K): it falls as K grows even
  when nothing else changes, because the drafts after a rejection are proposed and never
  kept. vLLM's "Avg Draft acceptance rate" is num_accepted_tokens / num_draft_tokens
  (vllm/v1/spec_decode/metrics.py): the same number when every round drafts K tokens, a
  larger one when rounds draft fewer (an n-gram draft that proposes 0..K), since
  (AL - 1) / K then counts drafts never proposed as if they had been rejected;
- fitted alpha: the alpha of the i.i.d. model (Leviathan et al. 2023, Sec. 3.3:
  every draft kept independently with probability alpha, so r_i = alpha^i and
  AL = E(alpha, K) = (1 - alpha^(K+1)) / (1 - alpha), their Eq. 1) that fits the run best,
  by maximum likelihood: alpha_hat = sum_i r_i / (sum_i r_i + 1 - r_K).

Why that alpha_hat. Under the i.i.d. model a round that keeps n drafts has
likelihood alpha^n (1 - alpha) if n < K (it ended in a rejection) and alpha^K if
n = K. Over the run, log L = S log(alpha) + M log(1 - alpha), with S = sum of n =
R sum_i r_i the drafts kept and M = R (1 - r_K) the rounds that ended in a rejection;
d log L / d alpha = 0 gives alpha_hat = S / (S + M). On counts this is kept / checked:
a round checks its n kept drafts plus the one it rejected (none after K kept), so the
checked drafts are S + M (:attr:`specdec_core.SimulationResult.drafted_accepted_fraction`
is the same number). With r_i = alpha^i exactly, sum_i r_i = alpha (1 - alpha^K) / (1 - alpha)
and sum_i r_i + 1 - alpha^K = (1 - alpha^K) / (1 - alpha), so alpha_hat = alpha.
Least squares of r_i against alpha^i was not chosen: it needs an iterative solve and
weights (later positions are seen by fewer rounds), it does not recover kept / checked,
and it has no reading a student can check by hand. Engines that print only AL (no r_K)
do not give the likelihood; use :func:`draft_acceptance_rate` there.

Sources: vLLM's spec-decode metrics (``SpecDecodingStats``: num_drafts,
num_draft_tokens, num_accepted_tokens, num_accepted_tokens_per_pos; its log line prints
"Mean acceptance length" = 1 + accepted / drafts, "Per-position acceptance rate" =
accepted_per_pos / drafts and "Avg Draft acceptance rate" = accepted / draft tokens); the project's
serving notes (llama.cpp log 0.805, 0.632, 0.483 -> AL 2.92; vLLM log K = 7, AL 2.91
-> draft acceptance rate 0.273). SGLang logs an accept length too; engines differ on
whether the bonus is counted and whether rates are conditional, so check before comparing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .distributions import (
    VectorWords,
    _check_decimal_commas,
    _check_text,
    _parse_entries,
    _short,
    _split_entries,
    as_float_array,
    check_k,
    finite_vector,
)
from .errors import MAX_METRIC_POSITIONS, InvalidParameterError

RATE_TOLERANCE = 1e-9  # a rate may exceed the one before it by this much (float rounding)


@dataclass(frozen=True)
class AcceptanceMetrics:
    """The engine numbers of one run (see the module docstring for every formula).

    ``rates`` are the unconditional r_1..r_K; ``conditional_rates`` r_i / r_{i-1},
    None where r_{i-1} = 0; ``rounds`` is R when the metrics came from counts, None
    when they came from rates alone.
    """

    k: int  # K, draft positions
    rounds: int | None  # R, rounds behind the numbers (None: typed rates)
    rates: tuple[float, ...]  # (K,) r_i = P(draft i kept), unconditional
    conditional_rates: tuple[float | None, ...]  # (K,) r_i / r_{i-1}, None where r_{i-1} = 0
    mean_acceptance_length: float  # AL = 1 + sum r_i, tokens per target pass, bonus included
    draft_acceptance_rate: float  # (AL - 1) / K = kept drafts / (R K)
    fitted_alpha: float  # sum r / (sum r + 1 - r_K): the i.i.d. model's maximum likelihood alpha
    draft_tokens: int | None = None  # vLLM's num_draft_tokens; None: every round drafted K

    @property
    def accepted_tokens(self) -> float | None:
        """vLLM's num_accepted_tokens = R sum r_i (None without R)."""
        return None if self.rounds is None else self.rounds * sum(self.rates)

    @property
    def drafted_tokens(self) -> float | None:
        """Draft tokens proposed: num_draft_tokens, or R K when every round drafted K."""
        if self.draft_tokens is not None:
            return float(self.draft_tokens)
        return None if self.rounds is None else float(self.rounds * self.k)

    @property
    def accepted_per_drafted(self) -> float:
        """vLLM's "Avg Draft acceptance rate": accepted / draft tokens ((AL - 1) / K when
        every round drafted K tokens, or when only the rates are known)."""
        drafted = self.drafted_tokens
        if drafted is None:
            return self.draft_acceptance_rate
        return 0.0 if drafted == 0 else self.accepted_tokens / drafted

    @property
    def mean_drafted(self) -> float:
        """Draft tokens proposed per round: num_draft_tokens / R (K when every round drafted K)."""
        drafted = self.drafted_tokens
        return float(self.k) if drafted is None else drafted / self.rounds


def draft_acceptance_rate(mean_acceptance_length: float, k: int) -> float:
    """Accepted drafts / proposed drafts = (AL - 1) / K, for an engine that prints only AL.

    AL counts the bonus token, so AL - 1 drafts are kept per round out of the K
    proposed (vLLM log, K = 7: AL 2.91 -> 1.91 / 7 = 0.273). AL must lie in [1, K + 1].
    """
    k = check_k(k, k_max=MAX_METRIC_POSITIONS)
    al = _finite(mean_acceptance_length, "mean acceptance length")
    if not 1.0 <= al <= k + 1:
        raise InvalidParameterError(
            f"mean acceptance length {al:g} is out of range for K = {k}; it counts the token "
            f"every round emits, so it lies between 1 and K + 1 = {k + 1}."
        )
    return (al - 1.0) / k


def _finite(x: object, what: str) -> float:
    """One real number (not a bool), finite."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise InvalidParameterError(f"{what} must be a number, got {x!r}.")
    if not np.isfinite(x):
        raise InvalidParameterError(f"{what} must be a finite number, got {x!r}.")
    return float(x)


POSITION_WORDS = VectorWords(
    "a list of numbers", "one number per draft position", "position", "positions"
)


def _vector(x: object, name: str) -> np.ndarray:
    """A 1-D float array of 1..MAX_METRIC_POSITIONS finite entries (one per draft position)."""
    return finite_vector(x, name, MAX_METRIC_POSITIONS, InvalidParameterError, POSITION_WORDS)


def _never_increasing(arr: np.ndarray, name: str, tolerance: float, unit: str) -> None:
    """Refuse a vector in which some position is above the one before it (by > tolerance)."""
    up = np.flatnonzero(np.diff(arr) > tolerance)
    if up.size:
        i = int(up[0]) + 1  # 0-based index of the higher entry
        raise InvalidParameterError(
            f"{name}: position {i + 1} ({arr[i]:g}) is above position {i} ({arr[i - 1]:g}). "
            f"Draft {i + 1} is kept only when draft {i} was, so {unit} of one run never "
            "increase. Conditional rates (r_i / r_(i-1)) can: multiply them up first."
        )


def _check_rates(arr: np.ndarray, name: str) -> np.ndarray:
    """Unconditional rates: each in [0, 1], none above the one before (within RATE_TOLERANCE).

    An excess within the tolerance is floating-point rounding and is removed
    (each rate capped at the one before it), so the conditional rates stay <= 1.
    """
    outside = np.flatnonzero((arr < 0) | (arr > 1))
    if outside.size:
        i = int(outside[0])
        raise InvalidParameterError(
            f"{name}: position {i + 1} is {arr[i]:g}; a rate is a share of rounds, "
            "between 0 and 1 (type 80% or 0.8)."
        )
    _never_increasing(arr, name, RATE_TOLERANCE, "unconditional rates")
    return np.minimum.accumulate(arr)


def _conditional(rates: np.ndarray) -> tuple[float | None, ...]:
    """c_i = r_i / r_{i-1} with r_0 = 1; None where r_{i-1} = 0 (no round reached draft i)."""
    previous = np.concatenate([[1.0], rates[:-1]])  # (K,)
    return tuple(None if r0 == 0 else float(r / r0) for r, r0 in zip(rates, previous, strict=True))


def _fitted_alpha(rates: np.ndarray) -> float:
    """alpha_hat = sum r / (sum r + 1 - r_K): maximum likelihood under r_i = alpha^i.

    The denominator is at least 1 (sum r >= r_K), so it is never 0; alpha_hat = 1
    exactly when r_K = 1 (every round kept every draft).
    """
    kept = float(rates.sum())
    return kept / (kept + 1.0 - float(rates[-1]))


def _metrics(
    rates: np.ndarray, rounds: int | None, draft_tokens: int | None = None
) -> AcceptanceMetrics:
    """All the numbers of checked unconditional rates (K,)."""
    k = rates.size
    kept = float(rates.sum())
    return AcceptanceMetrics(
        k=k,
        rounds=rounds,
        rates=tuple(float(r) for r in rates),
        conditional_rates=_conditional(rates),
        mean_acceptance_length=1.0 + kept,
        draft_acceptance_rate=kept / k,
        fitted_alpha=_fitted_alpha(rates),
        draft_tokens=draft_tokens,
    )


def metrics_from_rates(rates) -> AcceptanceMetrics:
    """Metrics of an engine log's unconditional per-position rates r_1..r_K (vLLM prints these).

    Each rate lies in [0, 1], 1 <= K <= ``MAX_METRIC_POSITIONS``, and no rate is
    above the one before it by more than ``RATE_TOLERANCE``: unconditional rates of
    one run cannot increase (draft i is kept only when draft i - 1 was), so an
    increasing log is refused with the position named (it is most likely a list of
    conditional rates). Example: 0.805, 0.632, 0.483 -> AL = 1 + 1.92 = 2.92.
    """
    return _metrics(_check_rates(_vector(rates, "rates"), "rates"), None)


def _typed_positions(text: str, name: str, what: str, example: str):
    """Typed text -> (its entries, (K,) their numbers), one entry per draft position: not
    empty, at most MAX_METRIC_POSITIONS, each a number (errors name the entry)."""
    body = _check_text(text, name)
    if not body:
        raise InvalidParameterError(
            f"{name}: is empty; type one {what} per draft position, such as {example}."
        )
    if what == "rate":  # a count's "1,200" is a thousands separator, a rate's "0,8" is not
        _check_decimal_commas(body, name, InvalidParameterError)
    entries = _split_entries(body)
    if len(entries) > MAX_METRIC_POSITIONS:
        raise InvalidParameterError(
            f"{name}: has {len(entries)} entries; at most {MAX_METRIC_POSITIONS} positions are "
            "allowed."
        )
    return entries, np.array(_parse_entries(entries, name))


def parse_rates(text: str, *, name: str = "rates") -> np.ndarray:
    """Typed rates -> (K,) checked unconditional rates, e.g. ``"0.805, 0.632, 0.483"``.

    Entries are separated by commas, semicolons or spaces; each one is a decimal,
    a fraction or a percentage (``80.5%``), in [0, 1]; at most
    ``MAX_METRIC_POSITIONS`` of them, never increasing (see :func:`metrics_from_rates`).
    Errors name the entry, what is wrong and what is allowed.
    """
    entries, values = _typed_positions(text, name, "rate", "0.805, 0.632, 0.483")
    outside = np.flatnonzero((values < 0) | (values > 1))
    if outside.size:
        i = int(outside[0])
        raise InvalidParameterError(
            f"{name}: entry {i + 1} ({_short(entries[i])}) is {values[i]:g}; a rate is a share "
            "of rounds, between 0 and 1 (type 80% or 0.8)."
        )
    return _check_rates(values, name)


def parse_counts(text: str, *, name: str = "counts") -> np.ndarray:
    """Typed counts, one per draft position -> (K,) floats, e.g. ``"805, 632, 483"``.

    vLLM's ``num_accepted_tokens_per_pos`` as a student types it: entries separated by
    commas, semicolons or spaces, whole numbers >= 0, at most ``MAX_METRIC_POSITIONS``.
    Whether they fit the number of rounds and never increase is checked by
    :func:`metrics_from_position_counts`. Errors name the entry and what is allowed.
    """
    _, values = _typed_positions(text, name, "count", "805, 632, 483")
    return _whole_counts(values, name)


def _whole_counts(x: object, name: str) -> np.ndarray:
    """A vector of whole numbers >= 0 (as float64), one per position."""
    arr = _vector(x, name)
    bad = np.flatnonzero((arr < 0) | (arr != np.round(arr)))
    if bad.size:
        i = int(bad[0])
        raise InvalidParameterError(
            f"{name}: position {i + 1} is {arr[i]:g}; counts are whole numbers >= 0."
        )
    return arr


def _rounds(n_rounds: object) -> int:
    """R: a whole number >= 1."""
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, (int, np.integer)):
        raise InvalidParameterError(f"n_rounds must be a whole number, got {n_rounds!r}.")
    if n_rounds < 1:
        raise InvalidParameterError(f"n_rounds = {n_rounds} is out of range; at least 1 round.")
    return int(n_rounds)


def metrics_from_position_counts(
    accepted_at_position, n_rounds: int, *, name: str = "accepted_at_position"
) -> AcceptanceMetrics:
    """Metrics of engine counters: A_i rounds kept draft i, out of R rounds -> r_i = A_i / R.

    vLLM's ``num_accepted_tokens_per_pos`` and ``num_drafts``. Each A_i is a whole
    number in [0, R], and A_1 >= A_2 >= ... exactly (a count of one run cannot increase).
    """
    rounds = _rounds(n_rounds)
    counts = _whole_counts(accepted_at_position, name)
    over = np.flatnonzero(counts > rounds)
    if over.size:
        i = int(over[0])
        raise InvalidParameterError(
            f"{name}: position {i + 1} is {counts[i]:g}, more than the "
            f"{rounds:,} rounds; a draft position is kept at most once per round."
        )
    _never_increasing(counts, name, 0.0, "the counts")
    return _metrics(counts / rounds, rounds)


def _counter(value: object, name: str) -> int:
    """One of vLLM's counters: a whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidParameterError(f"{name} = {value!r}; a counter is a whole number >= 0.")
    return int(value)


def metrics_from_vllm_counters(
    num_drafts, num_draft_tokens, num_accepted_tokens, accepted_per_pos
) -> AcceptanceMetrics:
    """Metrics of vLLM's four spec-decode counters (``SpecDecodingStats``).

    R = ``num_drafts`` rounds that drafted; ``num_draft_tokens`` drafts proposed (R K when
    every round drafts K; fewer when a lookup draft or the guard proposes less);
    ``num_accepted_tokens`` = the sum of ``accepted_per_pos`` (A_1 >= A_2 >= ...). Checks:
    A_i <= R, the sum, and accepted <= drafted <= R K (a draft is kept only if proposed).
    AL = 1 + accepted / R; vLLM's rate accepted / drafted
    (:attr:`AcceptanceMetrics.accepted_per_drafted`) beside (AL - 1) / K.
    """
    drafts = _counter(num_drafts, "num_drafts")
    if drafts < 1:
        raise InvalidParameterError("num_drafts = 0; at least 1 round that drafted is needed.")
    drafted = _counter(num_draft_tokens, "num_draft_tokens")
    accepted = _counter(num_accepted_tokens, "num_accepted_tokens")
    m = metrics_from_position_counts(accepted_per_pos, drafts, name="num_accepted_tokens_per_pos")
    total = round(sum(m.rates) * m.rounds)
    if accepted != total:
        raise InvalidParameterError(
            f"num_accepted_tokens = {accepted:,} but the per-position counts add up to "
            f"{total:,}; vLLM's num_accepted_tokens is their sum."
        )
    if not accepted <= drafted <= drafts * m.k:
        raise InvalidParameterError(
            f"num_draft_tokens = {drafted:,}; allowed: from the {accepted:,} accepted (a draft "
            f"is kept only if it was proposed) to num_drafts x K = {drafts * m.k:,} (K = {m.k} "
            "positions)."
        )
    return dataclasses.replace(m, draft_tokens=drafted)


def metrics_from_accepted_histogram(n_accepted_counts) -> AcceptanceMetrics:
    """Metrics of a histogram (K+1,): entry n = rounds that kept exactly n drafts, n = 0..K.

    :attr:`specdec_core.SimulationResult.n_accepted_counts` is one. A_i = rounds that
    kept at least i drafts = sum_{n >= i} counts[n], then
    :func:`metrics_from_position_counts` with R = the total.
    """
    counts = as_float_array(
        n_accepted_counts, "n_accepted_counts: not a list of numbers", InvalidParameterError
    )
    if counts.ndim != 1 or not 2 <= counts.size <= MAX_METRIC_POSITIONS + 1:
        raise InvalidParameterError(
            "n_accepted_counts: must hold one count per number of kept drafts 0..K, with "
            f"1 <= K <= {MAX_METRIC_POSITIONS}; got shape {counts.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(counts) | (counts < 0) | (counts != np.round(counts)))
    if bad.size:
        n = int(bad[0])
        raise InvalidParameterError(
            f"n_accepted_counts: entry {n} (rounds that kept {n} drafts) is {counts[n]:g}; "
            "counts are whole numbers >= 0."
        )
    if counts.sum() < 1:
        raise InvalidParameterError("n_accepted_counts: no rounds counted; at least 1 is needed.")
    at_least = np.cumsum(counts[::-1])[::-1]  # (K+1,) rounds that kept >= n drafts, n = 0..K
    return metrics_from_position_counts(at_least[1:], int(at_least[0]))


def metrics_from_accepted_per_round(n_accepted_per_round, k: int) -> AcceptanceMetrics:
    """Metrics of the drafts kept in each round (n_1, ..., n_R), each a whole number in 0..K.

    What the model engine and a per-round Monte Carlo log give: r_i = share of
    rounds with n >= i, through the histogram of :func:`metrics_from_accepted_histogram`.
    """
    k = check_k(k, k_max=MAX_METRIC_POSITIONS)
    kept = as_float_array(
        n_accepted_per_round, "n_accepted_per_round: not a list of numbers", InvalidParameterError
    )
    if kept.ndim != 1 or kept.size == 0:
        raise InvalidParameterError(
            f"n_accepted_per_round: must be one count per round (at least one round); "
            f"got shape {kept.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(kept) | (kept < 0) | (kept > k) | (kept != np.round(kept)))
    if bad.size:
        i = int(bad[0])
        raise InvalidParameterError(
            f"n_accepted_per_round: round {i + 1} kept {kept[i]:g} drafts; allowed: whole "
            f"numbers from 0 to K = {k}."
        )
    return metrics_from_accepted_histogram(np.bincount(kept.astype(np.intp), minlength=k + 1))
