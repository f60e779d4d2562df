"""The guard that steps aside when drafting does not pay (issue 27, item 5: what was
kept of the adaptive draft length of issues 20 and 27) and the engine fixes of issue 18.

- the guard on hand-made numbers: it starts by drafting where drafting can pay, steps
  aside once drafting rounds are measured slower than plain ones, probes at the promised
  rate, opens again when a probe finds drafting paying, and never drafts where even a
  round that keeps every draft cannot pay;
- on a machine simulated by a fake clock that only the models' calls advance: priced by
  its own clock a run learns what the machine charges where the profile got it wrong,
  and its ledger books exactly what it paid; a run that stepped aside is plain decoding
  token for token and seed for seed;
- losslessness: greedy equality on every pair; a chi-square of the first three tokens
  of a tiny synthetic pair (every decision of a round matters there) and of the first
  token on every pair; two leaky variants (one peeks at p, one at the drawn token's own
  q) and a guard that peeks at this round's target rows fail the same chi-square;
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
    FORGET,
    PRIOR_ROUNDS,
    PROBE_SHARE,
    STRETCH,
    DraftGuard,
    Z,
    check_costs,
    round_costs,
)
from specdec_core.lm.generate import probabilities
from specdec_core.lm.prompt_lookup import PromptLookupDraft

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


# --- the guard on hand-made numbers ----------------------------------------------------


def test_round_costs_follow_their_formula():
    v = [1.0, 1.5, 1.6, 1.7]
    assert round_costs(profile(0.2, v, per_token=False), 3) == pytest.approx(
        [1.2, 1.7, 1.8, 1.9]
    )  # c + v(n): one call a round
    assert round_costs(profile(0.2, v), 3) == pytest.approx([1.0, 1.7, 2.0, 2.3])  # c n + v(n)
    # the guard's a is paid with every call: (c + a) per round or per row
    assert round_costs(profile(0.2, v, per_token=False, plan=0.1), 3) == pytest.approx(
        [1.3, 1.8, 1.9, 2.0]
    )


def _draft_rounds(guard, rounds, emitted, seconds, n_drafts=K):
    """``rounds`` drafting rounds alike, each after asking the guard (which must say draft)."""
    for _ in range(rounds):
        assert guard.plain_rounds() == 0
        guard.record(n_drafts, emitted, 1, seconds)


def test_the_guard_drafts_while_drafting_rounds_are_as_fast_as_plain_ones():
    """A drafting round costs 2 plain steps here (c + v(4), own clock): it must emit 2
    tokens to break even. Rounds of 3 keep it open; rounds of 1 shut it, once the
    evidence outweighs the guard's optimism (module docstring: mean + Z sd / sqrt(n)).
    With n rounds of 1 after the prior (2 tokens, sd 1), mean = (n + 4) / (n + 2), variance
    (n + 10) / (n + 2) - mean^2: n = 1 gives 2.21 tokens, n = 2 gives 1.93 < 2."""
    costs = profile(0.2, [1.0, 1.5, 1.6, 1.7, 1.8], per_token=False, own_clock=True, step_s=1.0)
    guard = DraftGuard(costs, K)
    _draft_rounds(guard, 30, 3, (0.2, 0.0, 1.8))
    tokens, error, cost, plain = guard.means()
    assert cost == pytest.approx(2.0) and plain == pytest.approx(1.0)  # prior and paid agree
    n = guard.draft_n + PRIOR_ROUNDS  # 30 rounds faded by FORGET, and the prior
    mean = (3.0 * guard.draft_n + 2.0 * PRIOR_ROUNDS) / n  # the prior: break-even, 2 tokens
    variance = (9.0 * guard.draft_n + (2.0**2 + K / 4) * PRIOR_ROUNDS) / n - mean**2
    assert tokens == pytest.approx(mean) and error == pytest.approx(math.sqrt(variance / n))
    assert cost <= (tokens + Z * error) * plain  # open, counted optimistically
    losing = DraftGuard(costs, K)
    rounds = 0
    while losing.plain_rounds() == 0 and rounds < 50:  # 2 unlucky rounds in a row shut it
        losing.record(K, 1, 1, (0.2, 0.0, 1.8))
        rounds += 1
    assert rounds == 2


def test_a_shut_guard_probes_at_the_promised_rate_and_opens_when_drafting_pays():
    costs = profile(0.2, [1.0, 1.5, 1.6, 1.7, 1.8], per_token=False, own_clock=True, step_s=1.0)
    guard = DraftGuard(costs, K)
    for _ in range(20):
        guard.record(K, 1, 1, (0.2, 0.0, 1.8))  # 1 token for 2 steps
    tokens, error, cost, plain = guard.means()
    assert cost > (tokens + Z * error) * plain  # shut, even counted optimistically
    loss = cost - tokens * plain  # what a probe is expected to lose against plain steps
    due = math.ceil(loss / (PROBE_SHARE * plain))
    assert 0 < loss < 1 and due > STRETCH
    taken = 0
    while (m := guard.plain_rounds()) > 0:
        assert m <= STRETCH
        guard.record_plain(m, guard_s=0.0, verify_s=1.0 * m)
        taken += m
    assert taken == due  # then a probe
    # probes that keep every draft (5 tokens for 2 steps) open it again within a few rounds
    probes, shut = 0, True
    while shut and probes < 10:
        guard.record(K, 5, 1, (0.2, 0.0, 1.8))  # a probe that keeps every draft
        probes += 1
        shut = guard.plain_rounds() > 0
    assert not shut and probes <= 5


def test_the_guard_never_drafts_where_keeping_every_draft_cannot_pay():
    """A model draft whose row costs 1.5 plain steps: K rows + v(K) = 7 steps for at most
    K + 1 = 5 tokens; the guard starts shut and stays shut for STRETCH rounds at a time."""
    guard = DraftGuard(profile(1.5, [1.0] * (K + 1)), K)
    assert guard.plain_rounds() == STRETCH
    cheap_rows = DraftGuard(profile(0.1, [1.0] * (K + 1)), K)
    assert cheap_rows.plain_rounds() == 0  # 1.4 steps for up to 5 tokens: it tries
    assert DraftGuard(profile(0.1, [1.0] * (K + 1)), 0).plain_rounds() == STRETCH  # K = 0


def test_old_rounds_fade():
    """A text that stops repeating: 40 rounds of 5 tokens, then rounds of 1 shut the guard
    within two memories' worth of rounds (2 / (1 - FORGET) = 100; 61 here), where rounds
    that never faded would keep it drafting for 143."""
    costs = profile(0.2, [1.0, 1.5, 1.6, 1.7, 1.8], per_token=False, own_clock=True, step_s=1.0)
    guard = DraftGuard(costs, K)
    _draft_rounds(guard, 40, 5, (0.2, 0.0, 1.8))
    rounds = 0
    while guard.plain_rounds() == 0 and rounds < 100:
        guard.record(K, 1, 1, (0.2, 0.0, 1.8))
        rounds += 1
    assert rounds < 2 / (1 - FORGET)


def test_priced_by_the_profile_the_guard_ignores_the_clock():
    costs = profile(0.2, [1.0, 1.5, 1.6, 1.7, 1.8], per_token=False, step_s=1.0)
    guard = DraftGuard(costs, K)
    _draft_rounds(guard, 10, 3, (50.0, 0.0, 90.0))  # a clock gone wild: priced at 2 steps
    assert guard.means()[2] == pytest.approx(2.0)
    ledger = guard.ledger()
    assert ledger.verify_planned[K] == pytest.approx(18.0) and ledger.verify_paid[K] == 900.0
    assert ledger.calls == 10 and ledger.draft_planned == pytest.approx(2.0)
    assert ledger.draft_paid == 500.0 and not ledger.own_clock


@pytest.mark.parametrize(
    ("costs", "fragment"),
    [
        ((0.1, 1.0, 1.5), "stepping aside needs a CostProfile"),
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


# --- the engine with the guard --------------------------------------------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_a_guarded_runs_greedy_output_equals_the_targets_greedy_output(name):
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


def test_a_draft_that_cannot_pay_is_never_called():
    """Rows of 1.5 or 2 plain steps: K rows + v(K) cost more than the K + 1 tokens a round
    can make at best; within STRETCH rounds no probe is due."""
    draft, target = load_pair("gpt-1L-to-gpt-4L")
    plain = autoregressive_generate(
        target, PROMPT, max_new_tokens=20, temperature=0.0, rng=np.random.default_rng(0)
    )
    for c in (1.5, 2.0):
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
    """Counts of the first N_TOKENS tokens (V^3 cells) over seeded guarded runs (priced so
    that a first round that keeps few drafts shuts the guard: its decisions matter)."""
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
def test_a_guarded_run_keeps_the_joint_distribution_of_the_text(temperature, own_clock):
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
    """Prompt lookup whose every call advances a :class:`Machine`'s clock by its c, and
    which notes the number of tokens committed at each call."""

    def __init__(self, machine):
        super().__init__(SimpleNamespace(vocab_size=4))
        self.machine, self.called_at = machine, []

    def fresh(self):
        return self

    def propose(self, tokens, k):
        self.machine.now += self.machine.draft
        self.called_at.append(len(tokens))
        return super().propose(tokens, k)


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
    assert ledger.guard_paid == 0.0  # the guard is free on this clock
    # every charge of the machine after the prefill is in the books
    # every charge of the machine is in the books, but the draft's prefill (c, once)
    # (the target's prefill of 6 tokens is not charged: see TimedBigram)
    books = sum(ledger.verify_paid) + ledger.plain_paid + ledger.draft_paid
    assert books == pytest.approx(machine.now - machine.draft)


@pytest.mark.parametrize("t", [0.0, 1.0])
def test_a_guard_that_steps_aside_is_plain_decoding_seed_for_seed(monkeypatch, t):
    """A lookup draft on a machine where no round can pay (a verify row costs 2 plain
    steps: c + v(4) = 9.2 steps for at most 5 tokens): the guard starts shut, every round
    is a plain step drawn as plain decoding draws it, so the text is plain decoding's,
    token for token, at T = 1 too; its first probe comes after ceil(L / (PROBE_SHARE
    v(0))) plain rounds, L = 9.2 - 5 the loss its prior expects of a probe."""
    machine = Machine(verify=[1.0 + 2.0 * n for n in range(K + 1)], draft=0.2)
    costs = profile(0.2, machine.verify, per_token=False, own_clock=True, step_s=1.0)
    prompt = [0, 1, 2, 0, 1, 2, 0]
    lookup = TimedLookup(machine)
    run = _machine_run(monkeypatch, machine, lookup, costs, n_tokens=200, t=t)
    plain = autoregressive_generate(
        Bigram(P_TABLE, "p"), prompt, max_new_tokens=200, temperature=t,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    assert run.tokens == plain.tokens and run.draft_calls == 0 == len(lookup.called_at)
    assert run.prices.plain_rounds == 200 and set(run.draft_sizes) == {0}
    tokens, error, cost, step = DraftGuard(costs, K).means()
    assert (tokens, cost, step) == (K + 1.0, pytest.approx(9.2), 1.0)
    assert cost > (tokens + Z * error) * step  # shut, even counted optimistically
    due = math.ceil((cost - tokens * step) / (PROBE_SHARE * step))
    assert due == 210
    longer = _machine_run(monkeypatch, machine, lookup, costs, n_tokens=300, t=t)
    assert lookup.called_at == [len(prompt) + due]  # one probe, after `due` plain rounds
    assert longer.draft_calls == 1 and longer.prices.plain_rounds == longer.n_rounds - 1


def _peek_target_rows(d_model, seq, drafts, t):
    """The target's rows for this round's drafts: what no honest length may read."""
    if isinstance(d_model, Bigram):  # the synthetic pair
        return probabilities(Bigram(P_TABLE, "peek").extend([seq[-1], *drafts]), t)
    logits = _TARGET_PEEK[0].fresh().extend([*seq, *drafts])  # (len(seq) + n, V)
    return probabilities(logits[len(seq) - 1 :], t)  # (n + 1, V)


def _leaky(monkeypatch, cut):
    """Draft as the honest engine does, then cut the drafts at the first position where
    ``cut(p_row, q_row, x)`` says so: a length chosen with what the draft may not use."""
    honest = gen._draft_step

    def leaky(d_model, seq, k, t, rng, fast_greedy):
        drafted = honest(d_model, seq, k, t, rng, fast_greedy)
        p_rows = _peek_target_rows(d_model, seq, drafted.tokens, t)
        for i, x in enumerate(drafted.tokens):
            if cut(p_rows[i], drafted.q_rows[i], x):
                drafted.tokens, drafted.q_rows = drafted.tokens[:i], drafted.q_rows[:i]
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
def test_a_guarded_runs_first_token_at_temperature_1_follows_the_target(name):
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
