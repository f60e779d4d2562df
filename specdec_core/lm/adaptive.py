"""Cost-aware adaptive draft length: draft while one more token pays for itself (issues 20, 27).

**Costs.** In units of one plain target step: a draft call costs c (a model draft: one
row; a draft without a model: all its guesses of a round); the planner's own work (the
estimates, the calibration and the choice of n) costs a (per row of a model draft, per
round of a lookup draft); a round that checks n drafts pays v(n) for the target call on
n + 1 tokens, the accept / reject decisions and the rollback (v(0) is a plain step
inside the engine). :class:`CostProfile` holds them as measured on the running machine
(:func:`specdec_core.lm.costs.measure_costs`).

**Tokens.** With p_j the draft's own estimate that its j-th token is kept given that all
before it were, a round of n drafts emits on average (Leviathan et al. 2023, Eq. 1 with
a rate per position) E_n = 1 + sum_{i <= n} prod_{j <= i} p_j tokens.

**The rule (renewal-reward).** Rounds repeat, and the long-run speed is E[tokens of a
round] / E[cost of a round] (the renewal-reward theorem). Its best value R* is reached by
the policy that, in every round, maximises E_n - R* C(n) (Dinkelbach's argument: at the
best ratio R*, max E[tokens - R* cost] = 0, and no per-round choice can beat it). So:

- a draft that knows its guesses (prompt lookup, the choice table: one call a round,
  C(n) = c + a + v(n)) drafts n = argmax_n E_n - R C(n) (:func:`best_draft_length`), and
  stops computing guesses once the round is unlikely to reach the next one
  (:meth:`AdaptiveState.more_guesses`);
- a model draft pays c + a for every row it computes (C(n) = (c + a) min(n + 1, K) + v(n))
  and must decide each position before it draws the token there (see Losslessness): it
  drafts position n + 1 when some length m > n would pay if the positions after n + 1
  were kept as often as the row of n + 1 promises (:func:`one_more_pays`).

R* is not known in advance: the engine uses this run's own rate so far (tokens emitted /
cost spent, from a prior of plain decoding), never below 1 / v(0), the rate of plain
decoding, which is always available (:class:`AdaptiveState`).

**The guard: step aside when drafting cannot pay** (issue 27). Looking costs c + a before
any draft is checked. Before a round looks, a guard costs a comparison
(:meth:`AdaptiveState.plain_rounds`): a model draft computes a first row only when the
first rows of earlier rounds promise a gain; a lookup draft computes its guesses only when the
gain its recent looks found, G = E_{n*} - 1 - R (v(n*) - v(0)) (a moving average over
its looks, from an optimistic prior), is at least the price of looking, R (c + a).
Otherwise the round is one plain step and spends nothing on guesses or planning. A guard
that is shut still looks once its plain rounds have saved PROBE_SHARE of a plain step each
(a look every (c + a) / (PROBE_SHARE v(0)) rounds), so text that turns repetitive opens it.

**Prices from the run's own clock** (issue 27). With ``CostProfile.own_clock`` (the
default) the engine times every round on the thread's CPU clock (its draft calls, its
planner, its verify with the rollback: ``time.thread_time``, which time spent waiting for
a core does not inflate) and :class:`RunPrices` updates c, a and v(n) from them: each
price is a mean of this run's observations of it (each clipped to [1/2, 2] x the price
it had, so one page fault or collector pause moves it little; older ones fade, PRICE_FORGET
per observation) with the profile's price as a prior of PRICE_PRIOR observations. The
profile's prices are first rescaled by this run's speed (the mean ratio of its verify
times to the profile's), so a price the run has not paid yet moves with those it has.
R is then tokens per CPU second of this run. Without it, the prices stay the profile's
and a run is a function of its seed (the page's step mode replays run mode exactly).

**Where the estimates come from.** A model draft offers its own next-token row q before
it samples: at T = 0 the top probability of softmax(logits) (T = 1), at T > 0 the chance
that its sample is a token it believes in, sum_x q(x)^2 = E_{x ~ q}[q(x)]
(:func:`row_confidence`). A draft without a model offers measured hit rates with each
guess (``Proposer.keep_chances``: prompt lookup by match length, the choice table by its
share). Both are calibrated on the run itself: a factor kappa = (sum of sum_x min(p, q)
at the drafted positions) / (sum of the estimates there), from a prior of 1. Every
drafted position counts, checked or not: the target's row at position i reads the drafts
before it, so its sum_x min(p, q) is the chance that draft i is kept given that those
before it were, which is what the estimate claims (issue 27: three times the evidence of
the checked positions alone, so a draft whose estimates run high at T = 1 learns it in a
few rounds instead of wasting long drafts).

**Losslessness.** The number of drafted positions may depend on everything committed
before the round, on the draft's rows and on anything independent of this round's
target rows (the clock's readings of finished rounds, the guard's counters), never on
the target's rows of this round, and the decision to check position i must be made
before x_i is drawn. Then, given the prefix, position i's token is either a checked
draft (kept with min(1, p/q), else resampled from the residual: distributed as p) or
drawn from p: distributed as p in both cases, so the emitted text follows the target
exactly (Leviathan et al. 2023, Thm 3.5, applied position by position). A length that
peeks at p selects which tokens are checked by how the target rates them (drop the
drafts p dislikes, and the tokens the draft proposes reach the text more often than p
allows); a length chosen by q(x_i) of the drawn token does the same through x_i. (A
lookup draft's guesses are a fixed function of the committed text, with q one-hot on
them: choosing its length after reading all of them reads only the prefix.) The tests
show both failing a chi-square (``tests/core/lm/test_adaptive.py``). At T = 0 every
choice is the target's argmax, so the output is the target's greedy output whatever the
length.

Related rules: Leviathan et al. 2023, Sec. 3.5 (a per-round oracle gamma would give up to
~60 % more speedup); SpecDec++ (Huang et al. 2024: stop when the predicted chance of a
rejection passes a threshold); EAGLE-2 (Li et al. 2024: grow the draft tree by the
draft's confidence); Hugging Face assisted generation (``num_assistant_tokens_schedule``
"heuristic": +2 after a fully accepted round, -1 otherwise, and
``assistant_confidence_threshold``). Here the threshold is not tuned: it is the price of
one more token on this machine, as this run pays it.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

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
# priced speed within 0.1 %, from 5.3 guesses a round instead of 8.
GUESS_FLOOR = 0.1
MAX_COST = 1000.0  # a cost above this many plain steps is a measurement gone wrong
# Prices from the run's clock: a price is the mean of its observations, each weighted
# PRICE_FORGET^(observations of that price since), with the profile's price worth
# PRICE_PRIOR observations; an observation counts at most CLIP x (at least 1 / CLIP x) the
# median of the observations it came with (one page fault moves a price little).
PRICE_FORGET = 0.98
PRICE_PRIOR = 4.0
CLIP = 2.0
# The guard: each look moves the expected gain of looking LOOK_MEMORY of the way to the
# gain it found (a memory of about 1 / LOOK_MEMORY = 5 looks), from LOOK_PRIOR tokens (one
# sure extra token: a run starts by looking). A shut guard spends at most PROBE_SHARE of a
# plain step per round on looking anyway.
LOOK_MEMORY = 0.2
LOOK_PRIOR = 1.0
PROBE_SHARE = 0.01
# A shut guard is asked again after at most this many plain rounds (a model draft's guard
# opens as the evidence against it fades, a round at a time).
GUARD_STRETCH = 8
# A round is booked as one entry; every REFRESH rounds the entries are folded into the
# rate R, the prices, the kappas and a model draft's mean first row.
REFRESH = 8


@dataclass(frozen=True)
class CostProfile:
    """What drafting, planning and verifying cost on this machine, in plain target steps.

    ``verify[k]`` = v(k), k = 0..K: a round's target call on k + 1 tokens, its decisions
    and the rollback; ``draft`` = c: one draft call (one a token for a model draft, one a
    round for a draft that proposes all its guesses at once: ``per_token`` False);
    ``plan`` = a: the planner's work with it (per row, or per round). ``own_clock``: the
    run updates these prices from its own clock as it goes (module docstring); False
    keeps them, so a run depends on its seed alone.
    """

    pair: str
    draft: float  # c
    verify: tuple[float, ...]  # v(0..K)
    per_token: bool  # True: a model draft (one call per drafted token)
    step_s: float = math.nan  # CPU seconds of one plain target step, as measured
    temperature: float = 0.0  # the decisions measured (argmax at 0, coins above)
    kernel: str = "unknown"  # the BLAS kernels in use (blas.blas_kernel)
    clock: str = "time.thread_time"
    plan: float = 0.0  # a
    own_clock: bool = True

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
    values = (costs.draft, costs.plan, *costs.verify)
    bad = [i for i, x in enumerate(values) if not (math.isfinite(x) and 0 <= x <= MAX_COST)]
    if bad:
        what = ("c", "a")[bad[0]] if bad[0] < 2 else f"v({bad[0] - 2})"
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


def whole_round_costs(
    draft: float, verify: Sequence[float], per_token: bool, k: int
) -> list[float]:
    """C(n) for n = 0..k: what a round of n drafts costs, with ``draft`` = c + a.

    A draft that guesses all at once (one call a round): C(n) = c + a + v(n). A model
    draft (one call per row): C(n) = (c + a) min(n + 1, K) + v(n), the row after the
    last draft included (it decided to stop; none at n = K). Plain floats: the engine
    reads them every round, and numpy's per-call cost on 9 numbers is larger than the
    arithmetic.
    """
    if not per_token:
        return [draft + v for v in verify[: k + 1]]
    return [draft * min(n + 1, k) + verify[n] for n in range(k + 1)]


def round_costs(costs: CostProfile, k: int) -> list[float]:
    """C(0..k) of :func:`whole_round_costs` at the profile's prices."""
    return whole_round_costs(costs.draft + costs.plan, costs.verify, costs.per_token, k)


def best_draft_length(keep: Sequence[float], cost: Sequence[float], rate: float) -> int:
    """n = argmax_{0 <= n <= len(keep)} E_n - R C(n), the shorter on ties.

    The renewal-reward choice for a draft that knows all its guesses (module docstring);
    ``cost`` = C(0..K) of :func:`whole_round_costs`.
    """
    return best_gain(keep, cost, rate)[0]


def best_gain(keep: Sequence[float], cost: Sequence[float], rate: float) -> tuple[int, float]:
    """(n*, G): n* of :func:`best_draft_length` and its gain over no draft,
    G = E_{n*} - R C(n*) - (1 - R C(0)) >= 0, in tokens. Stops at len(cost) - 1 guesses."""
    base = 1.0 - rate * cost[0]
    best, best_value, tokens, chance = 0, base, 1.0, 1.0
    for n in range(1, min(len(keep), len(cost) - 1) + 1):
        chance *= keep[n - 1]
        tokens += chance  # E_n
        value = tokens - rate * cost[n]
        if value > best_value:
            best, best_value = n, value
    return best, best_value - base


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


class Calibration:
    """kappa overall and per bin of the raw estimate (BIN_EDGES), from finished rounds.

    kappa = (overlap at drafted positions + prior) / (estimates there + prior) overall,
    and per bin the same ratio with the overall kappa as its prior; the overlap of a
    drafted position is sum_x min(p, q), its chance of being kept given the drafts before
    it (module docstring). Evidence is
    weighted FORGET^(its age in rounds). A round's evidence waits in a batch; every
    REFRESH rounds the batch is folded in (the older evidence faded by the rounds since)
    and the kappas recomputed.
    """

    def __init__(self, prior: float = PRIOR_CHECKS) -> None:
        self.prior = prior  # the weight of kappa = 1 (see PRIOR_CHECKS)
        self.observed = [0.0] * (len(BIN_EDGES) + 1)
        self.predicted = [0.0] * (len(BIN_EDGES) + 1)
        self.overall = 1.0
        self.kappas = [1.0] * (len(BIN_EDGES) + 1)
        self.estimates: list[float] = []  # the batch: raw estimates of checked positions
        self.overlaps: list[float] = []  # and their sum_x min(p, q)

    def chances(self, estimates: Sequence[float]) -> list[float]:
        """Calibrated estimates: min(1, kappa_bin * estimate)."""
        kappas, edges = self.kappas, BIN_EDGES
        return [min(1.0, kappas[bisect_right(edges, e)] * e) for e in estimates]

    def add(self, estimates: Sequence[float], overlaps: Sequence[float]) -> None:
        """A finished round's raw estimates of the positions the target checked and their
        sum_x min(p, q) (``overlaps`` may be longer: only the checked ones count)."""
        n = min(len(estimates), len(overlaps))
        self.estimates.extend(estimates[:n])
        self.overlaps.extend(overlaps[:n])

    def refresh(self, rounds: int) -> None:
        """Fade the evidence by ``rounds`` rounds, fold the batch in, recompute kappa."""
        f = FORGET**rounds
        obs, pred = [o * f for o in self.observed], [e * f for e in self.predicted]
        for estimate, overlap in zip(self.estimates, self.overlaps, strict=True):
            b = bisect_right(BIN_EDGES, estimate)
            obs[b] += overlap
            pred[b] += estimate
        self.observed, self.predicted, self.estimates, self.overlaps = obs, pred, [], []
        prior = self.prior
        kappa = (sum(obs) + prior) / (sum(pred) + prior)
        self.overall = kappa
        self.kappas = [(o + prior * kappa) / (e + prior) for o, e in zip(obs, pred, strict=True)]


@dataclass(frozen=True)
class PriceLedger:
    """A run's prices as planned and as paid, in CPU seconds (sums over its rounds).

    "Planned" is the price the planner held when it chose (the profile's, or learned from
    the run's clock so far); "paid" is what the run's clock read. Index n = 0..K of the
    verify columns: rounds that checked n drafts. A look is a row of a model draft or a
    round in which a lookup draft computed its guesses; its price c + a is planned as
    one. ``unit_s``: the profile's plain step.
    """

    unit_s: float
    own_clock: bool
    per_token: bool
    rounds: tuple[int, ...]  # rounds that looked and checked n drafts
    verify_planned: tuple[float, ...]
    verify_paid: tuple[float, ...]
    plain_rounds: int  # rounds the guard kept plain (no look): v(0) of plain decoding
    plain_planned: float
    plain_paid: float
    looks: int  # rows of a model draft, or rounds that computed guesses
    look_planned: float  # sum of c + a as planned, over the looks
    draft_paid: float  # c as paid: the draft's calls
    plan_paid: float  # a as paid: the planner in rounds that looked
    guard_paid: float  # the planner's seconds in rounds that did not look (guard, bookkeeping)
    shut: int  # rounds the guard kept plain without looking

    @property
    def n_rounds(self) -> int:
        return sum(self.rounds) + self.plain_rounds

    @property
    def planner_per_round(self) -> float:
        """The planner's CPU seconds per round, every round counted (looked or not)."""
        return (self.plan_paid + self.guard_paid) / max(1, self.n_rounds)

    def in_steps(self, unit_s: float | None = None) -> list[tuple[str, int, float, float]]:
        """(what, how many, as planned, as paid) in plain steps of ``unit_s`` seconds (the
        profile's plain step by default): the planner per round (planned: NaN, it is
        priced within c + a), c + a per look, v(n) for every length chosen, a plain round
        of the guard's. Rows with no rounds are left out."""
        unit = self.unit_s if unit_s is None else unit_s
        rows = [("planner", self.n_rounds, math.nan, self.planner_per_round / unit)]
        if self.looks:
            paid = (self.draft_paid + self.plan_paid) / self.looks / unit
            rows.append(("look", self.looks, self.look_planned / self.looks / unit, paid))
        for n, m in enumerate(self.rounds):
            if m:
                planned, paid = self.verify_planned[n] / m / unit, self.verify_paid[n] / m / unit
                rows.append((f"v({n})", m, planned, paid))
        if self.plain_rounds:
            m = self.plain_rounds
            rows.append(("plain", m, self.plain_planned / m / unit, self.plain_paid / m / unit))
        return rows


class RunPrices:
    """v(0..K), the price of a look (c + a) and of a plain round for one run, in CPU
    seconds; the cost C(n) of every length; and a ledger of what was planned and paid.

    Each price starts as the profile's (x its plain step, ``step_s``); with ``own_clock``
    it then learns from the run's clock: price = (PRICE_PRIOR s prior + sum_i w_i x_i) /
    (PRICE_PRIOR + sum_i w_i) over its observations x_i, w_i = PRICE_FORGET^(later
    observations of that price). s, the run's speed scale, is the same mean of the ratios
    paid / profile over the verify prices (clipped to [1/CLIP^2, CLIP^2]): a price not
    paid yet follows those that were. The plain round's prior takes min(1, s): never
    dearer than the profile's plain step, so that on a machine where drafting was always
    chosen a plain step is still tried and its price learned (an option priced too dear
    is never chosen, so its price is never corrected).

    A round appends its observations to a batch; every REFRESH rounds
    (:meth:`AdaptiveState.refresh`) each price's batch is clipped to [1/CLIP, CLIP] x its
    median (one page fault or collector pause moves a price little, a machine the
    profile got wrong moves it at once), folded in, and the prices and C(n) recomputed:
    the engine books every round, and the booking must cost little next to a plain step.
    List index 0..K is v(0..K), K + 1 the look, K + 2 a plain round (the guard's: no
    guesses were read before it, so none disturbed the caches).
    """

    def __init__(self, costs: CostProfile, k: int) -> None:
        unit = costs.step_s if math.isfinite(costs.step_s) and costs.step_s > 0 else 1.0
        self.unit, self.learn, self.per_token, self.k = unit, costs.own_clock, costs.per_token, k
        v, look = costs.verify[: k + 1], costs.draft + costs.plan
        self.prior = [x * unit for x in (*v, look, v[0])]
        self.look, self.plain = k + 1, k + 2  # indices of c + a and of a plain round
        size = k + 3
        self.total, self.weight = [0.0] * size, [0.0] * size  # sum w_i x_i, sum w_i
        self.speed = [0.0, 0.0]  # sum w_i ratio_i, sum w_i
        # rounds since the last refresh: (i, verify seconds, rounds, looks, draft s, plan s)
        self.batch: list[tuple[int, float, int, int, float, float]] = []
        self.paid = [0.0] * size  # the ledger: seconds paid (verify per n, draft calls, plain)
        self.planned = [0.0] * size  # the ledger: seconds planned
        self.counts = [0] * size  # the ledger: rounds per n, looks, plain rounds
        self.other = [0.0, 0.0, 0]  # the ledger: planner seconds looking / not; rounds shut
        self.now = list(self.prior)
        self.refresh()

    def refresh(self) -> None:
        """Fold the batch into the ledger and (``own_clock``) the prices, then recompute
        the prices (``now``) and C(0..K)."""
        seen: dict[int, tuple[list[float], list[int]]] = {}
        for i, verify_s, m, looks, draft_s, plan_s in self.batch:
            self._book(i, verify_s, m, looks, draft_s, plan_s)
            xs, ws = seen.setdefault(i, ([], []))
            xs.append(verify_s / m)
            ws.append(m)
            if looks:
                xs, ws = seen.setdefault(self.look, ([], []))
                xs.append((draft_s + plan_s) / looks)
                ws.append(looks)
        self.batch = []
        if not self.learn:
            self.cost = whole_round_costs(self.now[self.k + 1], self.now, self.per_token, self.k)
            return
        for i, (xs, ws) in seen.items():
            mid = sorted(xs)[len(xs) // 2]
            kept = [min(max(x, mid / CLIP), mid * CLIP) for x in xs]
            m = sum(ws)
            self._fold(i, m, sum(w * x for w, x in zip(ws, kept, strict=True)) / m)
        scale = (PRICE_PRIOR + self.speed[0]) / (PRICE_PRIOR + self.speed[1])
        s = [PRICE_PRIOR * scale] * (self.k + 2) + [PRICE_PRIOR * min(1.0, scale)]
        parts = zip(s, self.prior, self.total, self.weight, strict=True)
        self.now = now = [(s * p + t) / (PRICE_PRIOR + w) for s, p, t, w in parts]
        self.cost = whole_round_costs(now[self.k + 1], now, self.per_token, self.k)

    def _book(self, i, verify_s, m, looks, draft_s, plan_s) -> None:
        """One batch entry into the ledger, at the prices it was planned with."""
        self.counts[i] += m
        self.planned[i] += m * self.now[i]
        self.paid[i] += verify_s
        if looks:
            self.counts[self.look] += looks
            self.planned[self.look] += looks * self.now[self.look]
            self.paid[self.look] += draft_s
            self.other[0] += plan_s
        else:
            self.other[1] += plan_s
            self.other[2] += m

    def _fold(self, i: int, m: int, mean: float) -> None:
        """m observations of price i with this mean (a verify also moves the scale)."""
        f = PRICE_FORGET**m
        if i != self.look:
            ratio = min(max(mean / self.prior[i], CLIP**-2), CLIP**2)
            self.speed = [f * self.speed[0] + m * ratio, f * self.speed[1] + m]
        self.total[i] = f * self.total[i] + m * mean
        self.weight[i] = f * self.weight[i] + m

    def pay(self, n: int, looks: int, seconds: tuple[float, float, float]) -> float:
        """Book a finished round, ``seconds`` = (draft calls, planner, verify) as the clock
        read them. Returns its cost at the prices it was planned with: looks (c + a) + v(n)
        (a round without a look is one the guard kept plain)."""
        draft_s, plan_s, verify_s = seconds
        i = n if looks else self.plain
        self.batch.append((i, verify_s, 1, looks, draft_s, plan_s))
        return looks * self.now[self.look] + self.now[i]

    def pay_plain(self, m: int, plan_s: float, verify_s: float) -> float:
        """Book m plain rounds the guard took in a row (m observations of a plain round at
        their mean); returns their cost at the prices planned."""
        self.batch.append((self.plain, verify_s, m, 0, 0.0, plan_s))
        return m * self.now[self.plain]

    def ledger(self) -> PriceLedger:
        """The run's prices as planned and as paid (:class:`PriceLedger`)."""
        self.refresh()  # fold the last batch into the ledger
        k = self.k
        return PriceLedger(
            unit_s=self.unit,
            own_clock=self.learn,
            per_token=self.per_token,
            rounds=tuple(self.counts[: k + 1]),
            verify_planned=tuple(self.planned[: k + 1]),
            verify_paid=tuple(self.paid[: k + 1]),
            looks=self.counts[self.look],
            look_planned=self.planned[self.look],
            draft_paid=self.paid[self.look],
            plain_rounds=self.counts[self.plain],
            plain_planned=self.planned[self.plain],
            plain_paid=self.paid[self.plain],
            plan_paid=self.other[0],
            guard_paid=self.other[1],
            shut=self.other[2],
        )


class AdaptiveState:
    """One run's draft-length policy: its prices, its rate R, its calibration and guard.

    R = (tokens emitted + PRIOR_ROUNDS) / (cost spent + PRIOR_ROUNDS v(0)), at least
    1 / v(0), with the cost of a round as paid (``own_clock``) or as priced. The mean
    first-row estimate of a model draft fades like the calibration. All of it reads
    finished rounds only (never the round being decided). A round is booked as one
    entry; every REFRESH rounds the entries are folded into R, the prices, the kappas and
    the mean first row (the booking of a round must cost little next to a plain step).
    """

    def __init__(self, costs: CostProfile, k: int, prior_checks: float = PRIOR_CHECKS) -> None:
        self.costs, self.k, self.per_token = costs, k, costs.per_token
        self.prices = RunPrices(costs, k)
        self.calibration = Calibration(prior=prior_checks)
        self.tokens = PRIOR_ROUNDS
        self.spent = PRIOR_ROUNDS * self.prices.now[-1]
        self.rate = 1.0 / self.prices.now[-1]
        self.first = [0.0, 0.0]  # faded sum and count of first-row estimates
        self.first_batch = [0.0, 0]  # since the last refresh
        self.first_keep = 1.0  # the projected p_1: (sum + 1) / (count + 1), calibrated
        self.look_gain, self.skipped = LOOK_PRIOR, 0  # the lookup guard
        self.pending_s = 0.0  # the engine's bookkeeping of the last round, timed after it
        self.rounds: list[tuple] = []  # finished rounds since the last refresh
        self.since_refresh = 0

    @property
    def cost(self) -> list[float]:
        """C(0..K) at this run's prices (:func:`whole_round_costs`)."""
        return self.prices.cost

    def chances(self, estimates: Sequence[float]) -> list[float]:
        """Calibrated estimates: min(1, kappa_bin * estimate) (:class:`Calibration`)."""
        return self.calibration.chances(estimates)

    def more_guesses(self, estimates: Sequence[float]) -> bool:
        """Should a lookup draft compute another guess after these? While it has fewer than
        K and the chance of reaching the next, prod p_j of the raw estimates, is at least
        GUESS_FLOOR (a guess the round is unlikely to reach changes no length)."""
        return len(estimates) < self.k and math.prod(estimates) >= GUESS_FLOOR

    def plain_rounds(self) -> int:
        """The guard (module docstring): 0 to look this round (compute guesses or a first
        row), or how many plain rounds to take first. A model draft's guard is asked again
        after GUARD_STRETCH plain rounds; a lookup draft's when its probe is due (or after
        GUARD_STRETCH)."""
        if self.since_refresh >= REFRESH:  # at a decision, so a traced run decides alike
            self.refresh()
        if self.k == 0:
            return GUARD_STRETCH
        now = self.prices.now
        plain = now[-1]
        if self.costs.per_token:
            pays = one_more_pays(1.0, self.first_keep, 0, [plain, *self.cost[1:]], self.rate)
            return 0 if pays else GUARD_STRETCH
        look = now[self.k + 1]  # c + a
        if self.look_gain >= self.rate * (look + now[0] - plain):
            return 0
        due = math.ceil(look / (PROBE_SHARE * plain)) - self.skipped  # rounds to the probe
        return max(0, min(due, GUARD_STRETCH))

    def plan(self, estimates: Sequence[float]) -> int:
        """A lookup draft's length this round: n* of :func:`best_gain` at the calibrated
        chances; its gain G moves the guard's expected gain of looking."""
        n, gain = best_gain(self.chances(estimates), self.prices.cost, self.rate)
        self.look_gain += LOOK_MEMORY * (gain - self.look_gain)
        return n

    def refresh(self) -> None:
        """Fold the rounds since the last refresh into R, the prices, the kappas and the
        mean first row; a model draft's p_1 is projected by that mean (faded like kappa,
        from a prior of one sure row: a draft that stopped looking looks again once the
        evidence against it has faded), calibrated."""
        rounds, self.since_refresh = self.since_refresh, 0
        prices, learn = self.prices, self.prices.learn
        for n_drafts, emitted, calls, checked, first, seconds in self.rounds:
            if n_drafts is None:  # a stretch of plain rounds (emitted of them)
                priced = prices.pay_plain(emitted, seconds[1], seconds[2])
            else:
                looks = calls if self.per_token else min(1, calls)
                priced = prices.pay(n_drafts, looks, seconds)
            self.spent += sum(seconds) if learn else priced
            self.tokens += emitted
            if checked is not None:
                self.calibration.add(*checked)
            if first is not None:
                self.first_batch[0] += first
                self.first_batch[1] += 1
        self.rounds = []
        self.rate = max(self.tokens / self.spent, 1.0 / prices.now[-1])
        prices.refresh()
        self.calibration.refresh(rounds)
        f = FORGET**rounds
        total, count = self.first
        self.first = [total * f + self.first_batch[0], count * f + self.first_batch[1]]
        self.first_batch = [0.0, 0]
        total, count = self.first
        self.first_keep = self.chances([(total + 1.0) / (count + 1.0)])[0]

    def record_plain(self, m: int, *, plan_s: float, verify_s: float) -> None:
        """Add m plain rounds the guard took in a row: ``verify_s`` CPU seconds for their
        target calls, ``plan_s`` for the guard and the bookkeeping before them."""
        self.rounds.append((None, m, 0, None, None, (0.0, plan_s, verify_s)))
        self.skipped += m
        self.since_refresh += m

    def record(self, n_drafts: int, emitted: int, calls: int, checked, first, seconds) -> None:
        """Add a finished round (folded in at the next refresh): its drafts, tokens emitted
        and draft calls; ``checked`` = (raw estimates, sum_x min(p, q)) of the positions
        the target checked, or None; ``first`` = the raw estimate of its first row (None if
        none computed); ``seconds`` = (draft calls, planner, verify) of CPU as the clock
        read them."""
        self.rounds.append((n_drafts, emitted, calls, checked, first, seconds))
        self.skipped = 0 if calls else self.skipped + 1
        self.since_refresh += 1

    def ledger(self) -> PriceLedger:
        """The run's prices as planned and as paid, every round folded in."""
        self.refresh()
        return self.prices.ledger()
