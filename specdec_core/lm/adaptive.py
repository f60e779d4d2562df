"""Cost-aware adaptive draft length: draft while one more token pays for itself (issue 20).

**Costs.** In units of one plain target step: a draft call costs c; a round that checks n
drafts pays v(n) for the target call on n + 1 tokens, the accept / reject decisions and
the rollback (v(0) is a plain step inside the engine). :class:`CostProfile` holds them as
measured on the running machine (:func:`specdec_core.lm.costs.measure_costs`).

**Tokens.** With p_j the draft's own estimate that its j-th token is kept given that all
before it were, a round of n drafts emits on average (Leviathan et al. 2023, Eq. 1 with
a rate per position) E_n = 1 + sum_{i <= n} prod_{j <= i} p_j tokens.

**The rule (renewal-reward).** Rounds repeat, and the long-run speed is E[tokens of a
round] / E[cost of a round] (the renewal-reward theorem). Its best value R* is reached by
the policy that, in every round, maximises E_n - R* C(n) (Dinkelbach's argument: at the
best ratio R*, max E[tokens - R* cost] = 0, and no per-round choice can beat it). So:

- a draft that knows its guesses (prompt lookup, the choice table: one call a round,
  C(n) = c + v(n)) drafts n = argmax_n E_n - R C(n) (:func:`best_draft_length`), and
  stops computing guesses once no longer draft could pay (:func:`could_pay_later`);
- a model draft pays c for every row it computes (C(n) = c min(n + 1, K) + v(n)) and
  must decide each position before it draws the token there (see Losslessness): it
  drafts position n + 1 when some length m > n would pay if the positions after n + 1
  were kept as often as the row of n + 1 promises (:func:`one_more_pays`), and computes
  a first row only when the first rows of earlier rounds promise as much
  (:meth:`AdaptiveState.worth_looking`).

R* is not known in advance: the engine uses this run's own rate so far (tokens emitted /
cost spent, from a prior of plain decoding), never below 1 / v(0), the rate of plain
decoding, which is always available (:class:`AdaptiveState`). The per-round ratio rule
E_{n+1} / C(n+1) > E_n / C(n) is the same test with R = E_n / C(n), this round's own
ratio: it maximises each round's ratio instead of the run's, and drafts too little after
a cheap start; the renewal form is the one that maximises tokens per unit of cost.

**Where the estimates come from.** A model draft offers its own next-token row q before
it samples: at T = 0 the top probability of softmax(logits) (T = 1), at T > 0 the chance
that its sample is a token it believes in, sum_x q(x)^2 = E_{x ~ q}[q(x)]
(:func:`row_confidence`). A draft without a model offers measured hit rates with each
guess (``Proposer.keep_chances``: prompt lookup by match length, the choice table by its
share). Both are calibrated on the run itself: a factor kappa = (sum of sum_x min(p, q)
at the positions the target checked) / (sum of the estimates there), from a prior of 1.

**Losslessness.** The number of drafted positions may depend on everything committed
before the round and on the draft's rows, never on the target's rows of this round, and
the decision to check position i must be made before x_i is drawn. Then, given the
prefix, position i's token is either a checked draft (kept with min(1, p/q), else
resampled from the residual: distributed as p) or drawn from p: distributed as p in
both cases, so the emitted text follows the target exactly (Leviathan et al. 2023,
Thm 3.5, applied position by position). A length that peeks at p selects which tokens
are checked by how the target rates them (drop the drafts p dislikes, and the tokens
the draft proposes reach the text more often than p allows); a length chosen by q(x_i)
of the drawn token does the same through x_i. (A lookup draft's guesses are a fixed
function of the committed text, with q one-hot on them: choosing its length after
reading all of them reads only the prefix.) The tests show both failing a chi-square
(``tests/core/lm/test_adaptive.py``). At T = 0 every choice is the target's argmax, so
the output is the target's greedy output whatever the length.

Related rules: Leviathan et al. 2023, Sec. 3.5 (a per-round oracle gamma would give up to
~60 % more speedup); SpecDec++ (Huang et al. 2024: stop when the predicted chance of a
rejection passes a threshold); EAGLE-2 (Li et al. 2024: grow the draft tree by the
draft's confidence); Hugging Face assisted generation (``num_assistant_tokens_schedule``
"heuristic": +2 after a fully accepted round, -1 otherwise, and
``assistant_confidence_threshold``). Here the threshold is not tuned: it is the price of
one more token on this machine.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError

PRIOR_ROUNDS = 4.0  # weight of the plain-decoding prior in the rate R, in rounds
PRIOR_CHECKS = 4.0  # weight of kappa = 1 in the calibration, in checked positions
PRIOR_CHECKS_MEASURED = 30.0  # the same where the estimates are measured hit rates at this T
# The calibration forgets: every round multiplies its evidence by FORGET (a memory of
# about 1 / (1 - FORGET) = 25 rounds). A draft whose estimates ran high and that then
# stopped drafting would otherwise never be checked again; as the evidence fades, kappa
# returns to 1 and the draft tries again. Text changes too (a loop starts or ends).
FORGET = 0.96
# kappa is kept apart for raw estimates below 0.3, 0.3-0.5, 0.5-0.7 and above: how far an
# estimate runs high depends on the estimate (at T = 1 a sure lookup match is kept about
# half as often as at T = 0, a weak table guess nearly as often), so one factor for all
# would overrate exactly the guesses the rule picks. Each bin starts from the overall kappa.
BIN_EDGES = (0.3, 0.5, 0.7)
# A lookup draft stops computing guesses once the chance of reaching the next one (the
# product of its raw estimates so far) is below this: on held-out text (the half that
# tools/measure_draft_hits.py does not read) the plan then picks the same lengths, the
# priced speed within 0.1 %, from 5.3 guesses a round instead of 8 (a table guess costs
# a few microseconds, a verify row about 0.5 ms: the saving is the point, not the limit).
GUESS_FLOOR = 0.1
MAX_COST = 1000.0  # a cost above this many plain steps is a measurement gone wrong


@dataclass(frozen=True)
class CostProfile:
    """What drafting and verifying cost on this machine, in plain target steps.

    ``verify[k]`` = v(k), k = 0..K: a round's target call on k + 1 tokens, its decisions
    and the rollback; ``draft`` = c: one draft call (one a token for a model draft, one a
    round for a draft that proposes all its guesses at once: ``per_token`` False).
    """

    pair: str
    draft: float  # c
    verify: tuple[float, ...]  # v(0..K)
    per_token: bool  # True: a model draft (one call per drafted token)
    step_s: float = math.nan  # CPU seconds of one plain target step, as measured
    temperature: float = 0.0  # the decisions measured (argmax at 0, coins above)
    kernel: str = "unknown"  # the BLAS kernels in use (blas.blas_kernel)
    clock: str = "time.thread_time"

    @property
    def k_max(self) -> int:
        return len(self.verify) - 1


def check_costs(costs: CostProfile, k: int, *, per_token: bool) -> CostProfile:
    """``costs`` if it prices a draft of this kind up to K = k, else a clear error."""
    if not isinstance(costs, CostProfile):
        raise InvalidParameterError(
            f"adaptive drafting needs a CostProfile (specdec_core.lm.measure_costs), "
            f"got {type(costs).__name__}."
        )
    if costs.k_max < k:
        raise InvalidParameterError(
            f"the costs hold v(k) for k = 0..{costs.k_max} but K = {k}; measure them up "
            f"to K = {k} or draft at most {costs.k_max}."
        )
    values = (costs.draft, *costs.verify)
    bad = [i for i, x in enumerate(values) if not (math.isfinite(x) and 0 <= x <= MAX_COST)]
    if bad:
        what = "c" if bad[0] == 0 else f"v({bad[0] - 1})"
        raise InvalidParameterError(
            f"cost {what} = {values[bad[0]]!r}; allowed: a finite number from 0 to {MAX_COST:g} "
            "plain steps."
        )
    if costs.verify[0] <= 0:
        raise InvalidParameterError("cost v(0) is 0; a plain step cannot be free.")
    if costs.per_token != per_token:
        kinds = ("a draft that proposes all its guesses in one call", "a model draft")
        raise InvalidParameterError(
            f"the costs were measured for {kinds[costs.per_token]} but this draft is "
            f"{kinds[per_token]}; measure them for this pair."
        )
    return costs


def expected_tokens_by_length(keep: Sequence[float]) -> np.ndarray:
    """E_n = 1 + sum_{i <= n} prod_{j <= i} p_j for n = 0..len(keep): (len(keep) + 1,).

    Leviathan et al. 2023, Eq. 1 with a separate rate p_j per position (p_j conditional
    on the drafts before it being kept).
    """
    chance = np.cumprod(np.asarray(keep, dtype=np.float64))  # prod_{j <= i} p_j
    return np.concatenate([[1.0], 1.0 + np.cumsum(chance)])


def round_costs(costs: CostProfile, k: int) -> list[float]:
    """C(n) for n = 0..k, in plain steps: what a round of n drafts costs.

    A draft that guesses all at once (one call a round): C(n) = c + v(n). A model draft
    (one call per row): C(n) = c min(n + 1, K) + v(n), the row after the last draft
    included (it decided to stop; none at n = K). Plain floats: the engine reads them
    every round, and numpy's per-call cost on 9 numbers is larger than the arithmetic.
    """
    if not costs.per_token:
        return [costs.draft + v for v in costs.verify[: k + 1]]
    return [costs.draft * min(n + 1, k) + costs.verify[n] for n in range(k + 1)]


def best_draft_length(keep: Sequence[float], cost: Sequence[float], rate: float) -> int:
    """n = argmax_{0 <= n <= len(keep)} E_n - R C(n), the shorter on ties.

    The renewal-reward choice for a draft that knows all its guesses (module docstring);
    ``cost`` = C(0..K) of :func:`round_costs`.
    """
    best, best_gain, tokens, chance = 0, 1.0 - rate * cost[0], 1.0, 1.0
    for n, p in enumerate(keep, start=1):
        chance *= p
        tokens += chance  # E_n
        if tokens - rate * cost[n] > best_gain:
            best, best_gain = n, tokens - rate * cost[n]
    return best


def next_round_gain(chances: Sequence[float], start: int, price: Sequence[float]) -> float:
    """G = max_{0 <= m <= K} E_m - R C(m) of a round whose guesses are chances[start:].

    ``price`` = R C(0..K); ``chances`` must reach index start + K - 1
    (:func:`plan_draft_length` repeats the last computed guess's chance past the end).
    """
    best, tokens, chance = 1.0 - price[0], 1.0, 1.0
    for m in range(1, len(price)):
        chance *= chances[start + m - 1]
        tokens += chance  # E_m of that round
        if tokens - price[m] > best:
            best = tokens - price[m]
    return best


def plan_draft_length(keep: Sequence[float], cost: Sequence[float], rate: float) -> int:
    """n = argmax_n E_n - R C(n) + P_{n+1} G_{n+2}, 0 <= n <= len(keep), the shorter on ties.

    The renewal-reward choice with one round of lookahead, for a draft that knows all its
    guesses (module docstring): P_{n+1} = prod_{j <= n+1} p_j is the chance that the n
    drafts are kept and guess n + 1 equals the target's token after them, so that the
    next round starts on guesses n + 2, n + 3, ... already known; G_{n+2} =
    :func:`next_round_gain` of those guesses (the last one's chance repeated past the
    end) is that round's best gain. ``cost`` = C(0..K) of :func:`round_costs`; ``keep`` =
    the calibrated p_1.. (:meth:`AdaptiveState.chances`). Since G <= max_m (m + 1 - R C(m)),
    a length whose value cannot reach the best found even with that bound skips its G
    (the same result, with a few G computed instead of K + 1).
    """
    if not keep:
        return 0
    k = len(cost) - 1
    price = [rate * c for c in cost]  # R C(m)
    sure = max([m + 1 - p for m, p in enumerate(price)])  # G of a round of sure guesses
    chances = [*keep, *[keep[-1]] * (2 * k + 2)]
    now, carry, tokens, chance = [], [], 1.0, 1.0  # E_n - R C(n), P_{n+1}
    for n in range(min(len(keep), k) + 1):
        if n:
            chance *= keep[n - 1]
            tokens += chance  # E_n
        now.append(tokens - price[n])
        carry.append(chance * chances[n])
    first = best_draft_length(keep[:k], cost, rate)  # the myopic choice: its value prunes
    best, best_value = first, now[first] + carry[first] * next_round_gain(chances, first + 1, price)
    for n in range(len(now)):
        if n == first or now[n] + carry[n] * sure < best_value:
            continue
        value = now[n] + carry[n] * next_round_gain(chances, n + 1, price)
        if value > best_value or (value == best_value and n < best):
            best, best_value = n, value
    return best


def one_more_pays(chance: float, keep: float, n: int, cost: Sequence[float], rate: float) -> bool:
    """Draft position n + 1 (model draft)? True iff some m in n+1..K has
    sum_{j=n+1}^{m} chance keep^(j-n) > R (C(m) - C(n)).

    ``chance`` = prod_{j <= n} p_j, ``keep`` = p_{n+1}, the row's calibrated estimate,
    ``cost`` = C(0..K). The positions after n + 1 are not seen yet; they are projected to
    be kept as often as this one (a draft's confidence persists along a phrase). The
    decision is final: a position once drafted is checked (dropping it for what later
    rows say would select on x_{n+1}, which those rows read).
    """
    gain = 0.0
    for m in range(n + 1, len(cost)):
        chance *= keep
        gain += chance  # extra tokens of drafting up to m
        if gain > rate * (cost[m] - cost[n]):
            return True
    return False


def row_confidence(logits_row: np.ndarray, q_row: np.ndarray | None, temperature: float) -> float:
    """The model draft's own estimate that its next token is kept, before it draws it.

    T = 0: max_x softmax(logits)(x), the probability the draft gives its argmax (the
    drafted token). T > 0: sum_x q(x)^2 = E_{x ~ q}[q(x)] for q = softmax(logits / T),
    the row the token will be drawn from. Both read only the draft's row.
    """
    if temperature == 0.0:
        z = np.asarray(logits_row, dtype=np.float64)
        e = np.exp(z - z.max())
        return float(1.0 / e.sum())  # e at the argmax is exp(0) = 1
    return float(np.dot(q_row, q_row))


def estimate_bin(estimate: float) -> int:
    """The calibration bin of a raw estimate: how many of BIN_EDGES it reaches."""
    return bisect_right(BIN_EDGES, estimate)


@dataclass
class AdaptiveState:
    """The run's own rate R and calibration kappa, updated after every round.

    R = (tokens emitted + PRIOR_ROUNDS) / (cost spent + PRIOR_ROUNDS v(0)), at least
    1 / v(0). kappa = (overlap at checked positions + PRIOR_CHECKS) / (estimates there +
    PRIOR_CHECKS) overall, and per bin of the raw estimate (BIN_EDGES) the same ratio
    with the overall kappa as its prior; the overlap of a checked position is
    sum_x min(p, q), its expected chance of being kept. Each round's evidence is weighted
    FORGET^(its age in rounds), and so is the mean first-row estimate. All read finished
    rounds only (never the round being decided).
    """

    costs: CostProfile
    k: int
    tokens: float = PRIOR_ROUNDS
    spent: float = math.nan
    observed: list[float] = field(default_factory=lambda: [0.0] * (len(BIN_EDGES) + 1))
    predicted: list[float] = field(default_factory=lambda: [0.0] * (len(BIN_EDGES) + 1))
    first: list[float] = field(default_factory=lambda: [0.0, 0.0])  # faded sum, count of p_1
    rates: list[float] = field(default_factory=list)  # R used in each round
    cost: list[float] = field(init=False)  # C(0..K)
    rate: float = field(init=False)
    calibration: float = 1.0  # the overall kappa
    kappas: list[float] = field(default_factory=lambda: [1.0] * (len(BIN_EDGES) + 1))
    prior_checks: float = PRIOR_CHECKS  # the weight of kappa = 1 (see PRIOR_CHECKS)

    def __post_init__(self) -> None:
        if math.isnan(self.spent):
            self.spent = PRIOR_ROUNDS * self.costs.verify[0]
        self.cost = round_costs(self.costs, self.k)
        self.rate = max(self.tokens / self.spent, 1.0 / self.costs.verify[0])

    def chances(self, estimates: Sequence[float]) -> list[float]:
        """Calibrated estimates: min(1, kappa_bin * estimate)."""
        kappas, edges = self.kappas, BIN_EDGES
        return [min(1.0, kappas[bisect_right(edges, e)] * e) for e in estimates]

    def more_guesses(self, estimates: Sequence[float]) -> bool:
        """Should a lookup draft compute another guess after these? While it has fewer than
        K and the chance of reaching the next, prod p_j of the raw estimates, is at least
        GUESS_FLOOR (a guess the round is unlikely to reach changes no length)."""
        return len(estimates) < self.k and math.prod(estimates) >= GUESS_FLOOR

    def worth_looking(self) -> bool:
        """Compute a model draft's first row (cost c)? As :func:`one_more_pays` from no
        draft at all (cost v(0)), with p_1 projected by the mean of earlier first rows
        (faded like kappa, from a prior of one sure row: a draft that stopped looking
        looks again once the evidence against it has faded)."""
        if self.k == 0:
            return False
        keep = self.chances([(self.first[0] + 1.0) / (self.first[1] + 1.0)])[0]
        return one_more_pays(1.0, keep, 0, [self.costs.verify[0], *self.cost[1:]], self.rate)

    def record(self, calls: int, n_drafts: int, emitted: int, checked, first) -> None:
        """Add a finished round: its draft calls, drafts and tokens emitted; ``checked`` =
        (raw estimate, sum_x min(p, q)) of each position the target checked; ``first`` =
        the raw estimate of its first row (None if none computed)."""
        c = self.costs
        self.rates.append(self.rate)
        self.first[0] = FORGET * self.first[0] + (first or 0.0)
        self.first[1] = FORGET * self.first[1] + (first is not None)
        self.spent += c.draft * (calls if c.per_token else min(1, calls)) + c.verify[n_drafts]
        self.tokens += emitted
        self.rate = max(self.tokens / self.spent, 1.0 / c.verify[0])
        obs = [o * FORGET for o in self.observed]
        pred = [e * FORGET for e in self.predicted]
        for estimate, overlap in checked:
            b = bisect_right(BIN_EDGES, estimate)
            obs[b] += overlap
            pred[b] += estimate
        self.observed, self.predicted = obs, pred
        prior = self.prior_checks
        kappa = (sum(obs) + prior) / (sum(pred) + prior)
        self.calibration = kappa
        bins = zip(obs, pred, strict=True)
        self.kappas = [(o + prior * kappa) / (e + prior) for o, e in bins]
