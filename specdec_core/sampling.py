"""One round of speculative sampling, decision by decision.

Notation of the seeds and of Leviathan et al. 2023 (arXiv 2211.17192):
``p`` is the TARGET distribution, ``q`` the DRAFT distribution (Chen et al.
2023 use the reverse letters). A round with K draft tokens:

1. the draft samples x_1..x_K, x_i ~ q_i (K cheap draft steps);
2. the target scores all K positions plus one more in one pass: p_1..p_{K+1};
3. for i = 1..K: draw a coin u_i ~ U[0, 1) and keep x_i iff
   u_i < min(1, p_i(x_i) / q_i(x_i)); stop at the first rejection;
4. rejected at position i -> emit a sample of norm(max(0, p_i - q_i));
   all K kept -> emit a free "bonus" sample of p_{K+1}.

Every emitted token is then distributed exactly as p (Leviathan et al. 2023,
Thm 3.5 / Appendix A.1): speculative sampling is lossless.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .distributions import as_float_array, check_k, validate_pair, validate_rows
from .errors import InvalidDistributionError, InvalidParameterError

RESIDUAL_TOLERANCE = 1e-12  # residual mass at or below this counts as zero
ROUNDING_ULPS = 4  # p(x) - q(x) within 4 units in the last place of p(x) is rounding
FinalKind = Literal["bonus", "resample"]  # how a round's last token was drawn
DraftStatus = Literal["accepted", "rejected", "discarded"]  # verdict at one draft position
TokenStatus = Literal["accepted", "resampled", "bonus"]  # how an emitted token came about
# The status of the token a final kind emits: the one mapping (pages and figures read it).
FINAL_STATUS: dict[FinalKind, TokenStatus] = {"resample": "resampled", "bonus": "bonus"}


def acceptance_probability(p_x, q_x):
    """Probability of keeping a drafted token x: a(x) = min(1, p(x) / q(x)).

    Leviathan et al. 2023, Algorithm 1; seed 000 Step 3. Vectorised over
    arrays (returns a float for scalars). The limits are defined, never NaN:
    - p(x) = 0 gives 0: the target forbids x, so it is always rejected
      (seed 003, cell D), also when q(x) = 0;
    - q(x) -> 0 with p(x) > 0 gives 1: the cap min(1, .) holds the ratio
      (seed 003, cell E), and q(x) = 0 exactly also gives 1.
    Inputs must be probabilities in [0, 1].
    """
    p_arr = np.asarray(p_x, dtype=np.float64)
    q_arr = np.asarray(q_x, dtype=np.float64)
    for name, arr in (("p(x)", p_arr), ("q(x)", q_arr)):
        if not np.all(np.isfinite(arr) & (arr >= 0) & (arr <= 1)):
            raise InvalidParameterError(f"{name} must be a probability in [0, 1], got {arr}.")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(q_arr > 0, p_arr / np.where(q_arr > 0, q_arr, 1.0), np.inf)
    a = np.where(p_arr > 0, np.minimum(1.0, ratio), 0.0)
    return float(a) if a.ndim == 0 else a


def acceptance_rate(p, q) -> float:
    """alpha = sum_x min(p(x), q(x)) = 1 - TV(p, q).

    The probability that one drafted token x ~ q is kept (Leviathan et al.
    2023, Thm 3.5 and Cor 3.6): sum_x q(x) min(1, p(x)/q(x)). It is the
    overlap area of the two bar charts; 1 when p = q, 0 for disjoint supports.
    The sum is clipped to [0, 1] against floating-point rounding (1 + 2e-16).
    """
    return float(_overlap(*validate_pair(p, q)))


def _overlap(p_rows: np.ndarray, q_rows: np.ndarray) -> np.ndarray:
    """alpha = sum_x min(p(x), q(x)) along the last axis, in [0, 1], for checked rows.

    The formula of :func:`acceptance_rate` without the checks: (R, V) rows give
    (R,) rates (each position's, or each residual's along a chain).
    """
    return np.clip(np.minimum(p_rows, q_rows).sum(axis=-1), 0.0, 1.0)


def residual_mass(p, q) -> float:
    """Z = sum_x max(0, p(x) - q(x)) = 1 - alpha: the chance a draft token is rejected."""
    p_target, q_draft = validate_pair(p, q)
    return float(_residual(p_target, q_draft)[0].sum())


def _residual(p_row: np.ndarray, q_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(max(0, p - q), its normalisation, or p when the mass is <= RESIDUAL_TOLERANCE).

    The formula behind :func:`residual_distribution` and :func:`residual_mass`,
    without the input checks. A difference of at most ROUNDING_ULPS units in the
    last place of p(x) is rounding (from dividing p and q by their float sums),
    not mass: it counts as p(x) = q(x), so no token with p <= q gets a residual.
    """
    leftover = np.maximum(0.0, p_row - q_row)  # (V,)
    leftover[leftover <= ROUNDING_ULPS * np.spacing(p_row)] = 0.0
    z = leftover.sum()
    return leftover, (p_row.copy() if z <= RESIDUAL_TOLERANCE else leftover / z)


def residual_distribution(p, q) -> np.ndarray:
    """p_adj(x) = max(0, p(x) - q(x)) / Z, Z = sum_x max(0, p(x) - q(x)).

    The distribution a rejected draft token is replaced with (Leviathan et
    al. 2023, Algorithm 1; seed 003 Ex 6). Never NaN: when Z <= 1e-12, which
    means p == q up to rounding and a rejection cannot happen (alpha = 1),
    the documented fallback is p itself, the distribution the output must
    follow. Returns a new float64 vector (V,).
    """
    p_target, q_draft = validate_pair(p, q)
    return _residual(p_target, q_draft)[1]


def sample_index(distribution: np.ndarray, u):
    """Inverse-CDF sampling: the token whose CDF interval holds u (u in [0, 1)).

    Vectorised over ``u``. A token of probability 0 is never returned, also
    when rounding leaves the last CDF value a hair below 1.
    """
    cdf = np.cumsum(distribution)  # (V,)
    last = int(np.flatnonzero(distribution > 0)[-1])
    idx = np.searchsorted(cdf, np.asarray(u) * cdf[-1], side="right")
    return np.minimum(idx, last)


@dataclass(frozen=True)
class RoundStep:
    """The decision at one draft position (0-based ``position``)."""

    position: int
    token: int
    p_x: float  # target probability of the drafted token
    q_x: float  # draft probability of the drafted token
    ratio: float  # p_x / q_x
    acceptance_probability: float  # min(1, ratio)
    coin: float  # u ~ U[0, 1)
    accepted: bool  # coin < acceptance_probability


@dataclass(frozen=True, eq=False)
class RoundResult:
    """Everything one round decided, for display and for tests (compare fields, not results)."""

    k_drafts: int
    draft_tokens: tuple[int, ...]
    steps: tuple[RoundStep, ...]  # positions that were checked, up to the first rejection
    n_accepted: int  # drafts kept, 0..K
    final_kind: FinalKind
    final_position: int  # n_accepted: the position the last token is emitted at
    final_token: int
    final_coin: float | None  # uniform that drew the final token (None if it was given)
    final_distribution: np.ndarray  # (V,): residual at the rejection, or p_{K+1}
    residual_unnormalised: np.ndarray | None  # (V,) max(0, p - q) at the rejection
    emitted_tokens: tuple[int, ...]  # accepted drafts + the final token

    @property
    def discarded_positions(self) -> tuple[int, ...]:
        """Draft positions after the first rejection: never checked (seed 003 Ex 2)."""
        return (
            tuple(range(self.n_accepted + 1, self.k_drafts))
            if self.final_kind == "resample"
            else ()
        )

    @property
    def draft_statuses(self) -> tuple[DraftStatus, ...]:
        """(K,) verdict at each draft position: kept, the first rejection, then never checked."""
        checked = tuple("accepted" if s.accepted else "rejected" for s in self.steps)
        return checked + ("discarded",) * (self.k_drafts - len(checked))

    @property
    def final_status(self) -> TokenStatus:
        """How the last token came about: "resampled" (from the residual) or "bonus"."""
        return FINAL_STATUS[self.final_kind]

    @property
    def n_emitted(self) -> int:
        """Tokens this round adds: n_accepted + 1 (the resample or the bonus)."""
        return len(self.emitted_tokens)


def take_coin(
    uniforms: Sequence[float], i: int, rng: np.random.Generator | None, what: str
) -> float:
    """Coin i from the given ones, else a fresh draw from ``rng`` (an error without one).

    Shared by every step that replays given coins (rounds here, candidates in
    :mod:`specdec_core.variants`).
    """
    if i < len(uniforms):
        return float(uniforms[i])
    if rng is None:
        raise InvalidParameterError(f"{what} is needed but was not given, and no rng was passed.")
    return float(rng.random())


def _check_steps(
    p_target: np.ndarray,
    q_draft: np.ndarray,
    draft_tokens: tuple[int, ...],
    coins: Sequence[float],
    rng: np.random.Generator | None,
) -> tuple[RoundStep, ...]:
    """Positions 1, 2, ... keep x_i while u_i < min(1, p_i(x_i) / q_i(x_i)).

    Leviathan et al. 2023, Algorithm 1: stop at the first rejection. A coin is
    taken (or drawn) only for a position that is checked.
    """
    idx = np.arange(len(draft_tokens))
    p_x, q_x = p_target[idx, draft_tokens], q_draft[idx, draft_tokens]  # (K,), (K,)
    accept = np.atleast_1d(acceptance_probability(p_x, q_x))  # (K,) one vectorised call
    steps: list[RoundStep] = []
    for i, x in enumerate(draft_tokens):
        px, qx, a = float(p_x[i]), float(q_x[i]), float(accept[i])
        u = take_coin(coins, i, rng, f"the coin for position {i + 1}")
        step = RoundStep(
            position=i,
            token=x,
            p_x=px,
            q_x=qx,
            ratio=px / qx,
            acceptance_probability=a,
            coin=u,
            accepted=u < a,
        )
        steps.append(step)
        if not step.accepted:
            break
    return tuple(steps)


def decide_round(
    p_target: np.ndarray,
    q_draft: np.ndarray,
    draft_tokens: tuple[int, ...],
    *,
    coins: Sequence[float] = (),
    final_token: int | None = None,
    rng: np.random.Generator | None = None,
) -> RoundResult:
    """The acceptance rule, once: the decisions of one round on checked inputs.

    Leviathan et al. 2023, Algorithm 1 (seed 000, Steps 3-6): keep x_i while
    u_i < min(1, p_i(x_i) / q_i(x_i)); at the first rejection i emit a sample of
    norm(max(0, p_i - q_i)), and after K kept drafts the bonus from p_{K+1}.
    p_target (K+1, V) and q_draft (K, V) are valid rows, draft_tokens K ids with
    q > 0, coins up to K uniforms in [0, 1): nothing is checked here (see
    :func:`validate_round`). Missing coins and the final uniform are drawn
    from ``rng`` in order (one per checked position, then one), so a seeded
    ``rng`` replays the round. A given ``final_token`` is used as it is.
    """
    k = len(draft_tokens)
    steps = _check_steps(p_target, q_draft, draft_tokens, coins, rng)
    n_accepted = len(steps) - (not steps[-1].accepted) if steps else 0
    if n_accepted < k:
        kind: FinalKind = "resample"
        leftover, dist = _residual(p_target[n_accepted], q_draft[n_accepted])  # (V,), (V,)
    else:
        kind, leftover, dist = "bonus", None, p_target[k].copy()
    u_final = None if final_token is not None else take_coin((), 0, rng, f"the {kind} token")
    token = int(sample_index(dist, u_final)) if final_token is None else int(final_token)
    return RoundResult(
        k_drafts=k,
        draft_tokens=draft_tokens,
        steps=steps,
        n_accepted=n_accepted,
        final_kind=kind,
        final_position=n_accepted,
        final_token=token,
        final_coin=u_final,
        final_distribution=dist,
        residual_unnormalised=leftover,
        emitted_tokens=draft_tokens[:n_accepted] + (token,),
    )


def _draft_rows(q_rows) -> np.ndarray:
    """Checked draft rows (K, V): K in 1..MAX_K, each row a distribution."""
    q_arr = as_float_array(q_rows, "q_rows: not a table of numbers")
    if q_arr.ndim != 2:
        raise InvalidDistributionError(f"q_rows must have shape (K, V), got {q_arr.shape}.")
    return validate_rows(q_arr, "q", check_k(q_arr.shape[0]))


def _shown(value: object, width: int = 20) -> str:
    """A value for an error message, cut to ``width`` characters (a huge int stays short)."""
    plain = value.item() if isinstance(value, np.generic) else value  # np.int64(3) -> 3
    text = str(plain) if type(plain) is int else repr(plain)
    return text if len(text) <= width else text[:width] + "…"


def _token_ids(draft_tokens) -> list:
    """The entries of a flat list of token ids, or an error for text and non-lists."""
    if isinstance(draft_tokens, (str, bytes)):
        raise InvalidParameterError("draft_tokens must be a list of token ids, got text.")
    try:
        return list(draft_tokens)
    except TypeError:
        raise InvalidParameterError(
            f"draft_tokens must be a list of token ids, got {_shown(draft_tokens)}."
        ) from None


def _token_id(x, v: int, what: str) -> int:
    """``x`` as a token id: a whole number (not a bool) in 0..V-1, else an error naming ``what``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise InvalidParameterError(
            f"{what} is {_shown(x)}; token ids are whole numbers from 0 to {v - 1}."
        )
    if not 0 <= x < v:
        raise InvalidParameterError(f"{what} is {_shown(x)}; token ids run from 0 to {v - 1}.")
    return int(x)


def _check_draft_tokens(draft_tokens, q_draft: np.ndarray) -> tuple[int, ...]:
    """K whole-number token ids in 0..V-1, each with q_i(x_i) > 0 (the draft could sample it)."""
    k, v = q_draft.shape
    entries = _token_ids(draft_tokens)
    if len(entries) != k:
        raise InvalidParameterError(f"draft_tokens: got {len(entries)} tokens for K = {k}.")
    tokens = tuple(
        _token_id(x, v, f"draft token at position {i + 1}") for i, x in enumerate(entries)
    )
    for i, x in enumerate(tokens):
        _check_drafted(q_draft[i, x], f"draft token at position {i + 1} (id {x})")
    return tokens


def _check_drafted(q_x: float, what: str) -> None:
    """A drafted token has q(x) > 0, else the draft cannot have sampled it."""
    if q_x <= 0:
        raise InvalidParameterError(
            f"{what} has q = 0: the draft cannot have sampled it. Pick a token with q > 0."
        )


def _check_final_token(dist: np.ndarray, token: int, where: str) -> None:
    """A given final token has probability > 0 under ``dist``, the distribution it is drawn from."""
    if dist[token] <= 0:
        raise InvalidParameterError(
            f"final token {token} has probability 0 under {where}; choose a token with "
            "positive probability there."
        )


def check_coins(
    uniforms, n_max: int, *, count: str = "K", per: str = "draft position"
) -> tuple[float, ...]:
    """Up to ``n_max`` coins in [0, 1) from a list, tuple or 1-D array (None: no coins).

    ``count`` and ``per`` name the limit in messages: "K" coins, one per
    "draft position" for a round; "m", one per "candidate" for multi-draft.
    """
    if uniforms is None:
        return ()
    arr = as_float_array(uniforms, "uniforms: not a list of numbers", InvalidParameterError)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"uniforms must be a list of up to {count} = {n_max} coins such as [0.5, 0.72], "
            f"got an array of shape {arr.shape}."
        )
    if arr.size > n_max:
        raise InvalidParameterError(
            f"uniforms: got {arr.size} coins for {count} = {n_max}; give at most one per {per}."
        )
    for i, u in enumerate(arr.tolist(), start=1):
        if not 0.0 <= u < 1.0:
            raise InvalidParameterError(f"uniforms: coin {i} is {u!r}; coins lie in [0, 1).")
    return tuple(arr.tolist())


@dataclass(frozen=True)
class RoundInputs:
    """The checked inputs of one round, ready for :func:`decide_round`."""

    p_target: np.ndarray  # (K+1, V)
    q_draft: np.ndarray  # (K, V)
    draft_tokens: tuple[int, ...]  # (K,)
    coins: tuple[float, ...]  # up to K uniforms in [0, 1)
    final_token: int | None = None  # a token id in 0..V-1, or None to draw it


def validate_round(p_rows, q_rows, draft_tokens, uniforms=None, final_token=None) -> RoundInputs:
    """Check one round's inputs; raise a :class:`SpecDecError` naming what is wrong.

    q_rows (K, V) with K in 1..MAX_K, p_rows (K+1, V), every row a
    distribution; K draft ids with q_i(x_i) > 0; up to K coins in [0, 1);
    a final token id in 0..V-1 or None.
    """
    q_draft = _draft_rows(q_rows)  # (K, V)
    k, v = q_draft.shape
    return RoundInputs(
        p_target=validate_rows(p_rows, "p", k + 1, v),  # (K+1, V)
        q_draft=q_draft,
        draft_tokens=_check_draft_tokens(draft_tokens, q_draft),
        coins=check_coins(uniforms, k),
        final_token=None if final_token is None else _token_id(final_token, v, "final token"),
    )


def verify_round(
    p_rows,
    q_rows,
    draft_tokens,
    *,
    uniforms: Sequence[float] | None = None,
    final_token: int | None = None,
    rng: np.random.Generator | None = None,
) -> RoundResult:
    """Verify K drafted tokens against the target: Leviathan et al. 2023, Alg. 1.

    p_rows: (K+1, V) target distributions at positions 1..K+1 (the last row
    is the bonus position); q_rows: (K, V) draft distributions the drafts
    were sampled from; draft_tokens: (K,) ids with q > 0. Position i keeps
    x_i iff u_i < min(1, p_i(x_i)/q_i(x_i)). The first rejection at i emits
    a sample of norm(max(0, p_i - q_i)); if all K are kept the bonus comes
    from p_{K+1}. ``uniforms`` (up to K coins) and ``final_token`` replay a
    given round (seed 000's "suppose it comes up 0.72"); what is not given is
    drawn from ``rng``. Checks the inputs (:func:`validate_round`), then
    decides with the one kernel, :func:`decide_round`.
    """
    checked = validate_round(p_rows, q_rows, draft_tokens, uniforms, final_token)
    result = decide_round(
        checked.p_target,
        checked.q_draft,
        checked.draft_tokens,
        coins=checked.coins,
        final_token=checked.final_token,
        rng=rng,
    )
    if checked.final_token is not None:
        where = f"the {result.final_kind} distribution"
        _check_final_token(result.final_distribution, result.final_token, where)
    return result


def draft_from(q_rows, rng: np.random.Generator) -> tuple[int, ...]:
    """Sample the K draft tokens x_i ~ q_i, one per row of q_rows (K, V)."""
    q_draft = _draft_rows(q_rows)  # (K, V)
    return tuple(int(sample_index(row, rng.random())) for row in q_draft)
