"""Closed-form speed of speculative decoding (the i.i.d. model).

Assumption (Leviathan et al. 2023, Sec. 3.3): every draft token is accepted
independently with the same probability alpha. Then the number of tokens a
round emits is n_accepted + 1 with P(n_accepted = n) = alpha^n (1 - alpha)
for n < K and alpha^K for n = K. Costs: c_q per draft step, c_p per target
pass (a pass over K+1 positions costs one target step, as on a memory-bound
GPU). All functions are vectorised over numpy arrays for plotting.
"""

from __future__ import annotations

import numpy as np

from .distributions import as_float_array, check_k
from .errors import MAX_K_THEORY, InvalidParameterError


def _alpha(alpha) -> np.ndarray:
    """Checked acceptance rate(s) alpha in [0, 1], as a float array."""
    a = as_float_array(alpha, "alpha must be a number in [0, 1]", InvalidParameterError)
    if not np.all(np.isfinite(a) & (a >= 0) & (a <= 1)):
        raise InvalidParameterError("alpha must lie in [0, 1] (it is a probability).")
    return a


def _k(k) -> np.ndarray:
    """Checked draft length(s) K, whole numbers in 1..MAX_K_THEORY, as an int array."""
    try:
        k_arr = np.asarray(k)
    except (ValueError, OverflowError):  # ragged nested lists
        raise InvalidParameterError(f"K must be a whole number, got {k!r}.") from None
    if k_arr.dtype.kind not in "iu" and not (
        k_arr.dtype.kind == "f" and np.all(np.isfinite(k_arr)) and np.all(k_arr == np.round(k_arr))
    ):
        raise InvalidParameterError(f"K must be a whole number, got {k!r}.")
    if np.any(k_arr < 1) or np.any(k_arr > MAX_K_THEORY):
        raise InvalidParameterError(f"K is out of range; allowed: 1 to {MAX_K_THEORY}.")
    return k_arr.astype(np.int64)


def _costs(c_q, c_p) -> tuple[np.ndarray, np.ndarray]:
    """Checked costs: c_q >= 0 per draft step, c_p > 0 per target pass (float arrays)."""
    cq = as_float_array(c_q, "c_q (cost of one draft step) must be a number", InvalidParameterError)
    cp = as_float_array(
        c_p, "c_p (cost of one target pass) must be a number", InvalidParameterError
    )
    if not np.all(np.isfinite(cq) & (cq >= 0)):
        raise InvalidParameterError("c_q (cost of one draft step) must be a finite number >= 0.")
    if not np.all(np.isfinite(cp) & (cp > 0)):
        raise InvalidParameterError("c_p (cost of one target pass) must be a finite number > 0.")
    return cq, cp


def _out(x: np.ndarray):
    """A float for a 0-d result, the array otherwise."""
    return float(x) if x.ndim == 0 else x


def expected_tokens(alpha, k):
    """E[tokens per round] = (1 - alpha^(K+1)) / (1 - alpha) = sum_{i=0}^{K} alpha^i.

    Leviathan et al. 2023, Eq. 1; seed 003 Ex 1 and Ex 3. At alpha = 1 the
    0/0 is replaced by its limit K + 1; near 1 the numerator is computed as
    -expm1((K+1) log1p(alpha - 1)), so there is no cancellation and no NaN.
    """
    a, k_arr = np.broadcast_arrays(_alpha(alpha), _k(k))
    with np.errstate(divide="ignore", invalid="ignore"):
        numerator = -np.expm1((k_arr + 1) * np.log1p(a - 1.0))
        value = np.where(a < 1.0, numerator / (1.0 - a), k_arr + 1.0)
    return _out(value.astype(np.float64))


def speedup(alpha, k, c_q, c_p):
    """Wall-clock speedup over target-only decoding: c_p E / (K c_q + c_p).

    Seed 003 Ex 7; the same as Leviathan et al. 2023, Thm 3.8 with
    c = c_q / c_p: (1 - alpha^(K+1)) / ((1 - alpha)(K c + 1)). Limits: K+1
    times c_p / (K c_q + c_p) as alpha -> 1, and c_p / (K c_q + c_p) as
    alpha -> 0 (no gain; below 1 when the draft costs anything).
    """
    cq, cp = _costs(c_q, c_p)
    e = np.asarray(expected_tokens(alpha, k))
    return _out(cp * e / (_k(k) * cq + cp))


def time_per_token(alpha, k, c_q, c_p):
    """Effective time per emitted token: (K c_q + c_p) / E (seed 003 Ex 8)."""
    cq, cp = _costs(c_q, c_p)
    e = np.asarray(expected_tokens(alpha, k))
    return _out((_k(k) * cq + cp) / e)


def speedup_limit(alpha: float, c_q: float, c_p: float) -> float:
    """The speedup as K grows without bound: lim_{K -> inf} c_p E / (K c_q + c_p).

    From :func:`speedup` (seed 003 Ex 7): E tends to 1 / (1 - alpha) for alpha < 1
    and grows as K + 1 for alpha = 1, while the cost K c_q + c_p grows linearly when
    c_q > 0. So the limit is c_p / c_q = 1/c at alpha = 1 with c_q > 0 (a cap that is
    never reached), inf at alpha = 1 with a free draft, 1 / (1 - alpha) for a free
    draft with alpha < 1, and 0 otherwise (then the best K is finite). Scalars only.
    """
    a = float(_alpha(alpha))
    cq, cp = (float(x) for x in _costs(c_q, c_p))
    if a == 1.0:
        return cp / cq if cq > 0 else float("inf")
    return 1.0 / (1.0 - a) if cq == 0 else 0.0


def optimal_k(alpha, c_q, c_p, *, k_max: int = 16):
    """The K in 1..k_max that maximises :func:`speedup` (the smallest on ties).

    Vectorised over ``alpha`` (and broadcastable costs); returns ints.
    """
    k_max = check_k(k_max, k_max=MAX_K_THEORY, name="k_max")
    ks = np.arange(1, k_max + 1)  # (k_max,)
    a = _alpha(alpha)
    cq, cp = _costs(c_q, c_p)
    grid = speedup(a[..., None], ks, cq[..., None], cp[..., None])  # (..., k_max)
    best = ks[np.argmax(grid, axis=-1)]  # argmax returns the first maximum
    return int(best) if best.ndim == 0 else best


def tokens_per_round_distribution(alphas) -> np.ndarray:
    """P(a round emits n + 1 tokens), n = 0..K, for per-position acceptance rates.

    With alpha_i the chance that position i keeps its draft:
    P(n) = alpha_1 ... alpha_n (1 - alpha_{n+1}) for n < K and
    alpha_1 ... alpha_K for n = K (the bonus). For equal alphas this is the
    truncated geometric law alpha^n (1 - alpha) of Leviathan et al. 2023.
    Returns (K+1,) probabilities for 1..K+1 emitted tokens.
    """
    a = _alpha(alphas).reshape(-1)  # (K,)
    check_k(a.size, k_max=MAX_K_THEORY)
    reach = np.concatenate([[1.0], np.cumprod(a)])  # (K+1,) P(position n is reached kept-so-far)
    stop = np.concatenate([1.0 - a, [1.0]])  # (K+1,)
    return reach * stop
