"""Block verification: the K drafts of a round decided jointly, exact and never shorter.

Sun, Mendlovic, Leviathan, Aharoni, Beirami, Ro, Suresh, "Block Verification Accelerates
Speculative Decoding", ICLR 2025 (arXiv 2403.10444), Algorithm 2. With p_i the target's
and q_i the draft's row at position i (0-based rows here: ``p_rows[i]`` is position i + 1):

- weights: w_0 = 1, w_i = min(1, w_{i-1} p_i(x_i) / q_i(x_i)) for i = 1..K;
- leftover at position i + 1 after i kept drafts: max(0, w_i p_{i+1} - q_{i+1}), of mass
  m_i = sum_x max(0, w_i p_{i+1}(x) - q_{i+1}(x)) (m_0 = 1 - alpha_1);
- chance that a round may stop after i kept drafts: h_i = m_i / (m_i + 1 - w_i) for
  1 <= i < K (1 when both are 0), h_K = w_K, h_0 = 1;
- coins eta_1..eta_K ~ U[0, 1): tau = the last i with eta_i < h_i (0 if none); keep
  x_1..x_tau, then one token from p_{K+1} (the bonus) when tau = K, else from the
  normalised leftover max(0, w_tau p_{tau+1} - q_{tau+1}).

The output follows p exactly (the paper's Theorem 1; here checked by enumeration over every
draft sequence in ``tests/core/test_block_verification.py``), and a round keeps at least as
many drafts as the token-by-token rule (optimal, the paper's Theorem 2):
P(tau >= i) = E_q[w_i] = sum_{x_1..x_i} min_{0<=j<=i} q(x_1..x_j) p(x_{j+1}..x_i), against
alpha_1 ... alpha_i token by token. Drafts are NOT kept independently with one chance: the
round-length law is not alpha^n (1 - alpha) (:attr:`Rule.independent_keeps` is False).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import InvalidParameterError
from ..montecarlo import SMALL_VOCAB, ChunkOutcome, DraftRowsShape, token_dtype
from ..sampling import sample_index
from . import published  # noqa: F401  (the published rules come first in the menus)
from .position import draw
from .registry import PositionStep, RoundRecord, Rule, RuleKind, register_rule

MAX_WEIGHT_STATES = 1 << 17  # distinct weights the exact round-length law may track
WEIGHT_DECIMALS = 15  # weights equal to this many decimals are one state (error <= 1e-15)


def weights(p_rows: np.ndarray, q_rows: np.ndarray, drafts) -> np.ndarray:
    """(K+1,) w_0 = 1, w_i = min(1, w_{i-1} p_i(x_i) / q_i(x_i)) (Algorithm 2, line 4)."""
    w = np.ones(len(drafts) + 1)
    for i, x in enumerate(drafts):
        w[i + 1] = min(1.0, w[i] * p_rows[i, x] / q_rows[i, x])
    return w


def leftover(w: float, p_row: np.ndarray, q_row: np.ndarray) -> np.ndarray:
    """(V,) max(0, w p - q): what is left of the target at the next position after a
    prefix of weight w (unnormalised; its sum is the mass m)."""
    return np.maximum(w * p_row - q_row, 0.0)


def stop_chances(p_rows: np.ndarray, q_rows: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(K+1,) h_0 = 1, h_i = m_i / (m_i + 1 - w_i) for 0 < i < K, h_K = w_K (line 5)."""
    k = q_rows.shape[0]
    h = np.ones(k + 1)
    for i in range(1, k):
        mass = float(leftover(w[i], p_rows[i], q_rows[i]).sum())
        denominator = mass + 1.0 - w[i]
        h[i] = mass / denominator if denominator > 0 else 1.0
    h[k] = w[k]
    return h


@dataclass(frozen=True)
class BlockPlan:
    """What block verification does with one drafted block, before its coins:
    ``tau_law[t]`` = P(tau = t | drafts), ``last_law[t]`` the law (V,) of the token after
    t kept drafts (the bonus row for t = K)."""

    tau_law: np.ndarray  # (K+1,)
    last_law: np.ndarray  # (K+1, V)


def _last_token_law(p_rows, q_rows, w, t: int) -> np.ndarray:
    """(V,) the token after t kept drafts: p_{K+1} when t = K, else the normalised leftover
    max(0, w_t p_{t+1} - q_{t+1}) (p_{t+1} if it is empty: that t has probability 0)."""
    k = q_rows.shape[0]
    if t == k:
        return p_rows[k]
    left = leftover(w[t], p_rows[t], q_rows[t])
    total = left.sum()
    return left / total if total > 0 else p_rows[t]


def block_plan(p_rows: np.ndarray, q_rows: np.ndarray, drafts) -> BlockPlan:
    """P(tau = t | drafts) = h_t prod_{j > t} (1 - h_j) and the last token's law per t."""
    w = weights(p_rows, q_rows, drafts)
    h = stop_chances(p_rows, q_rows, w)
    later_fail = np.append(np.cumprod((1.0 - h[1:])[::-1])[::-1], 1.0)  # prod_{j>t}(1 - h_j)
    last = np.stack([_last_token_law(p_rows, q_rows, w, t) for t in range(len(w))])
    return BlockPlan(tau_law=h * later_fail, last_law=last)


def block_round(p_rows: np.ndarray, q_rows: np.ndarray, rng: np.random.Generator) -> RoundRecord:
    """One round, drafted and decided with ``rng``: drafts x_i ~ q_i (one uniform each),
    coins eta_1..eta_K, then the last token's uniform (the chunk's order of draws)."""
    drafts = tuple(draw(q_row, rng) for q_row in q_rows)
    w = weights(p_rows, q_rows, drafts)
    h = stop_chances(p_rows, q_rows, w)
    coins = rng.random(len(drafts))
    passed = np.flatnonzero(coins < h[1:])
    tau = int(passed[-1]) + 1 if passed.size else 0
    last = int(sample_index(_last_token_law(p_rows, q_rows, w, tau), rng.random()))
    return RoundRecord(
        drafted=drafts,
        numbers={"w": tuple(w[1:].tolist()), "h": tuple(h[1:].tolist()), "u": tuple(coins)},
        n_kept=tau,
        emitted=(*drafts[:tau], last),
        bonus=tau == len(drafts),
    )


def block_step(p_target, q_draft, rng) -> PositionStep:
    """One drafted position: a round of K = 1 (where block and token-by-token agree)."""
    record = block_round(np.stack([p_target, p_target]), q_draft[None, :], rng)
    return PositionStep(record.drafted, record.n_kept == 1, record.emitted[0], record)


def emitted_block(p_target, q_draft) -> np.ndarray:
    """(V,) the token at one drafted position (K = 1), summed over the draft from the rule's
    own plan: q(x) [w_1 onehot(x) + (1 - w_1) norm(max(0, p - q))] = p."""
    p_rows, q_rows = np.stack([p_target, p_target]), q_draft[None, :]
    out = np.zeros(p_target.size)
    for x in np.flatnonzero(q_draft > 0):
        plan = block_plan(p_rows, q_rows, (int(x),))
        out[x] += q_draft[x] * plan.tau_law[1]
        out += q_draft[x] * plan.tau_law[0] * plan.last_law[0]
    return out


def survival(p_rows: np.ndarray, q_rows: np.ndarray) -> np.ndarray:
    """(K+1,) P(tau >= i) = E_q[w_i] (s_0 = 1), exactly: the law of w_i under the draft,
    weights equal to ``WEIGHT_DECIMALS`` decimals merged (a Lindley recursion on log w)."""
    k = q_rows.shape[0]
    states, mass = np.ones(1), np.ones(1)
    out = np.ones(k + 1)
    for i in range(k):
        drafted = q_rows[i] > 0
        ratio = p_rows[i, drafted] / q_rows[i, drafted]  # (V',)
        grown = np.minimum(1.0, states[:, None] * ratio[None, :]).ravel()
        weight = (mass[:, None] * q_rows[i, drafted][None, :]).ravel()
        keep = grown > 0  # a weight of 0 stays 0: it adds nothing to any later E[w]
        states, inverse = np.unique(grown[keep].round(WEIGHT_DECIMALS), return_inverse=True)
        mass = np.bincount(inverse.ravel(), weights=weight[keep], minlength=states.size)
        if states.size > MAX_WEIGHT_STATES:
            raise InvalidParameterError(
                f"block verification: the exact round-length law of this p and q needs more "
                f"than {MAX_WEIGHT_STATES:,} distinct weights by position {i + 1} of K = {k}; "
                "allowed: a smaller K, or fewer tokens (or fewer distinct ratios p/q)."
            )
        out[i + 1] = float(states @ mass)
    return out


def _conditional_keeps(reach: np.ndarray) -> np.ndarray:
    """(K,) P(position i keeps | reached) = s_i / s_{i-1} (0 when s_{i-1} = 0)."""
    before = reach[:-1]
    return np.divide(reach[1:], before, out=np.zeros_like(before), where=before > 0)


@dataclass(frozen=True)
class BlockTables(DraftRowsShape):
    """A run's constants: the rows, the ratios p/q, and per row the tokens sorted by
    q/p (a token is in the leftover max(0, w p - q) iff q/p < w) with running sums."""

    p_rows: np.ndarray  # (K+1, V)
    q_rows: np.ndarray  # (K, V)
    keep_probabilities: np.ndarray  # (K,) s_i / s_{i-1}: the exact round-length law

    @cached_property
    def ratio(self) -> np.ndarray:
        """(K, V) p_i / q_i where q_i > 0 (a drafted token never has q = 0)."""
        q = self.q_rows
        return np.divide(self.p_rows[:-1], q, out=np.zeros_like(q), where=q > 0)

    @cached_property
    def sorted_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(order, threshold q/p, cumulative p, cumulative q), each (K, V) or (K, V+1)."""
        p, q = self.p_rows[:-1], self.q_rows
        threshold = np.divide(q, p, out=np.full_like(q, np.inf), where=p > 0)  # (K, V)
        order = np.argsort(threshold, axis=1, kind="stable")
        take = np.take_along_axis
        cum_p = np.cumsum(np.pad(take(p, order, 1), ((0, 0), (1, 0))), axis=1)  # (K, V+1)
        cum_q = np.cumsum(np.pad(take(q, order, 1), ((0, 0), (1, 0))), axis=1)
        return order, take(threshold, order, 1), cum_p, cum_q

    @cached_property
    def final_rows(self) -> np.ndarray:
        """(1, V) the bonus row p_{K+1} (the leftovers depend on w: sampled apart)."""
        return self.p_rows[-1:]

    @cached_property
    def _keys(self) -> np.ndarray:
        """(K * V,) row + q/p / 2 of every sorted token (q/p capped at 1.5: a token with
        q/p >= 1 is never in a leftover, as w <= 1): one ascending array for all rows."""
        k, v = self.q_rows.shape
        capped = np.minimum(self.sorted_rows[1], 1.5) / 2.0  # (K, V) in [0, 0.75]
        return (capped + np.arange(k)[:, None]).ravel()

    def in_leftover(self, row, w: np.ndarray) -> np.ndarray:
        """(n,) how many sorted tokens of ``row`` (one row, or one per round) are in
        max(0, w p - q), i.e. have q/p < w."""
        if np.ndim(row) == 0 and self.vocab <= SMALL_VOCAB:  # V cheap passes, no search
            count = np.zeros(w.shape, dtype=np.intp)
            for level in self.sorted_rows[1][row]:
                if level >= 1.0:
                    break  # sorted: no later token is in a leftover either
                count += level < w
            return count
        rows = np.broadcast_to(row, w.shape)
        found = np.searchsorted(self._keys, rows + w / 2.0, side="left")
        return found - rows * self.vocab

    def leftover_mass(self, row, w: np.ndarray) -> np.ndarray:
        """(n,) m(w) = w P_c - Q_c over the c tokens in the leftover (running sums)."""
        _, _, cum_p, cum_q = self.sorted_rows
        c = self.in_leftover(row, w)
        if np.ndim(row) == 0:  # one row: a take from it (much cheaper than a 2-D index)
            mass = w * cum_p[row].take(c)
            mass -= cum_q[row].take(c)
        else:
            mass = w * cum_p[row, c] - cum_q[row, c]
        return np.maximum(mass, 0.0, out=mass)

    def sample_leftover(self, row, w: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(n,) tokens of norm(max(0, w p - q)) (the row of each round in ``row``): the
        smallest c' with w P_c' - Q_c' >= u m, by a binary search over the sorted tokens
        (all rounds at once)."""
        order, _, cum_p, cum_q = self.sorted_rows
        rows = np.broadcast_to(row, w.shape)
        hi = np.maximum(self.in_leftover(rows, w), 1)
        level = u * self.leftover_mass(rows, w)
        lo = np.ones_like(hi)
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            below = w * cum_p[rows, mid] - cum_q[rows, mid] < level
            lo, hi = np.where(below, mid + 1, lo), np.where(below, hi, mid)
        return order[rows, lo - 1]


def block_tables(p_rows: np.ndarray, q_rows: np.ndarray) -> BlockTables:
    """Once per run: the rows and the exact keep chances s_i / s_{i-1} (:func:`survival`)."""
    keep = _conditional_keeps(survival(p_rows, q_rows))
    return BlockTables(p_rows=p_rows, q_rows=q_rows, keep_probabilities=keep)


def _stop_chance_column(tables: BlockTables, j: int, w: np.ndarray) -> np.ndarray:
    """(n,) h at position j + 1 for weights w: m / (m + 1 - w), or w at the last position."""
    if j == tables.k_drafts - 1:
        return w
    mass = tables.leftover_mass(j + 1, w)
    denominator = mass + 1.0
    denominator -= w
    return np.divide(mass, denominator, out=np.ones_like(w), where=denominator > 0)


def block_chunk(tables: BlockTables, n: int, rng: np.random.Generator, *, weighted=True):
    """n rounds of block verification. Random draws, in order: drafts (n, K), coins (n, K),
    last tokens (n,). ``weighted=False`` is the bug of :data:`UNWEIGHTED`: the leftover
    forgets the weight (max(0, p - q) instead of max(0, w_tau p - q))."""
    k = tables.k_drafts
    u_drafts = tables.scratch.draw(rng, n, k, "drafts", by_position=True)  # (K, n)
    coins = tables.scratch.draw(rng, n, k, "coins", by_position=False)  # (n, K)
    drafts = np.zeros((k, n), dtype=token_dtype(tables.vocab))
    w, w_tau = np.ones(n), np.ones(n)
    tau = np.zeros(n, dtype=np.intp)
    for j in range(k):
        drafts[j] = x = tables.draft_sampler.column(j, u_drafts[j])
        np.minimum(w * tables.ratio[j].take(x), 1.0, out=w)
        stops = coins[:, j] < _stop_chance_column(tables, j, w)
        np.copyto(tau, j + 1, where=stops)
        np.copyto(w_tau, w, where=stops)
    last = _last_tokens(tables, tau, w_tau, rng, weighted)
    return ChunkOutcome(n_accepted=tau, drafts=drafts, last=last, vocab=tables.vocab)


def _last_tokens(tables: BlockTables, tau, w_tau, rng, weighted: bool) -> np.ndarray:
    """(n,) the bonus from p_{K+1} where tau = K, else a token of the leftover at tau + 1."""
    u = rng.random(tau.size)
    last = np.empty(tau.size, dtype=np.intp)
    bonus = tau == tables.k_drafts
    last[bonus] = tables.final_sampler.column(0, u[bonus])
    rest = np.flatnonzero(~bonus)
    w = w_tau[rest] if weighted else np.ones(rest.size)
    last[rest] = tables.sample_leftover(tau[rest], w, u[rest])
    return last


def expected_block(p_target, q_draft, k: int) -> float:
    """E[tokens per round] = sum_{i=0..K} P(tau >= i) = 1 + sum_{i=1..K} E_q[w_i]."""
    p, q = np.asarray(p_target, dtype=np.float64), np.asarray(q_draft, dtype=np.float64)
    return _iid_expected(tuple(p.tolist()), tuple(q.tolist()), int(k))


@functools.lru_cache(maxsize=256)
def _iid_expected(p: tuple[float, ...], q: tuple[float, ...], k: int) -> float:
    """:func:`expected_block` for one p and q at every position (kept: a page asks for the
    same pair at several K, and the exact law costs up to tens of milliseconds)."""
    return float(survival(np.tile(p, (k + 1, 1)), np.tile(q, (k, 1))).sum())


# ----------------------------------------------------------------------------- the bug
def unweighted_plan(p_rows: np.ndarray, q_rows: np.ndarray, drafts) -> BlockPlan:
    """The bug: the leftover after tau kept drafts is max(0, p - q), forgetting w_tau."""
    plan = block_plan(p_rows, q_rows, drafts)
    ones = np.ones(len(drafts) + 1)
    last = [_last_token_law(p_rows, q_rows, ones, t) for t in range(len(drafts) + 1)]
    return BlockPlan(tau_law=plan.tau_law, last_law=np.stack(last))


def _unweighted_chunk(tables, n, rng):
    return block_chunk(tables, n, rng, weighted=False)


def _unweighted_step(p_target, q_draft, rng) -> PositionStep:
    """At one position (w_0 = 1) the bug changes nothing: :func:`block_step`."""
    return block_step(p_target, q_draft, rng)


BLOCK = register_rule(
    Rule(
        name="block_verification",
        kind=RuleKind.EXACT,
        step=block_step,
        emitted=emitted_block,
        tables=block_tables,
        chunk=block_chunk,
        expected=expected_block,
        source=block_plan,
        independent_keeps=False,
        round_step=block_round,
    )
)
UNWEIGHTED = register_rule(
    Rule(
        name="block_unweighted_leftover",
        kind=RuleKind.BUG_OF,
        breaks="block_verification",
        step=_unweighted_step,
        emitted=emitted_block,
        tables=block_tables,
        chunk=_unweighted_chunk,
        expected=expected_block,
        source=unweighted_plan,
        labs=("variants",),  # the lab's presets have p/q ratios that hide it (a tie above 1)
        independent_keeps=False,
        position_law_broken=False,
    )
)
