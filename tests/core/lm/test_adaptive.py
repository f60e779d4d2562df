"""The cost-aware adaptive draft length (issues 20 and 27) and the engine fixes of issue 18.

- the policy on hand-made costs (its formulas, short drafts when a verify row is dear,
  K drafts when verifying is free and the draft sure, no draft at all when c >= 1);
- the guard (issue 27): a lookup draft whose looks find nothing steps aside, and a run
  that stepped aside is plain decoding token for token and seed for seed, with a probe
  at the promised rate;
- prices from the run's own clock (issue 27), on a machine simulated by a fake clock that
  only the models' calls advance: the run learns what the machine charges where the
  profile got it wrong, and its ledger books exactly what it paid; clipping and the
  speed scale on hand-made observations;
- losslessness: greedy equality on every pair; a chi-square of the first three tokens
  of a tiny synthetic pair (every decision of a round matters there) and of the first
  token on every pair; two leaky policies (one peeks at p, one at the drawn token's own
  q) fail the same chi-square;
- the expected acceptance rate in every run (traced or not) and the "plain" round kind;
- the cost measurement (with a counting clock: no timed test) and its checks.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

import specdec_core.lm.generate as gen
from specdec_core import chi_square_test
from specdec_core.errors import InvalidParameterError
from specdec_core.lm import (
    CostProfile,
    autoregressive_generate,
    available_pairs,
    encode_prompt,
    load_pair,
    load_tokenizer,
    measure_pair_costs,
    speculative_generate,
)
from specdec_core.lm.adaptive import (
    GUESS_FLOOR,
    PRICE_PRIOR,
    PROBE_SHARE,
    REFRESH,
    AdaptiveState,
    RunPrices,
    best_draft_length,
    best_gain,
    check_costs,
    expected_tokens_by_length,
    one_more_pays,
    round_costs,
    row_confidence,
)
from specdec_core.lm.choice_table import LATER_CHANCE, SHARE_CHANCE, ChoiceTable, LookupTableDraft
from specdec_core.lm.generate import probabilities
from specdec_core.lm.prompt_lookup import KEEP_BY_MATCH, PromptLookupDraft

TOK = load_tokenizer()
PAIRS = available_pairs()
# repeats itself, so prompt lookup has something to propose from the first round on
PROMPT = encode_prompt(TOK, "the list and the list and the")
K = 4


def profile(c, v, *, per_token=True, own_clock=False, plan=0.0, step_s=float("nan")):
    """Hand-made prices; by default the run keeps them (own_clock False), so it is a
    function of its seed."""
    return CostProfile(
        "hand-made", c, tuple(v), per_token, step_s=step_s, plan=plan, own_clock=own_clock
    )


def cheap(per_token: bool) -> CostProfile:
    """A verify that costs little more per row (a GPU-like machine): drafts pay often."""
    return profile(0.05, [1.0 + 0.1 * k for k in range(9)], per_token=per_token)


def costs_for(draft) -> CostProfile:
    return cheap(not hasattr(draft, "propose"))


# --- the policy on hand-made numbers ---------------------------------------------------


def test_expected_tokens_and_round_costs_follow_their_formulas():
    assert expected_tokens_by_length([0.8, 0.5]) == pytest.approx([1.0, 1.8, 2.2])
    v = [1.0, 1.5, 1.6, 1.7]
    assert round_costs(profile(0.2, v, per_token=False), 3) == pytest.approx(
        [1.2, 1.7, 1.8, 1.9]
    )  # c + v(n): one call a round
    # c min(n + 1, K) + v(n): a model draft pays the row that stops the round, none at K
    assert round_costs(profile(0.2, v), 3) == pytest.approx([1.2, 1.9, 2.2, 2.3])
    # the planner's a is paid with every call: (c + a) per round or per row
    assert round_costs(profile(0.2, v, per_token=False, plan=0.1), 3) == pytest.approx(
        [1.3, 1.8, 1.9, 2.0]
    )


def test_the_best_length_maximises_tokens_minus_rate_times_cost():
    costs = profile(0.0, [1.0, 1.5, 1.5, 1.5, 2.5], per_token=False)
    cost = round_costs(costs, 4)
    # E = 1, 1.9, 2.62, 3.124, 3.4264; E - C = 0, 0.4, 1.12, 1.624, 0.9264
    assert best_draft_length([0.9, 0.8, 0.7, 0.6], cost, 1.0) == 3
    # a higher rate R makes every draft dearer: 2.124 extra tokens < 5 x 0.5 extra cost
    assert best_draft_length([0.9, 0.8, 0.7, 0.6], cost, 5.0) == 0
    assert best_draft_length([], cost, 1.0) == 0
    # its gain over no draft: E_3 - R C(3) - (1 - R C(0)) = 1.624 - 0, in tokens
    assert best_gain([0.9, 0.8, 0.7, 0.6], cost, 1.0) == (3, pytest.approx(1.624))
    assert best_gain([0.9, 0.8, 0.7, 0.6], cost, 5.0) == (0, 0.0)
    assert best_gain([0.9] * 9, [1.0] * 5, 1.0)[0] == 4  # never more than K = len(cost) - 1


def test_a_verify_row_that_costs_a_plain_step_gives_no_draft():
    steep = profile(0.01, [1.0 + k for k in range(K + 1)], per_token=False)  # v(k) = 1 + k
    assert best_draft_length([0.95] * K, round_costs(steep, K), 1.0) == 0
    gentle = profile(0.01, [1.0 + 0.3 * k for k in range(K + 1)], per_token=False)
    lengths = [best_draft_length([0.8] * K, round_costs(c, K), 1.0) for c in (gentle, steep)]
    assert lengths[0] > lengths[1] == 0  # the faster v(k) grows, the shorter the draft


def test_a_free_verify_and_a_sure_draft_draft_to_k():
    free = profile(0.0, [1.0] * (K + 1), per_token=False)
    assert best_draft_length([0.99] * K, round_costs(free, K), 1.0) == K
    model = profile(0.0, [1.0] * (K + 1))
    assert one_more_pays(1.0, 0.99, 0, round_costs(model, K), 1.0)


def test_one_more_pays_projects_the_rows_confidence_onto_later_positions():
    cost = round_costs(profile(0.1, [1.0, 1.6, 1.6, 1.6, 2.6]), K)  # [1.1, 1.8, 1.9, 2.0, 3.0]
    # one token at 0.5: 0.5 < 0.7; but three at 0.8: 0.8 + 0.64 + 0.512 > 0.9
    assert not one_more_pays(1.0, 0.5, 0, cost, 1.0)
    assert one_more_pays(1.0, 0.8, 0, cost, 1.0)
    # after an unlikely prefix (0.1): 0.08 < 0.1, 0.144 < 0.2, 0.195 < 1.2
    assert not one_more_pays(0.1, 0.8, 1, cost, 1.0)
    assert one_more_pays(0.3, 0.8, 1, cost, 1.0)  # 0.24 > 0.1: the next row is cheap


def test_a_lookup_draft_stops_guessing_below_the_floor():
    state = AdaptiveState(profile(0.0, [1.0, 1.5, 1.5, 1.5, 2.5], per_token=False), K)
    assert state.more_guesses([0.9, 0.5])  # 0.45 >= GUESS_FLOOR
    assert not state.more_guesses([0.3, 0.3])  # 0.09 < GUESS_FLOOR = 0.1
    assert GUESS_FLOOR == 0.1
    assert not state.more_guesses([1.0] * K)  # never more than K


def test_a_round_that_kept_every_draft_checks_the_next_guess_too():
    """The first guess a lookup draft left out is evidence for the calibration when the
    round kept every draft: p(guess) of the target's row after them."""
    drafted = gen._Draft([5, 6], None, [0.8, 0.7], 1, next=(9, 0.6))
    row = np.zeros(12)
    row[9], row[3] = 0.25, 0.75
    kept_all = gen._Round((5, 6), 2, (5, 6, 3), "bonus", 2, (1.0, 1.0), p_last=row)
    assert gen._next_check(drafted, kept_all) == [(0.6, 0.25)]
    greedy = gen._Round((5, 6), 2, (5, 6, 9), "bonus", 2, (1.0, 1.0))  # T = 0 fast path
    assert gen._next_check(drafted, greedy) == [(0.6, 1.0)]
    rejected = gen._Round((5, 6), 1, (5, 4), "rejected", 2, (1.0, 0.0), p_last=row)
    assert gen._next_check(drafted, rejected) == []
    assert gen._next_check(gen._Draft([5], None, [0.8], 1), kept_all) == []


def test_every_drafted_position_is_evidence_for_its_estimate():
    """The target's row at a drafted position reads the drafts before it: its overlap is
    the chance that the draft is kept given those before it were, rejected or not."""
    best = np.array([5, 7, 8, 2])  # the target's argmax after each drafted prefix
    greedy = gen._Round([5, 6, 8], 1, (5, 7), "resample", 2, (1.0, 0.0), best=best)
    assert gen._evidence(greedy) == [1.0, 0.0, 1.0]  # draft 3 is right after drafts 1-2
    p_rows = np.full((3, 4), 0.25)
    p_rows[2] = [0.1, 0.6, 0.2, 0.1]
    q_rows = np.eye(4)[[0, 1]]  # one-hot guesses 0 and 1
    sampled = gen._Round([0, 1], 0, (3,), "resample", 1, (0.25,), p_rows=p_rows, q_rows=q_rows)
    assert gen._evidence(sampled) == pytest.approx([0.25, 0.25])  # p(x) at each position
    plain = gen._Round([], 0, (3,), "plain", 0, ())
    assert gen._evidence(plain) == []


def test_row_confidence_reads_the_row_before_the_draw():
    logits = np.log(np.array([0.5, 0.3, 0.2]))
    assert row_confidence(logits, None, 0.0) == pytest.approx(0.5)  # top probability
    q = np.array([0.5, 0.3, 0.2])
    assert row_confidence(logits, q, 1.0) == pytest.approx(0.25 + 0.09 + 0.04)  # sum q^2


def _book(state, rounds, n_drafts, emitted, checked, seconds=(0.0, 0.0, 0.0)):
    """``rounds`` finished rounds alike, each after the guard's decision (where the
    state folds its batch in, every REFRESH rounds)."""
    for _ in range(rounds):
        state.plain_rounds()
        calls = 1 if n_drafts or checked[0] else 0
        state.record(n_drafts, emitted, calls=calls, checked=checked, first=None, seconds=seconds)


def test_the_runs_rate_and_calibration_learn_from_finished_rounds():
    state = AdaptiveState(profile(0.0, [1.0, 1.5, 1.5, 1.5, 2.5], per_token=False), K)
    assert state.rate == pytest.approx(1.0) and state.calibration.overall == 1.0
    # rounds of 3 drafts, estimated at 0.9 each, half as good
    _book(state, 30, 3, 2, ([0.9] * 3, [0.45] * 3))
    assert state.rate == pytest.approx((4 + 48) / (4 + 36), rel=1e-6)  # 24 rounds folded in
    state.refresh()  # and the last 6
    assert state.calibration.overall < 0.6
    kappas = state.calibration.kappas
    assert state.chances([0.9]) == [pytest.approx(0.9 * kappas[3])]
    assert kappas[3] < state.calibration.overall == kappas[0]  # unseen bins: the overall
    assert state.rate == pytest.approx((4 + 60) / (4 + 45), rel=1e-6)
    kappa = state.calibration.overall
    _book(state, 40, 0, 1, ([], []))  # plain rounds: the evidence fades, kappa returns to 1
    assert kappa < state.calibration.overall < 1.0
    # each estimate calibrates its bin (folded in at the next refresh)
    _book(state, REFRESH, 2, 1, ([0.2, 0.9], [0.2, 0.0]))
    state.refresh()
    assert kappas[0] < state.calibration.kappas[0]
    assert state.calibration.kappas[0] > state.calibration.overall > state.calibration.kappas[3]


def test_the_run_learns_its_prices_from_its_clock_and_clips_outliers():
    """v(3) costs 2 plain steps here, not the profile's 1.5: the learned price moves to it
    at the weight promised; the speed scale carries v(4), never paid, along; one page
    fault (a round 50 times as long) counts as at most CLIP x the batch's median."""
    unit = 1e-3
    costs = profile(0.1, [1.0, 1.2, 1.4, 1.5, 2.5], per_token=False, own_clock=True, step_s=unit)
    prices = RunPrices(costs, K)
    assert prices.now[3] == pytest.approx(1.5 * unit) and prices.now[K + 1] == pytest.approx(0.1e-3)
    for _ in range(5):
        for _ in range(REFRESH):
            prices.pay(3, 1, (0.1 * unit, 0.0, 2.0 * unit))
        prices.refresh()
    weight = sum(0.98**i for i in range(5 * REFRESH))  # PRICE_FORGET per observation
    assert prices.now[3] > (2.0 * weight + 4 * 1.5) / (weight + PRICE_PRIOR) * unit
    assert prices.now[3] < 2.0 * unit
    # the speed scale (this run pays about 4/3 the profile) carries v(4), never paid,
    # along; a plain round, never paid either, stays at the profile's plain step (never
    # priced dearer than that, so it is still tried); on a faster machine it follows too
    assert prices.now[4] > 2.5 * unit * 1.2
    assert prices.now[K + 2] == pytest.approx(1.0 * unit)
    faster = RunPrices(costs, K)
    for _ in range(REFRESH):
        faster.pay(3, 1, (0.1 * unit, 0.0, 0.75 * unit))
    faster.refresh()
    assert faster.now[4] < 2.5 * unit * 0.8 and faster.now[K + 2] < 0.8 * unit
    assert prices.now[K + 1] == pytest.approx(0.1 * unit, rel=0.05)  # looks as priced
    before = prices.now[3]
    for x in [2.0] * (REFRESH - 1) + [100.0]:  # one page fault in a batch
        prices.pay(3, 1, (0.1 * unit, 0.0, x * unit))
    prices.refresh()
    assert prices.now[3] - before < 2.0 * 2.0 * unit / (PRICE_PRIOR + weight)
    ledger = prices.ledger()
    assert ledger.rounds[3] == 6 * REFRESH
    assert ledger.verify_paid[3] == pytest.approx((6 * REFRESH - 1) * 2.0 * unit + 0.1)
    assert ledger.looks == 6 * REFRESH and ledger.draft_paid == pytest.approx(0.1 * unit * 48)
    # a profile without own_clock keeps its prices whatever the run pays
    fixed = RunPrices(profile(0.1, [1.0, 1.2, 1.4, 1.5, 2.5], per_token=False), K)
    for _ in range(40):
        fixed.pay(3, 1, (1.0, 0.0, 2.0))
    fixed.refresh()
    assert fixed.now[3] == 1.5 and fixed.ledger().verify_planned[3] == pytest.approx(60.0)


@pytest.mark.parametrize(
    ("costs", "fragment"),
    [
        ((0.1, 1.0, 1.5), "adaptive drafting needs a CostProfile"),
        (profile(0.1, [1.0, 1.5]), "v(k) for k = 0..1 but K = 4"),
        (profile(-0.1, [1.0] * 5), "cost c = -0.1"),
        (profile(0.1, [1.0] * 5, plan=float("inf")), "cost a = inf"),
        (profile(0.1, [1.0, 1.5, float("nan"), 2, 2]), "cost v(2) = nan"),
        (profile(0.1, [0.0] * 5), "v(0) is 0"),
        (profile(0.1, [1.0] * 5, per_token=False), "measured for a draft that proposes"),
    ],
)
def test_bad_costs_are_clear_errors(costs, fragment):
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    with pytest.raises(InvalidParameterError, match=re.escape(fragment)):
        speculative_generate(
            draft, target, PROMPT, k=K, max_new_tokens=3, temperature=0.0,
            rng=np.random.default_rng(0), adaptive=costs,
        )  # fmt: skip
    with pytest.raises(InvalidParameterError, match=re.escape(fragment)):
        check_costs(costs, K, per_token=True)


# --- the engine with adaptive drafting ---------------------------------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_adaptive_greedy_output_equals_the_targets_greedy_output(name):
    draft, target = load_pair(name)
    prompt = encode_prompt(TOK, "The for statement is used to")
    plain = autoregressive_generate(
        target, prompt, max_new_tokens=60, temperature=0.0, rng=np.random.default_rng(0)
    )
    runs = []
    for trace in (True, False):  # the traced rule and the argmax fast path
        spec = speculative_generate(
            draft, target, prompt, k=8, max_new_tokens=60, temperature=0.0,
            rng=np.random.default_rng(1), trace=trace, adaptive=costs_for(draft),
        )  # fmt: skip
        assert spec.tokens == plain.tokens
        assert spec.draft_length == "adaptive" and max(spec.draft_sizes) <= 8
        runs.append(spec)
    assert runs[0].draft_sizes == runs[1].draft_sizes  # both paths choose the same lengths
    clocked = speculative_generate(
        draft, target, prompt, k=8, max_new_tokens=60, temperature=0.0,
        rng=np.random.default_rng(1), trace=False,
        adaptive=replace(costs_for(draft), own_clock=True, step_s=5e-4),
    )  # fmt: skip
    assert clocked.tokens == plain.tokens  # lengths priced by the run's clock: the same text
    assert clocked.prices.own_clock and clocked.prices.n_rounds == clocked.n_rounds


def test_adaptive_lengths_follow_the_drafts_confidence():
    draft, target = load_pair("gpt-1L-aligned-to-gpt-4L")
    spec = speculative_generate(
        draft, target, PROMPT, k=8, max_new_tokens=80, temperature=0.0,
        rng=np.random.default_rng(0), adaptive=profile(0.05, [1.0, 1.5, 1.5, 1.5] + [2.5] * 5),
    )  # fmt: skip
    assert len(set(spec.draft_sizes)) >= 3  # not one fixed K
    kept = [r.n_accepted / len(r.positions[:-1]) for r in spec.rounds if len(r.positions) > 1]
    assert np.mean(kept) > spec.acceptance_rate * 0.5  # it drafts where it is kept


def test_a_draft_call_dearer_than_a_plain_step_is_never_made():
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    plain = autoregressive_generate(
        target, PROMPT, max_new_tokens=20, temperature=0.0, rng=np.random.default_rng(0)
    )
    for c in (1.0, 1.5):
        spec = speculative_generate(
            draft, target, PROMPT, k=K, max_new_tokens=20, temperature=0.0,
            rng=np.random.default_rng(0), adaptive=profile(c, [1.0] * (K + 1)),
        )  # fmt: skip
        assert spec.draft_calls == 0 and spec.draft_sizes == (0,) * 20
        assert spec.kinds == ("plain",) * 20 and spec.tokens == plain.tokens


# --- losslessness: a tiny synthetic pair, all positions of a short text --------------------

P_TABLE = np.array(
    [
        [0.70, 0.10, 0.10, 0.10],
        [0.25, 0.25, 0.25, 0.25],
        [0.10, 0.20, 0.30, 0.40],
        [0.40, 0.40, 0.1, 0.1],
    ]
)
Q_TABLE = np.array(
    [
        [0.90, 0.04, 0.03, 0.03],
        [0.60, 0.30, 0.05, 0.05],
        [0.30, 0.30, 0.20, 0.20],
        [0.05, 0.05, 0.45, 0.45],
    ]
)
N_TOKENS = 3


class Bigram:
    """A model whose next-token distribution depends on the last token only."""

    parallel_verify = True
    context_length = 512

    def __init__(self, table, name):
        self.table, self.name = np.log(table), name
        self.tokenizer = SimpleNamespace(vocab_size=table.shape[0])
        self.length = 0

    def fresh(self):
        return Bigram(np.exp(self.table), self.name)

    def extend(self, tokens, *, last_only=False):
        tokens = list(tokens)
        self.length += len(tokens)
        rows = self.table[tokens]  # (m, V)
        return rows[-1:] if last_only else rows

    def rollback(self, length):
        self.length = length


def _joint_counts(n_runs: int, seed: int, temperature: float = 1.0, own_clock=False) -> np.ndarray:
    """Counts of the first N_TOKENS tokens (V^3 cells) over seeded adaptive runs."""
    draft, target = Bigram(Q_TABLE, "q"), Bigram(P_TABLE, "p")
    costs = profile(0.05, [1.0, 1.1, 1.2, 1.3, 1.4], own_clock=own_clock, step_s=2e-5)
    counts = np.zeros(4**N_TOKENS)
    rng = np.random.default_rng(seed)
    for _ in range(n_runs):
        res = speculative_generate(
            draft, target, [0], k=K, max_new_tokens=N_TOKENS, temperature=temperature,
            rng=rng, trace=False, adaptive=costs,
        )  # fmt: skip
        a, b, c = res.tokens
        counts[16 * a + 4 * b + c] += 1
    return counts


def _joint_target(temperature: float = 1.0) -> np.ndarray:
    p = probabilities(np.log(P_TABLE), temperature)  # rows of the target at T
    return np.array(
        [p[0, a] * p[a, b] * p[b, c] for a, b, c in itertools.product(range(4), repeat=3)]
    )


@pytest.mark.parametrize(("temperature", "own_clock"), [(1.0, False), (0.6, False), (1.0, True)])
def test_adaptive_drafting_keeps_the_joint_distribution_of_the_text(temperature, own_clock):
    """Lossless with the profile's prices and with prices from the run's own clock (its
    readings of finished rounds: noise that never reads this round's target rows)."""
    counts = _joint_counts(4000, seed=3, temperature=temperature, own_clock=own_clock)
    fit = chi_square_test(counts, _joint_target(temperature))
    assert fit.p_value > 1e-4


class Machine:
    """A fake machine: its clock advances only when a model is called, by the price this
    machine charges (in plain steps), so a run's choices and books are exact."""

    def __init__(self, verify, draft):
        self.now, self.verify, self.draft = 0.0, verify, draft

    def clock(self):
        return self.now


class TimedBigram(Bigram):
    """A :class:`Bigram` whose calls advance a :class:`Machine`'s clock: a target call on
    m tokens by v(m - 1), a draft call by c."""

    def __init__(self, table, name, machine, target):
        super().__init__(table, name)
        self.machine, self.target = machine, target

    def fresh(self):
        return TimedBigram(np.exp(self.table), self.name, self.machine, self.target)

    def extend(self, tokens, *, last_only=False):
        m, n = self.machine, len(tokens) - 1
        if self.target and n < len(m.verify):  # (the prompt's prefill is not a round)
            m.now += m.verify[n]
        elif not self.target:
            m.now += m.draft
        return super().extend(tokens, last_only=last_only)


class TimedLookup(PromptLookupDraft):
    """Prompt lookup whose every call advances a :class:`Machine`'s clock by its c."""

    def __init__(self, machine):
        super().__init__(SimpleNamespace(vocab_size=4))
        self.machine = machine

    def keep_chances(self, tokens, k, more=None):
        self.machine.now += self.machine.draft
        return super().keep_chances(tokens, k, more)


def _machine_run(monkeypatch, machine, draft, costs, n_tokens=120, t=0.0, seed=0):
    monkeypatch.setattr(gen, "CLOCK", machine.clock)
    target = TimedBigram(P_TABLE, "p", machine, target=True)
    return speculative_generate(
        draft, target, [0, 1, 2, 0, 1, 2, 0], k=K, max_new_tokens=n_tokens, temperature=t,
        rng=np.random.default_rng(seed), trace=False, adaptive=costs,
    )  # fmt: skip


@pytest.mark.parametrize("own_clock", [False, True])
def test_prices_from_the_runs_clock_follow_a_machine_the_profile_got_wrong(monkeypatch, own_clock):
    """The profile says a verify row is nearly free (v(n) = 1 + 0.02 n); this machine
    charges one and a half plain steps per row (v(n) = 1 + 1.5 n). Priced by the
    profile, the run drafts on; priced by its own clock it learns the machine's prices
    and stops drafting, and its ledger books exactly what the machine charged."""
    machine = Machine(verify=[1.0 + 1.5 * n for n in range(K + 1)], draft=0.05)
    draft = TimedBigram(Q_TABLE, "q", machine, target=False)
    costs = profile(0.05, [1.0 + 0.02 * n for n in range(K + 1)], own_clock=own_clock, step_s=1.0)
    run = _machine_run(monkeypatch, machine, draft, costs, n_tokens=200)
    late = run.draft_sizes[len(run.draft_sizes) // 2 :]
    ledger = run.prices
    planned = ledger.verify_planned[K] / ledger.rounds[K]  # v(K) as planned, on average
    if own_clock:
        assert np.mean(late) < 0.2  # it learned that drafting does not pay here
        assert ledger.plain_rounds > len(run.draft_sizes) / 2
        assert ledger.plain_planned == pytest.approx(ledger.plain_paid)  # 1 step, as charged
    else:
        assert np.mean(late) > 1.0  # the profile's prices: it keeps drafting
        assert planned == pytest.approx(1.08)
    paid = [ledger.verify_paid[n] / ledger.rounds[n] for n in range(K + 1) if ledger.rounds[n]]
    charged = [machine.verify[n] for n in range(K + 1) if ledger.rounds[n]]
    assert paid == pytest.approx(charged)  # the books hold what the machine charged
    assert ledger.draft_paid == pytest.approx(0.05 * run.draft_calls)
    assert ledger.plan_paid == 0.0 == ledger.guard_paid  # the planner is free on this clock
    # every charge of the machine after the prefill is in the books
    # every charge of the machine is in the books, but the draft's prefill (c, once)
    # (the target's prefill of 6 tokens is not charged: see TimedBigram)
    books = sum(ledger.verify_paid) + ledger.plain_paid + ledger.draft_paid
    assert books == pytest.approx(machine.now - machine.draft)


@pytest.mark.parametrize("t", [0.0, 1.0])
def test_a_guard_that_steps_aside_is_plain_decoding_seed_for_seed(monkeypatch, t):
    """A lookup draft on a machine where no draft can pay (a verify row costs a plain
    step): after its first looks find nothing the guard shuts, a probe looks once per
    (c + a) / (PROBE_SHARE v(0)) rounds, and every round is a plain step drawn as plain
    decoding draws it, so the text is plain decoding's, token for token, at T = 1 too."""
    machine = Machine(verify=[1.0 + n for n in range(K + 1)], draft=0.2)
    costs = profile(0.2, machine.verify, per_token=False, own_clock=True, step_s=1.0)
    run = _machine_run(monkeypatch, machine, TimedLookup(machine), costs, n_tokens=200, t=t)
    target = Bigram(P_TABLE, "p")
    plain = autoregressive_generate(
        target, [0, 1, 2, 0, 1, 2, 0], max_new_tokens=200, temperature=t,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    assert run.tokens == plain.tokens and set(run.draft_sizes) == {0}
    due = math.ceil(0.2 / (PROBE_SHARE * 1.0))  # 20 plain rounds between probes
    assert run.prices.shut >= 200 - run.draft_calls
    assert run.draft_calls <= 6 + 200 // due  # the first looks, then a probe per 20 rounds
    assert run.draft_calls >= 200 // (due + 8)


def _peek_target_rows(d_model, seq, drafts, t):
    """The target's rows for this round's drafts: what no honest length may read."""
    if isinstance(d_model, Bigram):  # the synthetic pair
        return probabilities(Bigram(P_TABLE, "peek").extend([seq[-1], *drafts]), t)
    logits = _TARGET_PEEK[0].fresh().extend([*seq, *drafts])  # (len(seq) + n, V)
    return probabilities(logits[len(seq) - 1 :], t)  # (n + 1, V)


def _leaky(monkeypatch, cut):
    """Draft with the honest adaptive rule, then cut the drafts at the first position where
    ``cut(p_row, q_row, x)`` says so: a length chosen with what the draft may not use."""
    honest = gen._draft_step

    def leaky(d_model, seq, k, t, rng, fast_greedy, policy=None):
        drafted = honest(d_model, seq, k, t, rng, fast_greedy, policy)
        p_rows = _peek_target_rows(d_model, seq, drafted.tokens, t)
        for i, x in enumerate(drafted.tokens):
            if cut(p_rows[i], drafted.q_rows[i], x):
                drafted.tokens, drafted.q_rows = drafted.tokens[:i], drafted.q_rows[:i]
                drafted.estimates = drafted.estimates[:i]
                break
        return drafted

    monkeypatch.setattr(gen, "_draft_step", leaky)


_TARGET_PEEK: list = [None]  # the real target a leaky length peeks at
PEEKS_AT_P = {"peeks at p": lambda p, q, x: p[x] < q[x]}  # drop the drafts p dislikes
PEEKS_AT_X = {"reads q(x) of the drawn token": lambda p, q, x: q[x] < 0.5}


@pytest.mark.parametrize(
    "cut", [*PEEKS_AT_P.values(), *PEEKS_AT_X.values()], ids=[*PEEKS_AT_P, *PEEKS_AT_X]
)
def test_a_leaky_length_fails_the_same_test(monkeypatch, cut):
    _leaky(monkeypatch, cut)
    fit = chi_square_test(_joint_counts(4000, seed=3), _joint_target())
    assert fit.p_value < 1e-6


# --- losslessness on every shipped pair: the first token at T = 1 ---------------------------


def _first_tokens(draft, target, n, seed):
    """Counts of the first token over ``n`` seeded adaptive runs at T = 1, priced so that
    even a draft that is seldom kept drafts (a verify row costs 0.005 steps): the round
    checks drafts, and the test fails if none was drafted."""
    counts, drafted = np.zeros(TOK.vocab_size), 0
    rng = np.random.default_rng(seed)
    verify = [1.0 + 0.005 * k for k in range(K + 1)]
    gpu = profile(0.0, verify, per_token=not hasattr(draft, "propose"))
    for _ in range(n):
        res = speculative_generate(
            draft, target, PROMPT, k=K, max_new_tokens=1, temperature=1.0, rng=rng,
            trace=False, adaptive=gpu,
        )  # fmt: skip
        counts[res.tokens[0]] += 1
        drafted += res.drafted
    assert drafted > 0
    return counts


def _target_first(target):
    return probabilities(target.fresh().extend(PROMPT)[-1:], 1.0)[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", PAIRS)
def test_adaptive_first_token_at_temperature_1_follows_the_target(name):
    draft, target = load_pair(name)
    fit = chi_square_test(_first_tokens(draft, target, 1500, seed=21), _target_first(target))
    assert fit.p_value > 1e-4


@pytest.mark.slow
def test_a_length_that_peeks_at_p_fails_on_a_real_pair(monkeypatch):
    """Drop the drafts the target likes less than the draft. (With a one-hot q, a lookup
    draft, no length can bias the text: a checked one-hot draft emits exactly p at its
    position, so the leak needs a draft that samples.)"""
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    _TARGET_PEEK[0] = target
    _leaky(monkeypatch, PEEKS_AT_P["peeks at p"])
    fit = chi_square_test(_first_tokens(draft, target, 1500, seed=21), _target_first(target))
    assert fit.p_value < 1e-6


# --- issue 18: expected alpha in every run, and the plain round ---------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_expected_acceptance_is_the_same_traced_or_not(name):
    draft, target = load_pair(name)
    for t in (0.0, 0.5, 1.0, 1.5):
        runs = [
            speculative_generate(
                draft,
                target,
                PROMPT,
                k=3,
                max_new_tokens=30,
                temperature=t,
                rng=np.random.default_rng(7),
                trace=trace,
            )  # fmt: skip
            for trace in (True, False)
        ]
        traced, untraced = runs
        assert traced.tokens == untraced.tokens and traced.checked == untraced.checked > 0
        alpha = untraced.expected_acceptance_rate
        assert alpha == pytest.approx(traced.expected_acceptance_rate, abs=1e-12)
        assert 0.0 < alpha <= 1.0
        overlaps = [
            p.overlap for r in traced.rounds for p in r.positions[: len(r.positions) - 1]
            if p.coin is not None
        ]  # fmt: skip
        assert alpha == pytest.approx(np.mean(overlaps), abs=1e-9)
        if t == 0.0:  # one-hot p and q: the overlap is 1 at a kept draft, 0 at a mismatch
            assert alpha == pytest.approx(untraced.acceptance_rate)


def test_a_round_without_drafts_is_a_plain_step_not_a_bonus():
    draft, target = load_pair("lookup-table-to-gpt-4L")
    prompt = encode_prompt(TOK, "How do I read a file line by line in Python?")
    for trace in (True, False):
        spec = speculative_generate(
            draft, target, prompt, k=3, max_new_tokens=60, temperature=1.0,
            rng=np.random.default_rng(2), trace=trace,
        )  # fmt: skip
        assert spec.plain_rounds == spec.draft_sizes.count(0) > 0
        assert spec.plain_rounds + spec.bonus_rounds + spec.resample_rounds == spec.n_rounds
        assert spec.bonus_rounds == sum(
            n > 0 and a == n for n, a in zip(spec.draft_sizes, spec.accepted_sizes, strict=True)
        )
        assert sum(spec.accepted_sizes) == spec.accepted
        assert spec.kinds.count("bonus") <= spec.bonus_rounds
        assert spec.kinds.count("plain") >= spec.plain_rounds - 1  # the last may be cut
        if trace:
            assert {r.final_kind for r in spec.rounds if len(r.positions) == 1} == {"plain"}
            assert all(r.final_kind != "plain" for r in spec.rounds if len(r.positions) > 1)


# --- what the drafts offer, and the cost measurement --------------------------------------


def test_lookup_drafts_offer_measured_keep_chances():
    lookup = PromptLookupDraft(None)
    drafts, chances = lookup.keep_chances([5, 6, 7, 8, 9, 5, 6, 7], 4)
    assert drafts == [8, 9, 5, 6]  # after the 3-token match "5 6 7"
    assert chances == list(KEEP_BY_MATCH[(3, 3)]) + [KEEP_BY_MATCH[(3, 3)][2]]
    assert lookup.keep_chances([1, 2, 3], 4) == ([], [])
    table = ChoiceTable.count([np.array([3, 4, 3, 5])], [np.array([4, 3, 5, 3])], 10, 1)
    both = LookupTableDraft(table, None)
    drafts, chances = both.keep_chances([9], 3)  # no match: the table (3 -> ? unknown)
    assert len(drafts) == 3 and chances == [SHARE_CHANCE[0], LATER_CHANCE[0], LATER_CHANCE[0]]
    asked = []
    stop = both.keep_chances([9], 3, more=lambda ch: asked.append(list(ch)) or len(ch) < 1)
    assert len(stop[0]) == 1 and asked == [[], [SHARE_CHANCE[0]]]


def test_measured_costs_have_one_verify_per_length_and_name_the_machine():
    ticks = itertools.count()
    for name, per_token in (("gpt-1L-to-gpt-4L", True), ("lookup-table-to-gpt-4L", False)):
        costs = measure_pair_costs(
            load_pair(name), 5, name=name, repeats=3, clock=lambda: float(next(ticks))
        )
        # every timed call reads the counting clock twice: one tick each, one step each
        assert costs.verify == (1.0,) * 6 and costs.draft == 1.0 == costs.plan
        assert costs.per_token is per_token and costs.k_max == 5 and costs.pair == name
        assert costs.kernel and costs.temperature == 0.0
    with pytest.raises(InvalidParameterError, match="repeats is 0"):
        measure_pair_costs(load_pair("gpt-1L-to-gpt-4L"), 3, repeats=0)
    with pytest.raises(InvalidParameterError, match="temperature"):
        measure_pair_costs(load_pair("gpt-1L-to-gpt-4L"), 3, temperature=-1.0)
