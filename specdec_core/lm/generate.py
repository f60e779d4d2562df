"""Speculative and plain autoregressive generation with real models.

:func:`speculative_generate` runs Leviathan et al. 2023, Algorithm 1 round by round:
the draft proposes K tokens x_i ~ q_i (K draft calls), the target scores the last
accepted token and the K drafts in one call (K+1 rows p_1..p_{K+1}), and
:func:`specdec_core.sampling.decide_round` (the rule behind
:func:`specdec_core.verify_round`, here on rows valid by construction) keeps x_i while
u_i < min(1, p_i(x_i)/q_i(x_i)), then emits a residual sample at the first rejection or
the bonus from p_{K+1}. Both models then roll their caches back to the accepted prefix.
A round whose draft proposed nothing (prompt lookup without a match, the choice table's
unlikely guesses, or the guard stepping aside) is one plain target step, the rule's K = 0 case: its
token is a "plain" token, not a bonus.

Draft length: K every round (``adaptive=None``), or K while drafting is measured to pay
on this machine and plain steps while it does not (``adaptive`` = a
:class:`.adaptive.CostProfile`: the guard, why it stays lossless and why the per-round
planner of issues 20 and 27 was cut are in :mod:`.adaptive`).

Distributions: at temperature T > 0, p and q are softmax(logits / T): exactly the
distributions the models sample from, so the q in the ratio is the q the draft sampled
from. At T = 0 both sides are argmax (one-hot p and q): the rule is :mod:`specdec_core.greedy`
(the draft's token is kept iff it is the target's argmax, so the output equals the
target's greedy output token for token). A traced round runs
:func:`specdec_core.greedy.greedy_decide` (decide_round on the one-hot rows); an untraced
one its closed form :func:`specdec_core.greedy.greedy_match`, proven equal by a test
(building V-wide rows and a RoundResult each round cost about 6 % of a round).

Bookkeeping: each model caches every committed token but the last one, which is fed at
the start of the next call, so a round's single target call feeds K+1 tokens and
returns K+1 rows. Timing uses ``time.perf_counter`` and is split into draft (the K
draft calls and their sampling), verify (the target call on K+1 tokens and the
accept / reject / resample decisions: what checking the drafts costs) and overhead
(rollback, counters, the trace); the prompt's prefill is timed apart and left out of the
decode time, as for the plain baseline (whose step likewise includes its sampling).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..distributions import check_k
from ..errors import InvalidParameterError
from ..greedy import greedy_decide, greedy_match, one_hot_rows
from ..sampling import (
    FINAL_STATUS,
    DraftStatus,
    FinalKind,
    RoundResult,
    TokenStatus,
    acceptance_probability,
    decide_round,
    sample_index,
)
from .adaptive import CostProfile, DraftGuard, PriceLedger, check_costs
from .errors import MAX_NEW_TOKENS, ContextLengthError, PromptError

MAX_TEMPERATURE = 5.0
TOP_N = 10  # bars per position in the trace
# The clock a guarded run measures its rounds by: this thread's CPU time (time spent
# waiting for a core while other sessions run does not count; BLAS runs on this thread).
CLOCK = time.thread_time

# The core's vocabulary (specdec_core.sampling), extended by what only the engine does: a
# round whose draft proposed nothing is one plain target step ("plain", not a bonus), and
# plain decoding's tokens are "target" tokens.
RoundKind = Literal[FinalKind, "plain"]  # how a round's last token was drawn
TokenKind = Literal[TokenStatus, "plain", "target"]  # how a generated token came about
PositionStatus = Literal[DraftStatus, "bonus"]  # "bonus": the position after the drafts
DraftLength = Literal["fixed", "adaptive"]
ROUND_TOKEN_KIND: dict[RoundKind, TokenKind] = {**FINAL_STATUS, "plain": "plain"}


@dataclass(frozen=True)
class PositionTrace:
    """One draft position of a round (position 0..K-1; K is the bonus position).

    A round without drafts has only the position after them (status "bonus"): its p is
    the plain step's distribution.
    """

    token: int  # the drafted token (-1 at the bonus position)
    q_x: float
    p_x: float
    acceptance_probability: float  # min(1, p_x / q_x)
    coin: float | None  # None: never checked (after a rejection) or bonus position
    status: PositionStatus
    overlap: float  # sum_x min(p, q) at this position (expected acceptance rate)
    top_p: tuple[tuple[int, float], ...]  # top-10 of p (token, prob)
    top_q: tuple[tuple[int, float], ...]  # top-10 of q (empty at the bonus position)
    bars: tuple[tuple[int, float, float], ...]  # (token, p, q) for top-10 p and q and x


@dataclass(frozen=True)
class RoundTrace:
    index: int
    start: int  # index in the generated tokens where this round's output begins
    positions: tuple[PositionTrace, ...]  # K draft positions + the bonus position
    n_accepted: int
    final_kind: RoundKind  # "resample" | "bonus" | "plain" (no drafts: one plain step)
    final_token: int
    final_top: tuple[tuple[int, float], ...]  # top-10 of residual or p_{K+1}, + the drawn one
    emitted: tuple[int, ...]


@dataclass(frozen=True)
class GenerationResult:
    """Tokens, how each one was produced, counts and time of one generate call.

    Frozen, with tuples: a run is shared read-only by every session that asks for it
    (``specdec_ui.model_pairs.work``), so no reader can change what another sees.
    """

    prompt_ids: tuple[int, ...]
    tokens: tuple[int, ...]  # the generated tokens (without the prompt)
    kinds: tuple[TokenKind, ...]  # per token: accepted | resampled | bonus | plain | target
    k: int  # drafts per round (a guarded run: K, or none while the guard steps aside)
    temperature: float
    rounds: tuple[RoundTrace, ...] = ()
    n_rounds: int = 0
    drafted: int = 0  # draft tokens proposed
    checked: int = 0  # draft tokens compared with a coin (not those after a rejection)
    accepted: int = 0
    emitted: int = 0  # tokens the rounds emitted, before the last round's surplus is cut
    overlap_sum: float = 0.0  # sum over checked positions of sum_x min(p, q)
    target_calls: int = 0  # decoding calls of the target (the prefill is not counted)
    draft_calls: int = 0  # draft forward passes (<= K a round), or lookups (1 a round)
    draft_sizes: tuple[int, ...] = ()  # drafts proposed, per round
    accepted_sizes: tuple[int, ...] = ()  # drafts kept, per round
    empty_rounds: int = 0  # rounds whose draft proposed nothing (prompt lookup: no match)
    draft_length: DraftLength = "fixed"  # "adaptive": K, or plain steps (the guard)
    time_prefill: float = 0.0
    time_draft: float = 0.0
    time_verify: float = 0.0
    time_total: float = 0.0  # decode phase: draft + verify + overhead
    cpu_total: float = 0.0  # the decode phase's CPU time of this thread (time.thread_time)
    prices: PriceLedger | None = None  # guarded: c, a (the guard), v(n) priced / paid

    @property
    def time_overhead(self) -> float:
        return max(0.0, self.time_total - self.time_draft - self.time_verify)

    @property
    def acceptance_rate(self) -> float:
        """Measured: drafted tokens kept / drafted tokens checked (NaN when none checked)."""
        return self.accepted / self.checked if self.checked else math.nan

    @property
    def expected_acceptance_rate(self) -> float:
        """Mean of sum_x min(p, q) over the checked positions (NaN when none checked).

        Computed in every run, traced or not (at T = 0 p and q are one-hot, so it is 1 at
        a kept draft and 0 at a mismatch).
        """
        return self.overlap_sum / self.checked if self.checked else math.nan

    @property
    def plain_rounds(self) -> int:
        """Rounds whose draft proposed nothing: one plain target step each."""
        return self.draft_sizes.count(0)

    @property
    def bonus_rounds(self) -> int:
        """Rounds that drafted at least one token, kept them all and added the bonus."""
        sizes = zip(self.draft_sizes, self.accepted_sizes, strict=True)
        return sum(n > 0 and a == n for n, a in sizes)

    @property
    def resample_rounds(self) -> int:
        """Rounds that ended with a rejection and a resampled token."""
        return sum(a < n for n, a in zip(self.draft_sizes, self.accepted_sizes, strict=True))

    @property
    def tokens_per_round(self) -> float:
        """Tokens emitted per round (the last round counted in full, before truncation)."""
        return self.emitted / self.n_rounds if self.n_rounds else math.nan

    @property
    def tokens_per_target_call(self) -> float:
        return len(self.tokens) / self.target_calls if self.target_calls else math.nan


@dataclass
class _Tally:
    """A run's counters while it runs (internal): frozen into a :class:`GenerationResult`
    by :meth:`result`. Field names are GenerationResult's."""

    kinds: list = field(default_factory=list)
    rounds: list = field(default_factory=list)
    draft_sizes: list = field(default_factory=list)
    accepted_sizes: list = field(default_factory=list)
    n_rounds: int = 0
    drafted: int = 0
    checked: int = 0
    accepted: int = 0
    emitted: int = 0
    overlap_sum: float = 0.0
    target_calls: int = 0
    draft_calls: int = 0
    empty_rounds: int = 0
    time_draft: float = 0.0
    time_verify: float = 0.0

    def result(self, n_new: int, **given) -> GenerationResult:
        """The frozen result: these counters (lists as tuples, ``kinds`` cut to the
        ``n_new`` tokens kept) and the ``given`` fields (prompt, tokens, times, ...)."""
        counts = {name: getattr(self, name) for name in self.__dataclass_fields__}
        counts = {n: tuple(v) if isinstance(v, list) else v for n, v in counts.items()}
        counts["kinds"] = counts["kinds"][:n_new]
        return GenerationResult(**counts, **given)


def _check_common(models, prompt_ids, k, max_new_tokens, temperature, rng):
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng must be a numpy.random.Generator (seed it to replay).")
    ids = [int(t) for t in np.asarray(prompt_ids, dtype=np.int64).reshape(-1)]
    if not ids:
        raise PromptError("the prompt is empty; type a few words to continue.")
    vocab = models[-1].tokenizer.vocab_size
    for m in models:
        if m.tokenizer.vocab_size != vocab:
            raise InvalidParameterError("draft and target must share one tokenizer.")
    bad = [t for t in ids if not 0 <= t < vocab]
    if bad:
        raise PromptError(f"prompt token id {bad[0]} is outside 0..{vocab - 1}.")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int | np.integer):
        raise InvalidParameterError("max_new_tokens must be a whole number.")
    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise InvalidParameterError(
            f"max_new_tokens is {max_new_tokens}; allowed: 1 to {MAX_NEW_TOKENS}."
        )
    t = float(temperature)
    if not (math.isfinite(t) and 0.0 <= t <= MAX_TEMPERATURE):
        raise InvalidParameterError(
            f"temperature is {temperature!r}; allowed: 0 (greedy) to {MAX_TEMPERATURE:g}."
        )
    need = len(ids) + max_new_tokens + k + 1
    for m in models:
        if need > m.context_length:
            room = m.context_length - len(ids) - k - 1
            hint = f"ask for at most {room} new tokens" if room >= 1 else "shorten the prompt"
            raise ContextLengthError(
                f"prompt ({len(ids)} tokens) + {max_new_tokens} new tokens + K + 1 = {need} "
                f"tokens do not fit the {m.context_length}-token context of {m.name}; {hint}."
            )
    return ids, int(max_new_tokens), t


def probabilities(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Rows of the distribution a model samples from: softmax(logits / T), float64.

    T = 0 is greedy: a one-hot row at the argmax (the first one on ties), no division.
    One float64 copy, then in place: z / T, z - max z, exp, / sum.
    """
    if temperature == 0.0:
        z = np.asarray(logits)
        out = np.zeros(z.shape)
        out[np.arange(z.shape[0]), z.argmax(axis=1)] = 1.0
        return out
    z = np.array(logits, dtype=np.float64)  # (m, V), a copy
    if temperature != 1.0:
        np.divide(z, temperature, out=z)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def verify_block(
    p_rows: np.ndarray, q_rows: np.ndarray, drafts: Sequence[int], rng: np.random.Generator
) -> RoundResult:
    """The decisions of :func:`specdec_core.verify_round`, without re-checking the rows.

    Calls the same kernel, :func:`specdec_core.sampling.decide_round` (Leviathan et al.
    2023, Algorithm 1: keep x_i while u_i < min(1, p_i(x_i) / q_i(x_i)), then a residual
    sample or the bonus), with the same order of random draws (one coin per checked
    position, then one uniform for the final token), so for the same ``rng`` it returns
    the same round as ``verify_round``. The rows come from :func:`probabilities`, valid by
    construction, so the O(K V) validation that ``verify_round`` runs on typed input is
    skipped: it cost as much as a quarter of a target step per round.
    p_rows (K+1, V), q_rows (K, V), drafts (K,).
    """
    return decide_round(p_rows, q_rows, tuple(int(x) for x in drafts), rng=rng)


def _top(row: np.ndarray, n: int = TOP_N) -> tuple[tuple[int, float], ...]:
    idx = np.argpartition(row, -n)[-n:] if row.size > n else np.arange(row.size)
    idx = idx[np.argsort(-row[idx], kind="stable")]
    return tuple((int(i), float(row[i])) for i in idx if row[i] > 0)


def _sample(row: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """x ~ row by inverse CDF with one uniform u: the first x with CDF(x) > u * CDF(V).

    The same token as :func:`specdec_core.sampling.sample_index` for the same u (it is
    called only when rounding puts u * total past the end), with fewer array passes.
    """
    if temperature == 0.0:
        return int(row.argmax())
    u = rng.random()
    cdf = row.cumsum()  # (V,)
    x = int(cdf.searchsorted(u * cdf[-1], side="right"))
    return x if x < cdf.size else int(sample_index(row, u))


def autoregressive_generate(
    target,
    prompt_ids: Sequence[int],
    *,
    max_new_tokens: int,
    temperature: float,
    rng: np.random.Generator,
    on_token: Callable[[int], None] | None = None,
) -> GenerationResult:
    """Plain decoding: one target call per token, x ~ softmax(logits / T) (argmax at T = 0)."""
    ids, n_new, t = _check_common([target], prompt_ids, 0, max_new_tokens, temperature, rng)
    model = target.fresh()
    start = time.perf_counter()
    if len(ids) > 1:
        model.extend(ids[:-1], last_only=True)
    prefill = time.perf_counter() - start
    last, tokens = ids[-1], []
    cpu, start = time.thread_time(), time.perf_counter()
    for i in range(n_new):
        logits = model.extend((last,))  # (1, V)
        if t == 0.0:  # greedy: the argmax, the same token _sample picks from one-hot p
            last = int(logits[0].argmax())
        else:
            last = _sample(probabilities(logits, t)[0], t, rng)
        tokens.append(last)
        if on_token is not None:
            on_token(i + 1)
    total = time.perf_counter() - start
    return GenerationResult(
        prompt_ids=tuple(ids),
        tokens=tuple(tokens),
        kinds=("target",) * n_new,
        k=0,
        temperature=t,
        target_calls=n_new,
        time_prefill=prefill,
        time_verify=total,
        time_total=total,
        cpu_total=time.thread_time() - cpu,
    )


@dataclass
class _Draft:
    """What the draft proposed in one round (internal to :func:`speculative_generate`)."""

    tokens: list[int]
    q_rows: np.ndarray | None  # (n, V); None on the greedy fast path
    calls: int  # forward passes of a model draft, or 1 lookup (0: the guard kept it plain)


@dataclass
class _Round:
    """What one round proposed and decided (internal to :func:`speculative_generate`)."""

    drafts: list[int]
    n_accepted: int
    emitted: tuple[int, ...]  # accepted drafts + the resampled, bonus or plain token
    final_kind: RoundKind
    checked: int  # drafts compared with a coin (up to the first rejection)
    overlaps: tuple[float, ...]  # sum_x min(p, q) at each checked position
    result: RoundResult | None = None  # None on the greedy fast path
    p_rows: np.ndarray | None = None  # (K+1, V)
    q_rows: np.ndarray | None = None  # (K, V)
    p_last: np.ndarray | None = None  # (V,) the target's row after the drafts (T > 0 / traced)
    best: np.ndarray | None = None  # (k+1,) the target's argmax per row (greedy fast path)


@dataclass(frozen=True)
class _Run:
    """One speculative run, handed from round to round (internal to
    :func:`speculative_generate`): its models, settings and the state that grows in place
    (``seq``, ``tally``; a guard ``policy`` learns as it goes)."""

    draft: object  # the draft's fresh copy: a model, or a lookup draft (``propose``)
    target: object  # the target's fresh copy
    seq: list[int]  # committed tokens, prompt included; both models cache seq[:-1]
    n_prompt: int  # prompt tokens at the start of seq
    tally: _Tally
    policy: DraftGuard | None  # the guard of a guarded run, or None for a fixed K
    temperature: float
    rng: np.random.Generator
    trace: bool  # keep each round's trace (step mode)

    @property
    def fast_greedy(self) -> bool:
        """T = 0, untraced: no rows are built and the greedy rule's closed form decides."""
        return self.temperature == 0.0 and not self.trace


def _lookup_drafts(d_model, seq, k, fast_greedy) -> _Draft:
    """A draft without a model: ``propose`` returns 0..K tokens at once; q is one-hot
    (None on the greedy fast path). K = 0 (the guard keeps the round plain): no call."""
    drafts = d_model.propose(seq, k) if k else []
    q_rows = None if fast_greedy else one_hot_rows(drafts, d_model.tokenizer.vocab_size)
    return _Draft(drafts, q_rows, 1 if k else 0)  # q_rows (n, V)


def _model_drafts(d_model, seq, k, t, rng, fast_greedy) -> _Draft:
    """K drafts x_i ~ q_i = softmax(logits / T) (argmax at T = 0), and q_rows.

    One call per draft; the first feeds every committed token the draft has not read
    yet."""
    feed = seq[d_model.length :]
    drafts, rows = [], []
    for _ in range(k):
        logits = d_model.extend(feed, last_only=True)  # (1, V)
        q_row = None if fast_greedy else probabilities(logits, t)[0]
        x = int(logits[0].argmax()) if q_row is None else _sample(q_row, t, rng)
        drafts.append(x)
        rows.append(q_row)
        feed = (x,)
    if fast_greedy:
        return _Draft(drafts, None, k)
    q_rows = np.array(rows) if rows else np.zeros((0, d_model.tokenizer.vocab_size))
    return _Draft(drafts, q_rows, k)  # q_rows (k, V)


def _draft_step(d_model, seq, k, t, rng, fast_greedy) -> _Draft:
    """Up to K drafts: a lookup draft (``propose``, see :mod:`.prompt_lookup`) returns
    0..K tokens at once with one-hot q; a model draft makes one call per token."""
    if hasattr(d_model, "propose"):
        return _lookup_drafts(d_model, seq, k, fast_greedy)
    return _model_drafts(d_model, seq, k, t, rng, fast_greedy)


def _verify_step(run: _Run, drafts: list[int], q_rows: np.ndarray | None) -> _Round:
    """One target call on the last committed token + k drafts (k+1 rows), then the rule.

    The rule of Leviathan et al. 2023, Alg. 1, :func:`specdec_core.sampling.decide_round`:
    on p = softmax(logits / T) via :func:`verify_block` (a round without drafts, k = 0, is
    its K = 0 case: one plain step); at T = 0 the greedy rule of :mod:`specdec_core.greedy`
    on the target's argmax (:func:`_greedy_round` untraced). An untraced plain step at
    T > 0 draws its token as plain decoding does, with the same uniform as the rule's
    K = 0 case. The overlap sum_x min(p, q) at the checked positions (a statistic, not
    part of the rule) is computed in every run.
    """
    k, t = len(drafts), run.temperature
    logits = run.target.extend([run.seq[-1], *drafts])  # (k+1, V)
    if run.fast_greedy:
        return _greedy_round(drafts, logits.argmax(axis=1))
    p_rows = probabilities(logits, t)  # (k+1, V)
    if not (k or run.trace):  # a plain step: the token only, without the rule's record
        token = _sample(p_rows[0], t, run.rng)
        return _Round(drafts, 0, (token,), "plain", 0, (), p_last=p_rows[0])
    if t == 0.0:  # the greedy rule: decide_round on the one-hot rows of the argmax
        rr = greedy_decide(logits.argmax(axis=1), drafts, p_rows.shape[1], run.rng)
    else:
        rr = verify_block(p_rows, q_rows, drafts, run.rng)
    checked = len(rr.steps)
    overlaps = np.minimum(p_rows[:checked], q_rows[:checked]).sum(axis=1)  # (checked,)
    return _Round(
        drafts,
        rr.n_accepted,
        rr.emitted_tokens,
        rr.final_kind if k else "plain",
        checked,
        tuple(overlaps.tolist()),
        result=rr,
        p_rows=p_rows,
        q_rows=q_rows,
        p_last=p_rows[k],
    )


def _greedy_round(drafts: list[int], best: np.ndarray) -> _Round:
    """An untraced round at T = 0: the greedy rule's closed form
    (:func:`specdec_core.greedy.greedy_match`, equal to
    :func:`specdec_core.greedy.greedy_decide` by test) on the target's argmax per row
    ``best`` (k+1,): no V-wide rows, no random draw. One-hot p and q overlap 1 at a kept
    draft and 0 at the mismatch."""
    k = len(drafts)
    n, emitted = greedy_match(best.tolist(), drafts)
    kind, checked = ("resample", n + 1) if n < k else ("bonus" if k else "plain", n)
    overlaps = (1.0,) * n + (0.0,) * (checked - n)
    return _Round(drafts, n, emitted, kind, checked, overlaps, best=best)


def _count(tally: _Tally, rnd: _Round, parallel_verify: bool, draft_calls: int) -> None:
    """Add one round to the counters of ``tally``."""
    k = len(rnd.drafts)
    tally.n_rounds += 1
    tally.drafted += k
    tally.draft_sizes.append(k)
    tally.accepted_sizes.append(rnd.n_accepted)
    tally.empty_rounds += k == 0
    tally.checked += rnd.checked
    tally.accepted += rnd.n_accepted
    tally.emitted += len(rnd.emitted)
    tally.draft_calls += draft_calls
    tally.target_calls += 1 if parallel_verify else k + 1
    tally.overlap_sum += sum(rnd.overlaps)
    tally.kinds.extend(["accepted"] * rnd.n_accepted + [ROUND_TOKEN_KIND[rnd.final_kind]])


def _guard(adaptive, k: int, lookup: bool) -> DraftGuard | None:
    """The run's guard, or None for a fixed K (checked costs otherwise)."""
    if adaptive is None:
        return None
    return DraftGuard(check_costs(adaptive, k, per_token=not lookup), k)


def speculative_generate(
    draft,
    target,
    prompt_ids: Sequence[int],
    *,
    k: int,
    max_new_tokens: int,
    temperature: float,
    rng: np.random.Generator,
    trace: bool = True,
    on_round: Callable[[int], None] | None = None,
    adaptive: CostProfile | None = None,
) -> GenerationResult:
    """Speculative decoding (Leviathan et al. 2023, Alg. 1) with K drafts per round.

    Each round: draft (:func:`_draft_step`), verify (:func:`_verify_step`), roll both
    caches back to the accepted prefix, count (:func:`_count`). Returns a frozen
    :class:`GenerationResult`: ``tokens`` (exactly ``max_new_tokens``; the last round's
    surplus is cut), ``kinds``, the per-round trace (``trace=False`` skips it, for
    benchmarks; at T = 0 it also takes the greedy rule's closed form), counts and
    wall-clock split. ``on_round(n_tokens_so_far)`` is called after every round.

    ``adaptive``: None drafts K tokens every round (a lookup draft: up to K). A
    :class:`.adaptive.CostProfile` (:func:`specdec_core.lm.measure_costs`, measured on
    this machine for this pair, v(k) up to at least K) adds the guard: a round drafts K
    while drafting rounds are measured at least as fast as plain steps on this run's
    clock, and is a plain step while they are not, with a probe now and then
    (:mod:`.adaptive`). Lossless either way.
    """
    k = check_k(k)
    ids, n_new, t = _check_common([draft, target], prompt_ids, k, max_new_tokens, temperature, rng)
    d_model, t_model = draft.fresh(), target.fresh()
    lookup = hasattr(d_model, "propose")  # a draft without a model (prompt lookup)
    policy = _guard(adaptive, k, lookup)
    start = time.perf_counter()
    if len(ids) > 1:
        if not lookup:
            d_model.extend(ids[:-1], last_only=True)
        t_model.extend(ids[:-1], last_only=True)
    prefill = time.perf_counter() - start
    run = _Run(d_model, t_model, list(ids), len(ids), _Tally(), policy, t, rng, trace)
    cpu, start = time.thread_time(), time.perf_counter()
    while len(run.seq) - len(ids) < n_new:
        _rounds(run, k, target.parallel_verify, n_new - len(run.seq) + len(ids))
        if on_round is not None:
            on_round(min(n_new, len(run.seq) - len(ids)))
    total, cpu_total = time.perf_counter() - start, time.thread_time() - cpu
    return run.tally.result(
        n_new,
        prompt_ids=tuple(ids),
        tokens=tuple(run.seq[len(ids) : len(ids) + n_new]),
        k=k,
        temperature=t,
        draft_length="fixed" if policy is None else "adaptive",
        time_prefill=prefill,
        time_total=total,
        cpu_total=cpu_total,
        prices=None if policy is None else policy.ledger(),
    )


def _rounds(run: _Run, k: int, parallel_verify: bool, left: int) -> None:
    """One round; or, when a guarded run's guard keeps the next rounds plain
    (:meth:`.adaptive.DraftGuard.plain_rounds`), those plain steps (at most ``left``,
    the tokens still to make): traced one by one, or untraced in one tight loop that
    does what plain decoding does per token and books them together."""
    policy = run.policy
    if policy is None:
        _one_round(run, k, parallel_verify)
        return
    start = CLOCK()  # the guard is timed with the rounds it decides
    plain = min(policy.plain_rounds(), left)
    if not plain:
        _one_round(run, k, parallel_verify, start)
    elif not run.trace:
        _plain_stretch(run, plain, start)
    else:
        policy.pending_s += CLOCK() - start
        for _ in range(plain):
            _one_round(run, 0, parallel_verify, CLOCK())


def _plain_stretch(run: _Run, m: int, guard_start: float) -> None:
    """m plain rounds in a row, untraced: per token the target's call on the last token
    and its choice (argmax at T = 0, else x ~ softmax(logits / T) with one uniform, the
    draws of a round without drafts), as :func:`autoregressive_generate` makes them.
    Neither cache needs a rollback (the target's grows by one a token, the draft's is
    not touched). Booked as m plain rounds."""
    seq, tally, policy, t = run.seq, run.tally, run.policy, run.temperature
    start, wall = CLOCK(), time.perf_counter()
    last = seq[-1]
    for _ in range(m):
        logits = run.target.extend((last,))  # (1, V)
        last = (
            int(logits[0].argmax())
            if t == 0.0
            else _sample(probabilities(logits, t)[0], t, run.rng)
        )
        seq.append(last)
    end = CLOCK()
    tally.time_verify += time.perf_counter() - wall
    tally.n_rounds += m
    tally.draft_sizes.extend([0] * m)
    tally.accepted_sizes.extend([0] * m)
    tally.empty_rounds += m
    tally.emitted += m
    tally.target_calls += m
    tally.kinds.extend(["plain"] * m)
    guard_s = start - guard_start + policy.pending_s
    policy.record_plain(m, guard_s=guard_s, verify_s=end - start)
    policy.pending_s = CLOCK() - end


def _one_round(run: _Run, k: int, parallel_verify: bool, start=None) -> None:
    """Draft, verify, commit, roll both caches back, count, trace, and (guarded) book;
    ``start``: the thread's CPU clock when a guarded round began (before its guard)."""
    seq, tally, policy = run.seq, run.tally, run.policy
    perf, base = time.perf_counter, len(seq)
    t0 = perf()
    if policy is not None:
        guarded_at = CLOCK()
    drafted = _draft_step(run.draft, seq, k, run.temperature, run.rng, run.fast_greedy)
    t1 = perf()
    if policy is not None:
        drafted_at = CLOCK()
    rnd = _verify_step(run, drafted.tokens, drafted.q_rows)
    tally.time_draft += t1 - t0
    tally.time_verify += perf() - t1  # the target call and the accept / reject decisions
    seq.extend(rnd.emitted)
    run.target.rollback(base + rnd.n_accepted)
    run.draft.rollback(min(run.draft.length, base + rnd.n_accepted))
    _count(tally, rnd, parallel_verify, drafted.calls)
    if policy is not None:
        verified_at = CLOCK()
        guard_s = guarded_at - start + policy.pending_s
        seconds = (drafted_at - guarded_at, guard_s, verified_at - drafted_at)
        if k:
            policy.record(len(rnd.drafts), len(rnd.emitted), drafted.calls, seconds)
        else:  # a traced plain round of the guard's
            policy.record_plain(1, guard_s=guard_s, verify_s=seconds[2])
        policy.pending_s = CLOCK() - verified_at
    if run.trace:
        index, begins = tally.n_rounds - 1, base - run.n_prompt
        tally.rounds.append(
            _round_trace(index, begins, rnd.result, rnd.p_rows, rnd.q_rows, rnd.final_kind)
        )


def _round_trace(index, start, rr, p_rows, q_rows, final_kind: RoundKind) -> RoundTrace:
    k = rr.k_drafts
    positions = []
    for i in range(k):
        x = rr.draft_tokens[i]
        p_x, q_x = float(p_rows[i, x]), float(q_rows[i, x])
        if i < len(rr.steps):
            s = rr.steps[i]
            status, coin = ("accepted" if s.accepted else "rejected"), s.coin
            a = s.acceptance_probability
        else:  # after the first rejection: never checked (no coin)
            status, coin, a = "discarded", None, acceptance_probability(p_x, q_x)
        top_p, top_q = _top(p_rows[i]), _top(q_rows[i])
        union = list(dict.fromkeys([x] + [t for t, _ in top_p] + [t for t, _ in top_q]))
        union.sort(key=lambda t: -max(p_rows[i, t], q_rows[i, t]))
        bars = tuple((t, float(p_rows[i, t]), float(q_rows[i, t])) for t in union)
        positions.append(
            PositionTrace(
                x,
                q_x,
                p_x,
                a,
                coin,
                status,
                float(np.minimum(p_rows[i], q_rows[i]).sum()),
                top_p,
                top_q,
                bars,
            )
        )
    top_bonus = _top(p_rows[k])
    positions.append(
        PositionTrace(
            -1,
            0.0,
            0.0,
            0.0,
            None,
            "bonus",
            0.0,
            top_bonus,
            (),
            tuple((t, pr, 0.0) for t, pr in top_bonus),
        )
    )
    final_top = _top(rr.final_distribution)
    if all(t != rr.final_token for t, _ in final_top):  # a less likely token was drawn
        final_top += ((rr.final_token, float(rr.final_distribution[rr.final_token])),)
    return RoundTrace(
        index,
        start,
        tuple(positions),
        rr.n_accepted,
        final_kind,
        rr.final_token,
        final_top,
        rr.emitted_tokens,
    )
