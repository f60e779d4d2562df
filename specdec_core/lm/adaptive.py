"""Step aside: draft K a round while drafting pays on this machine, else plain steps (issue 27).

**What is left, and why.** Issues 20 and 27 built a per-round planner here: each round
chose its own length 0..K from the draft's estimates of being kept, calibrated on the
run, priced by c, a and v(n) learned from the run's clock (renewal-reward, Dinkelbach's
argument). Measured (``benchmarks/bench_model_pairs.py``, issue 27; docs/PERFORMANCE.md), it never
beat the best fixed K where drafting pays: at T = 0 on a processor whose verify is cheap
it ran at 1.11-1.13x against fixed K = 3's 1.17-1.24x (its Python planner and its longer
guessing cost c + a = 0.19 of a plain step a round, against fixed K's 0.07). Where
it won (T = 1, and processors whose verify is dear), the gain came from one part, the
**guard** that takes plain steps when drafting does not pay: with the guard switched off
the same planner ran at 0.79-0.90x there, with it at 0.90-0.97x. Issue 27, item 5: keep
the part that measurably helps, delete the rest. This module is that part.

**The rule.** Rounds are of two kinds: a *drafting round* drafts K as a fixed K does (a
lookup draft: up to K, none when it finds nothing; a model draft: K rows) and is
verified; a *plain round* is one target step. Each kind's speed is measured on this run:

    R_draft = (tokens of drafting rounds) / (their cost),  R_plain = 1 / (cost of a plain round)

each a mean over the kind's own rounds (older ones fade by FORGET per round of that kind,
so a text that starts or stops repeating moves it), from a prior worth PRIOR_ROUNDS rounds:
a plain round at the profile's v(0), a drafting round at the profile's c calls + a + v(K)
emitting what plain steps would make in that time, or K + 1 tokens if that is fewer (so a
run starts by drafting where drafting can pay at all), with a standard deviation of
sqrt(K) / 2 tokens. The tokens of a drafting round vary a lot (1 to K + 1), so the guard
is optimistic by one standard error: it counts tokens = mean + Z sd / sqrt(n) over the n
(faded) rounds seen (an upper confidence bound, Auer et al. 2002), and a round drafts iff
tokens / cost >= R_plain. Where drafting pays on average this keeps a run from stepping
aside on a few unlucky rounds; where it loses by more than the noise, it steps aside all
the same.

**Probes.** A shut guard would never learn that the text turned repetitive; so it drafts
once more (a probe) after m plain rounds, where a probe is expected to lose
L = cost_draft - tokens_draft x cost_plain (the time a drafting round takes beyond what
plain steps make of its mean tokens) and m = ceil(L / (PROBE_SHARE x cost_plain)): probes
cost at most PROBE_SHARE of a plain step per round, and cost little where drafting is
close to paying (L near 0: the guard then probes almost every round).

**Cost.** Costs are this run's per-thread CPU seconds (``CostProfile.own_clock``, the
default: ``time.thread_time``, which time spent waiting for a core does not inflate), or,
with ``own_clock`` False, the profile's prices (a run is then a function of its seed, so
the page's step mode replays its run mode). The guard's own work (a comparison per round,
the books after it) is timed apart and shown on the page: it is a, per round.

**Losslessness.** Whether a round drafts depends only on finished rounds (their tokens
and their clock readings), never on this round's target rows; a drafting round is a
fixed-K round (Leviathan et al. 2023, Alg. 1) and a plain round draws as plain decoding
does, so the text follows the target exactly (Thm 3.5, applied round by round); at T = 0
it is the target's greedy text. The tests check both, and show drafts cut by this
round's target rows (or by the drawn token's own q) failing the same chi-square
(``tests/core/lm/test_adaptive.py``).

Related: Leviathan et al. 2023, Sec. 3.5 (the best K depends on c and alpha); vLLM's
``speculative_disable_by_batch_size`` switches drafting off above a batch size, where
verifying stops being cheap; Hugging Face's ``num_assistant_tokens_schedule``. Here the
switch is this run's own measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidParameterError

PRIOR_ROUNDS = 2.0  # weight of each kind's prior, in rounds of that kind
Z = 1.0  # the guard's optimism, in standard errors of a drafting round's mean tokens
FORGET = 0.98  # each round of a kind fades that kind's older rounds (a memory of ~50)
PROBE_SHARE = 0.02  # a shut guard spends at most this share of a plain step a round on probes
STRETCH = 16  # plain rounds taken in one go before the guard is asked again
MAX_COST = 1000.0  # a cost above this many plain steps is a measurement gone wrong


@dataclass(frozen=True)
class CostProfile:
    """What drafting, the guard and verifying cost on this machine, in plain target steps.

    ``verify[k]`` = v(k), k = 0..K: a round's target call on k + 1 tokens, its decisions
    and the rollback; ``draft`` = c: one draft call (one a token for a model draft, one a
    round for a draft that proposes all its guesses at once: ``per_token`` False);
    ``plan`` = a: the guard's work for one round. ``own_clock``: the run measures its
    rounds on its own clock (module docstring); False prices them by this profile, so a
    run depends on its seed alone.
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
            f"stepping aside needs a CostProfile (specdec_core.lm.measure_costs), "
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


def whole_round_costs(
    draft: float, verify: Sequence[float], per_token: bool, k: int
) -> list[float]:
    """C(n) for n = 0..k: what a round of n drafts costs, with ``draft`` = c + a.

    A draft that guesses all at once (one call a round): C(n) = c + a + v(n). A model
    draft (one call per row): C(n) = (c + a) n + v(n) (C(0) = v(0): no row computed).
    """
    if not per_token:
        return [draft + v for v in verify[: k + 1]]
    return [draft * n + verify[n] for n in range(k + 1)]


def round_costs(costs: CostProfile, k: int) -> list[float]:
    """C(0..k) of :func:`whole_round_costs` at the profile's prices."""
    return whole_round_costs(costs.draft + costs.plan, costs.verify, costs.per_token, k)


@dataclass(frozen=True)
class PriceLedger:
    """A run's prices as the profile priced them and as the run paid them (CPU seconds,
    sums over its rounds; "planned" = the profile's price x its plain step ``unit_s``).

    Index n = 0..K of the verify columns: drafting rounds that checked n drafts (a lookup
    draft that found nothing checks 0). ``calls``: the draft's calls (rows of a model
    draft, lookups of a draft without a model); ``guard_paid``: the guard's seconds over
    every round; ``plain_rounds``: the plain rounds the guard took.
    """

    unit_s: float
    own_clock: bool
    per_token: bool
    rounds: tuple[int, ...]
    verify_planned: tuple[float, ...]
    verify_paid: tuple[float, ...]
    plain_rounds: int
    plain_planned: float
    plain_paid: float
    calls: int
    draft_planned: float
    draft_paid: float
    guard_paid: float
    guard_planned: float  # the profile's a x its plain step, per round

    @property
    def n_rounds(self) -> int:
        return sum(self.rounds) + self.plain_rounds

    @property
    def guard_per_round(self) -> float:
        """The guard's CPU seconds per round, every round counted (drafting or not)."""
        return self.guard_paid / max(1, self.n_rounds)

    def in_steps(self, unit_s: float | None = None) -> list[tuple[str, int, float, float]]:
        """(what, how many, as the profile priced it, as paid) in plain steps of ``unit_s``
        seconds (the profile's plain step by default): the guard per round (its planned
        price is the profile's a), a draft call c, v(n) for every n checked, a plain round
        of the guard's. Rows with no rounds are left out."""
        unit = self.unit_s if unit_s is None else unit_s
        rows = [("guard", self.n_rounds, self.guard_planned / unit, self.guard_per_round / unit)]
        if self.calls:
            c = self.calls
            rows.append(("draft", c, self.draft_planned / c / unit, self.draft_paid / c / unit))
        for n, m in enumerate(self.rounds):
            if m:
                planned, paid = self.verify_planned[n] / m / unit, self.verify_paid[n] / m / unit
                rows.append((f"v({n})", m, planned, paid))
        if self.plain_rounds:
            m = self.plain_rounds
            rows.append(("plain", m, self.plain_planned / m / unit, self.plain_paid / m / unit))
        return rows


class DraftGuard:
    """One run's guard (module docstring): draft K this round, or take plain steps.

    ``plain_rounds()`` before a round: 0 to draft, else how many plain rounds to take;
    ``record`` / ``record_plain`` after: the round's tokens and seconds. Reads finished
    rounds only.
    """

    def __init__(self, costs: CostProfile, k: int) -> None:
        unit = costs.step_s if math.isfinite(costs.step_s) and costs.step_s > 0 else 1.0
        self.costs, self.k, self.unit, self.learn = costs, k, unit, costs.own_clock
        calls = k if costs.per_token else 1
        self.prior_draft = (costs.draft * calls + costs.plan + costs.verify[k]) * unit
        self.prior_plain = costs.verify[0] * unit
        self.prior_tokens = min(k + 1.0, self.prior_draft / self.prior_plain)
        self.prior_square = self.prior_tokens**2 + k / 4  # the prior's sd: sqrt(K) / 2
        # faded sums: drafting rounds (tokens, tokens^2, seconds, rounds), plain rounds
        # (seconds, rounds)
        self.draft_tokens = self.draft_square = self.draft_s = self.draft_n = 0.0
        self.plain_s = self.plain_n = 0.0
        self.since = 0  # plain rounds since the last drafting round
        self.pending_s = 0.0  # the guard's books of the last round, timed after it
        # the ledger: per n rounds / planned / paid; plain rounds; calls; the guard
        self.n_rounds = [0] * (k + 1)
        self.v_planned, self.v_paid = [0.0] * (k + 1), [0.0] * (k + 1)
        self.plain_count, self.plain_paid_s = 0, 0.0
        self.calls, self.draft_paid_s, self.guard_s = 0, 0.0, 0.0

    def means(self) -> tuple[float, float, float, float]:
        """(tokens, their standard error, seconds) of a drafting round and seconds of a
        plain round: means with their priors over the (faded) rounds seen, the standard
        error sd / sqrt(n) (module docstring)."""
        w = PRIOR_ROUNDS
        n = self.draft_n + w
        plain = (self.plain_s + w * self.prior_plain) / (self.plain_n + w)
        mean = (self.draft_tokens + w * self.prior_tokens) / n
        variance = max(0.0, (self.draft_square + w * self.prior_square) / n - mean**2)
        cost = (self.draft_s + w * self.prior_draft) / n
        return mean, math.sqrt(variance / n), cost, plain

    def plain_rounds(self) -> int:
        """0: draft this round (drafting, its tokens counted optimistically, is at least as
        fast as plain steps, or a probe is due); else the plain rounds to take first (at
        most STRETCH). Probes are spaced by what one is expected to lose (its mean tokens),
        so they cost at most PROBE_SHARE of a plain step a round."""
        if self.k == 0:
            return STRETCH
        tokens, error, cost, plain = self.means()
        if cost <= (tokens + Z * error) * plain:
            return 0
        loss = cost - tokens * plain  # seconds a drafting round loses against plain steps
        due = math.ceil(loss / (PROBE_SHARE * plain)) - self.since
        return max(0, min(due, STRETCH))

    def record(self, n_drafts: int, emitted: int, calls: int, seconds) -> None:
        """A finished drafting round: its drafts, tokens emitted and draft calls;
        ``seconds`` = (draft calls, guard, verify) as the clock read them."""
        draft_s, guard_s, verify_s = seconds
        profile, unit = self.costs, self.unit
        self.n_rounds[n_drafts] += 1
        self.v_planned[n_drafts] += profile.verify[n_drafts] * unit
        self.v_paid[n_drafts] += verify_s
        self.calls += calls
        self.draft_paid_s += draft_s
        self.guard_s += guard_s
        if self.learn:
            cost = draft_s + guard_s + verify_s
        else:
            cost = (profile.draft * calls + profile.plan + profile.verify[n_drafts]) * unit
        f = FORGET
        self.draft_tokens = f * self.draft_tokens + emitted
        self.draft_square = f * self.draft_square + emitted * emitted
        self.draft_s = f * self.draft_s + cost
        self.draft_n = f * self.draft_n + 1.0
        self.since = 0

    def record_plain(self, m: int, *, guard_s: float, verify_s: float) -> None:
        """m plain rounds the guard took in a row: ``verify_s`` CPU seconds for their
        target calls, ``guard_s`` for the guard and the books before them."""
        self.plain_count += m
        self.plain_paid_s += verify_s
        self.guard_s += guard_s
        cost = verify_s if self.learn else m * self.costs.verify[0] * self.unit
        f = FORGET**m
        self.plain_s = f * self.plain_s + cost
        self.plain_n = f * self.plain_n + m
        self.since += m

    def ledger(self) -> PriceLedger:
        """The run's prices as the profile priced them and as the run paid them."""
        profile, unit = self.costs, self.unit
        return PriceLedger(
            unit_s=unit,
            own_clock=self.learn,
            per_token=profile.per_token,
            rounds=tuple(self.n_rounds),
            verify_planned=tuple(self.v_planned),
            verify_paid=tuple(self.v_paid),
            plain_rounds=self.plain_count,
            plain_planned=self.plain_count * profile.verify[0] * unit,
            plain_paid=self.plain_paid_s,
            calls=self.calls,
            draft_planned=self.calls * profile.draft * unit,
            draft_paid=self.draft_paid_s,
            guard_paid=self.guard_s,
            guard_planned=profile.plan * unit,
        )
