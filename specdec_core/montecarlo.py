"""One chunk of simulated rounds, step by step: draft, verify, emit, count.

The building blocks of :func:`specdec_core.simulate_rounds`. A run first builds its
:class:`RoundTables` once (what every round of that variant reuses, its samplers
included), then calls a chunk simulator for blocks of ``n`` rounds at a time. A chunk
handles all ``n`` rounds in a few numpy calls per draft position, exactly as
:func:`specdec_core.verify_round` handles one round (Leviathan et al. 2023,
Algorithm 1; seed 000, Steps 1-6):

1. draft: x_i ~ q_i for i = 1..K (inverse CDF of one uniform per draft);
2. verify: keep x_i while u_i < A_i(x_i), A_i(x) = min(1, p_i(x) / q_i(x));
3. final: after n kept drafts, one token from F_n (the residual
   norm(max(0, p_{n+1} - q_{n+1})) when n < K, the bonus p_{K+1} when n = K);
4. count: tokens by position in the round, rounds by drafts kept and by length.

Speed: the uniforms are drawn round by round (the seed's stream), then read position
by position (one contiguous column per draft position), so every step is a pass over
n numbers with the position's own constants; the run's tables and samplers are built
once, not once per chunk. A chunk simulator returns a :class:`ChunkOutcome` (what each
round emitted), so a new rule (a variant) only has to write its own chunk function;
counting is shared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np

from .sampling import _overlap, acceptance_probability, residual_distribution

LOOKUP_BITS = 12  # inverse-CDF lookup: 2**12 equal buckets of [0, 1) per row
SMALL_VOCAB = 16  # up to this many tokens, count CDF steps below u instead (no table)


class DraftRowsShape:
    """K, V and the samplers read off the rows: shared by the tables of every variant.

    The samplers are built on first use and kept with the tables, so a run builds
    them once, not once per chunk.
    """

    q_rows: np.ndarray  # (K, V) set by the dataclass that uses this
    final_rows: np.ndarray  # (K+1, V) set by the dataclass that uses this

    @property
    def k_drafts(self) -> int:
        """K, the number of draft positions."""
        return self.q_rows.shape[0]

    @property
    def vocab(self) -> int:
        """V, the vocabulary size; also the "nothing emitted here" marker in outcomes."""
        return self.q_rows.shape[1]

    @cached_property
    def draft_sampler(self) -> RowSampler:
        """Inverse-CDF sampler of the draft rows q_1..q_K (built once per tables)."""
        return row_sampler(self.q_rows)

    @cached_property
    def final_sampler(self) -> RowSampler:
        """Inverse-CDF sampler of the final rows F_0..F_K (built once per tables)."""
        return row_sampler(self.final_rows)

    @cached_property
    def scratch(self) -> UniformScratch:
        """Reused uniform buffers of this run's chunks (one run, one thread)."""
        return UniformScratch()


@dataclass(frozen=True)
class RoundTables(DraftRowsShape):
    """What every round of one run reuses, built once per run.

    ``accept[i, x]`` is the chance of keeping draft x at position i + 1,
    ``final_rows[n]`` the distribution of the last token after n kept drafts, and
    ``keep_probabilities[i]`` = sum_x q_i(x) accept[i, x], the chance that position i + 1
    keeps its draft once reached (the round-length law of the rule the tables are for).
    """

    p_rows: np.ndarray  # (K+1, V) target rows
    q_rows: np.ndarray  # (K, V) draft rows the drafts are sampled from
    accept: np.ndarray  # (K, V) A_i(x) = min(1, p_i(x) / q_i(x)) for the correct rule
    final_rows: np.ndarray  # (K+1, V) residuals at positions 1..K, then the bonus p_{K+1}
    keep_probabilities: np.ndarray  # (K,) P(position i keeps its draft | reached)


@dataclass(frozen=True)
class ChunkOutcome:
    """What each round of a chunk did: drafts kept, the token at each position, the last one.

    Stored position by position (``drafts[j]`` is contiguous); ``emitted`` rebuilds
    the round-by-round table for a reader.
    """

    n_accepted: np.ndarray  # (n,) drafts kept in each round, 0..K
    drafts: np.ndarray  # (K, n) token chosen at each draft position (kept or not)
    last: np.ndarray  # (n,) token after the kept drafts; V = none (no bonus)
    vocab: int  # V, the "none" marker

    @property
    def emitted(self) -> np.ndarray:
        """(n, K+1) token emitted at each position: kept drafts, the last token, then V."""
        k, n = self.drafts.shape
        emitted = np.full((n, k + 1), self.vocab, dtype=np.intp)
        kept = np.arange(k) < self.n_accepted[:, None]  # (n, K)
        emitted[:, :k] = np.where(kept, self.drafts.T, self.vocab)
        emitted[np.arange(n), self.n_accepted] = self.last
        return emitted


def correct_tables(p_rows: np.ndarray, q_rows: np.ndarray) -> RoundTables:
    """Tables of the published rule: A_i = min(1, p_i / q_i), F = residuals + bonus.

    F_n = norm(max(0, p_{n+1} - q_{n+1})) for n < K and F_K = p_{K+1}
    (Leviathan et al. 2023, Algorithm 1); keep_i = alpha_i = sum_x min(p_i, q_i).
    """
    k = q_rows.shape[0]
    residuals = [residual_distribution(p, q) for p, q in zip(p_rows[:k], q_rows, strict=True)]
    return RoundTables(
        p_rows=p_rows,
        q_rows=q_rows,
        accept=acceptance_probability(p_rows[:k], q_rows),  # (K, V)
        final_rows=np.vstack([*residuals, p_rows[k]]),  # (K+1, V)
        keep_probabilities=_overlap(p_rows[:k], q_rows),  # (K,)
    )


def _last_positive(dist_rows: np.ndarray) -> np.ndarray:
    """(R,) last token of positive probability in each row."""
    return np.array([np.flatnonzero(row > 0)[-1] for row in dist_rows], dtype=np.intp)


@dataclass(frozen=True)
class InverseCdfTable:
    """Inverse-CDF sampling of R rows, sped up by a lookup on equal buckets of u.

    A sample of row r at scaled uniform s = u * total_r is the token
    #{t : cdf_r[t] <= s}, capped at the row's last positive entry (a token of
    probability 0 never comes out, also when rounding leaves the CDF a hair
    below its total). The bucket b = floor(s 2^B) is exact (a power of two),
    so every token from ``start[r, b]`` = #{t : cdf_r[t] <= b / 2^B} up to
    #{t : cdf_r[t] < (b + 1) / 2^B} is possible there; only buckets holding a
    CDF step (``spread`` > 0, at most V - 1 of 2^B per row) search the CDF
    itself. Same tokens as a binary search of the CDF, uniform by
    uniform, at a few table reads per sample (Devroye 1986, Sec. III.2.4:
    the guide table method).
    """

    cdf: np.ndarray  # (R, V) running sums of each row
    total: np.ndarray  # (R,) cdf[:, -1]: u is scaled by it
    last: np.ndarray  # (R,) last token of positive probability
    start: np.ndarray  # (R * n_buckets,) smallest token of each bucket, capped at last
    spread: np.ndarray  # (R * n_buckets,) more tokens possible in the bucket (0 mostly)

    @property
    def n_buckets(self) -> int:
        """Buckets per row: 2^B of [0, 1), plus those above 1 that a total > 1 reaches."""
        return self.start.size // self.cdf.shape[0]

    def column(self, row: int, u: np.ndarray) -> np.ndarray:
        """(n,) samples of one row, one per uniform u (n,)."""
        return sample_rows(self, row, u)

    def by_row(self, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(n,) samples, uniform e from row ``row_of[e]``."""
        return sample_rows(self, row_of, u)


def inverse_cdf_table(dist_rows: np.ndarray) -> InverseCdfTable:
    """Build the lookup of :class:`InverseCdfTable` for the rows (R, V) of distributions."""
    cdf = np.cumsum(dist_rows, axis=1)  # (R, V)
    total = cdf[:, -1].copy()  # (R,)
    last = _last_positive(dist_rows)  # (R,)
    scale = float(1 << LOOKUP_BITS)
    edges = np.arange(int(total.max() * scale) + 2) / scale  # (n_buckets + 1,) exact
    low = np.stack([np.searchsorted(c, edges[:-1], side="right") for c in cdf])  # (R, nb)
    high = np.stack([np.searchsorted(c, edges[1:], side="left") for c in cdf])  # (R, nb)
    return InverseCdfTable(
        cdf=cdf,
        total=total,
        last=last,
        start=np.minimum(low, last[:, None]).ravel(),
        spread=np.maximum(high - low, 0).ravel(),
    )


def sample_rows(table: InverseCdfTable, row_of, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples: entry e of ``u`` from row ``row_of[e]`` (broadcast to u's shape).

    token = min(#{t : cdf[t] <= u * total}, last) by :class:`InverseCdfTable`'s
    lookup; the few uniforms in a bucket with a CDF step search the row's CDF.
    ``row_of`` may be one row number (a whole column of samples from that row).
    """
    n_buckets = table.n_buckets
    scaled = u * table.total[row_of]  # same shape as u
    flat = (scaled * float(1 << LOOKUP_BITS)).astype(np.intp)
    flat += row_of * n_buckets
    tokens = table.start.take(flat)
    odd = np.flatnonzero(table.spread.take(flat))  # uniforms in a bucket with a CDF step
    if odd.size:
        odd_rows, s_odd = flat.ravel()[odd] // n_buckets, scaled.ravel()[odd]
        found = np.empty(odd.size, dtype=np.intp)
        for row in np.unique(odd_rows):  # a binary search of the row's CDF, for these few only
            at = odd_rows == row
            found[at] = np.searchsorted(table.cdf[row], s_odd[at], side="right")
        tokens.ravel()[odd] = np.minimum(found, table.last[odd_rows])
    return tokens


def smallest_coin(total: float, level: float) -> float:
    """The smallest double u >= 0 with fl(u * total) >= level (1.0 when no u < 1 has it).

    Rounded multiplication is monotone in u, so fl(u * total) >= level holds exactly
    for u >= this threshold: a comparison of u alone, the same bit for bit. Starts at
    level / total and steps a few units in the last place.
    """
    if level <= 0.0:
        return 0.0
    u = min(level / total, 1.0)
    while u > 0.0 and math.nextafter(u, 0.0) * total >= level:
        u = math.nextafter(u, 0.0)
    while u < 1.0 and u * total < level:
        u = math.nextafter(u, 1.0)
    return u


@dataclass(frozen=True)
class SmallVocabSampler:
    """Inverse-CDF sampling of R rows of a small vocabulary by comparisons of u alone.

    token = min(#{t < V-1 : u * total_r >= cdf_r[t]}, last_r) (the count of
    :func:`sample_rows`) = #{t < last_r : u >= ``thresholds[t, r]``}, with each
    threshold the :func:`smallest_coin` of its CDF step (steps from last_r on are
    set to 1.0: never, which is the cap). For V <= ``SMALL_VOCAB``: V - 1 cheap
    passes over the uniforms, no table.
    """

    thresholds: np.ndarray  # (V-1, R) u-thresholds, step t of row r; 1.0 = never

    def column(self, row: int, u: np.ndarray) -> np.ndarray:
        """(n,) samples of one row, one per uniform u (n,)."""
        tokens = np.zeros(u.shape, dtype=np.int8)  # V <= 16
        for level in self.thresholds[:, row]:
            if level >= 1.0:
                break  # thresholds only grow: no later step is reached either
            tokens += u >= level
        return tokens.astype(np.intp)

    def by_row(self, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(n,) samples, uniform e from row ``row_of[e]``."""
        tokens = np.zeros(u.shape, dtype=np.int8)
        for levels in self.thresholds:  # (R,) one CDF step of every row
            if levels.min() >= 1.0:
                break
            tokens += u >= levels.take(row_of)
        return tokens.astype(np.intp)


def small_vocab_sampler(dist_rows: np.ndarray) -> SmallVocabSampler:
    """Build the thresholds of :class:`SmallVocabSampler` for the rows (R, V)."""
    cdf = np.cumsum(dist_rows, axis=1)  # (R, V), summed as in inverse_cdf_table
    thresholds = np.ones((dist_rows.shape[1] - 1, dist_rows.shape[0]))  # (V-1, R)
    for row, last in enumerate(_last_positive(dist_rows)):
        total = float(cdf[row, -1])
        for step in range(last):
            thresholds[step, row] = smallest_coin(total, float(cdf[row, step]))
    return SmallVocabSampler(thresholds=thresholds)


RowSampler = SmallVocabSampler | InverseCdfTable  # .column(row, u), .by_row(row_of, u)


def row_sampler(dist_rows: np.ndarray) -> RowSampler:
    """The cheaper inverse-CDF sampler of the rows (R, V) for their vocabulary size."""
    if dist_rows.shape[1] <= SMALL_VOCAB:
        return small_vocab_sampler(dist_rows)
    return inverse_cdf_table(dist_rows)


class UniformScratch:
    """Per-run buffers for a chunk's uniforms, reused from chunk to chunk.

    Uniforms are drawn round by round, (n, J) as ``rng.random((n, J))`` would
    give them (the seed's order). Read ``by_position``, they are copied to a
    (J, n) buffer so that column j is contiguous (worth it when a column is read
    several times). Reusing the buffers across the chunks of a run saves the
    fresh pages (and their page faults) of new multi-megabyte arrays per chunk.
    """

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}  # name -> flat float64 buffer

    def _buffer(self, name: str, size: int) -> np.ndarray:
        """The first ``size`` entries of buffer ``name``, grown when too small."""
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size:
            buffer = self._buffers[name] = np.empty(size)
        return buffer[:size]

    def draw(
        self, rng: np.random.Generator, n: int, width: int, name: str, *, by_position: bool
    ) -> np.ndarray:
        """rng.random((n, width)) in buffer ``name``: (n, width), or (width, n) by position."""
        if not by_position:
            return rng.random(out=self._buffer(name, n * width).reshape(n, width))
        rows = rng.random(out=self._buffer("rows", n * width).reshape(n, width))
        columns = self._buffer(name, n * width).reshape(width, n)
        np.copyto(columns, rows.T)
        return columns


def token_dtype(vocab: int) -> type[np.signedinteger]:
    """The smallest integer type that holds tokens 0..V exactly (int8 up to V = 127)."""
    return np.int8 if vocab <= np.iinfo(np.int8).max else np.int32


def _keep_at_position(
    tables: DraftRowsShape,
    j: int,
    accept: np.ndarray,
    u_slots: np.ndarray | None,
    coins: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Position j of every round -> (token chosen (n,), kept (n,)).

    accept (m, V): candidate i is kept when u < accept[i, x_i] and no earlier one
    was; u_slots (m, n) its draft uniforms (None: the greedy draft argmax q_j),
    coins (n, m), each read once. A slot whose accept row is 0 is never kept (past a tree's width):
    its draft is not even looked up. With none kept, the token is never emitted.
    """
    n = coins.shape[0]
    chosen, found = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=bool)
    for i, accept_i in enumerate(accept):
        if not accept_i.any():
            continue
        if u_slots is None:
            tokens = np.full(n, np.argmax(tables.q_rows[j]), dtype=np.intp)
        else:
            tokens = tables.draft_sampler.column(j, u_slots[i])
        kept = coins[:, i] < accept_i.take(tokens)  # (n,)
        np.copyto(chosen, tokens, where=kept & ~found)
        found |= kept
    return chosen, found


COMPACT_BELOW = 0.5  # draft positions gather the rounds still drafting below this share


def _still_drafting(alive: np.ndarray, n: int) -> np.ndarray | None:
    """Indices of the rounds whose drafts so far were all kept, or None when that is
    COMPACT_BELOW of the rounds or more (gathering them would cost more than it saves).

    A round that rejected a draft never reads its later uniforms, so leaving it out
    changes no number that is counted (``count_step`` masks by n_accepted).
    """
    count = int(np.count_nonzero(alive))
    return None if count >= COMPACT_BELOW * n else np.flatnonzero(alive)


def positions_chunk(
    tables: DraftRowsShape,
    accept: np.ndarray,
    n: int,
    rng: np.random.Generator,
    *,
    greedy_draft: bool = False,
    bonus: bool = True,
) -> ChunkOutcome:
    """n rounds with m candidates at each of K positions, keep chances accept (K, m, V).

    Random draws, in order: drafts x ~ q_j (n, K*m; none if greedy), coins
    (n, K*m), final tokens (n,). Position j keeps its first candidate i with
    u < accept[j, i, x]; a round keeps its leading kept positions, then emits a
    token of final_rows[n_accepted] (nothing after K kept if ``bonus=False``).
    The uniforms are read position by position, one contiguous column each.
    """
    k, m, _ = accept.shape
    draw = partial(tables.scratch.draw, rng, n, k * m)
    u_drafts = None if greedy_draft else draw("drafts", by_position=True)  # (K*m, n)
    coins = draw("coins", by_position=False)  # (n, K*m), slot j*m + i
    chosen = np.zeros((k, n), dtype=token_dtype(tables.vocab))  # (K, n)
    alive = np.ones(n, dtype=bool)  # every draft so far kept
    n_accepted = np.zeros(n, dtype=np.intp)
    for j in range(k):
        slots = slice(j * m, (j + 1) * m)
        u_slots = None if u_drafts is None else u_drafts[slots]
        live = _still_drafting(alive, n)
        if live is None:  # most rounds still drafting: every round, no gather
            chosen[j], kept = _keep_at_position(tables, j, accept[j], u_slots, coins[:, slots])
            alive &= kept
        elif live.size:  # only the rounds still drafting (the others never look again)
            u_live = None if u_slots is None else u_slots[:, live]
            chosen[j, live], kept = _keep_at_position(
                tables, j, accept[j], u_live, coins[live, slots]
            )
            alive[live] = kept
        n_accepted += alive
    last = tables.final_sampler.by_row(n_accepted, rng.random(n))  # (n,)
    if not bonus:
        last[n_accepted == k] = tables.vocab
    return ChunkOutcome(n_accepted=n_accepted, drafts=chosen, last=last, vocab=tables.vocab)


def rounds_chunk(
    tables: RoundTables,
    n: int,
    rng: np.random.Generator,
    *,
    greedy_draft: bool = False,
    bonus: bool = True,
) -> ChunkOutcome:
    """n rounds of draft -> verify -> final token with the given tables.

    ``greedy_draft`` proposes argmax q_i instead of sampling q_i; ``bonus=False``
    emits nothing after K kept drafts. Random draws, in order: drafts (n, K)
    unless greedy, coins (n, K), final tokens (n,): :func:`positions_chunk` with
    one candidate per position.
    """
    accept = tables.accept[:, None, :]  # (K, 1, V)
    return positions_chunk(tables, accept, n, rng, greedy_draft=greedy_draft, bonus=bonus)


@dataclass(frozen=True)
class RoundCounts:
    """Counts over rounds: all a run keeps, so its memory does not grow with rounds."""

    position_counts: np.ndarray  # (K+1, V) tokens emitted at each position of a round
    n_accepted_counts: np.ndarray  # (K+1,) rounds by drafts kept, 0..K
    tokens_per_round_counts: np.ndarray  # (K+2,) rounds by tokens emitted, 0..K+1

    def __add__(self, other: RoundCounts) -> RoundCounts:
        """Counts of two sets of rounds together (entry by entry)."""
        return RoundCounts(
            position_counts=self.position_counts + other.position_counts,
            n_accepted_counts=self.n_accepted_counts + other.n_accepted_counts,
            tokens_per_round_counts=self.tokens_per_round_counts + other.tokens_per_round_counts,
        )


def count_step(outcome: ChunkOutcome, vocab: int) -> RoundCounts:
    """Count: histograms of one chunk's tokens by position, drafts kept and lengths.

    Kept drafts: one bincount per position of key 1 + x (0 for a draft not kept);
    last tokens: one bincount of n_accepted (V+1) + last (column V: nothing emitted).
    Both histograms of rounds follow from the second: a round that kept a drafts
    emits a + 1 tokens, or a when it has no last token.
    """
    k, n = outcome.drafts.shape
    stride = vocab + 1
    kept = np.empty((k, vocab), dtype=np.intp)  # (K, V)
    key = np.empty(n, dtype=np.intp)  # (n,) reused for every position
    for j, drafts_j in enumerate(outcome.drafts):
        np.add(drafts_j, 1, out=key, dtype=np.intp)
        key *= outcome.n_accepted > j  # 0: not kept
        kept[j] = np.bincount(key, minlength=stride)[1:stride]
    finals = np.bincount(outcome.n_accepted * stride + outcome.last, minlength=(k + 1) * stride)
    finals = finals.reshape(k + 1, stride)  # (K+1, V+1) rounds by (drafts kept, last token)
    position_counts = finals[:, :vocab].copy()  # (K+1, V)
    position_counts[:k] += kept
    tokens_per_round = np.zeros(k + 2, dtype=np.intp)  # (K+2,)
    tokens_per_round[1:] += finals[:, :vocab].sum(axis=1)
    tokens_per_round[:-1] += finals[:, vocab]
    return RoundCounts(
        position_counts=position_counts,
        n_accepted_counts=finals.sum(axis=1),
        tokens_per_round_counts=tokens_per_round,
    )
