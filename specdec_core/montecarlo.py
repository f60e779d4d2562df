"""One chunk of simulated rounds, step by step: draft, verify, emit, count.

The building blocks of :func:`specdec_core.simulate_rounds`. A run first builds its
:class:`RoundTables` once (what every round of that variant reuses), then calls a
chunk simulator for blocks of ``n`` rounds at a time. Each step below handles all
``n`` rounds of a chunk in a few numpy calls, exactly as
:func:`specdec_core.verify_round` handles one round (Leviathan et al. 2023,
Algorithm 1; seed 000, Steps 1-6):

1. draft: x_i ~ q_i for i = 1..K (inverse CDF of one uniform per draft);
2. verify: keep x_i while u_i < A_i(x_i), A_i(x) = min(1, p_i(x) / q_i(x));
3. final: after n kept drafts, one token from F_n (the residual
   norm(max(0, p_{n+1} - q_{n+1})) when n < K, the bonus p_{K+1} when n = K);
4. count: tokens by position in the round, rounds by drafts kept and by length.

A chunk simulator returns a :class:`ChunkOutcome` (what each round emitted), so a new
rule (a variant) only has to write its own chunk function; counting is shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .sampling import acceptance_probability, residual_distribution

LOOKUP_BITS = 12  # inverse-CDF lookup: 2**12 equal buckets of [0, 1) per row
SMALL_VOCAB = 16  # up to this many tokens, count CDF steps below u instead (no table)


class DraftRowsShape:
    """K and V read off ``q_rows`` (K, V): shared by the tables of every variant."""

    q_rows: np.ndarray  # (K, V) set by the dataclass that uses this

    @property
    def k_drafts(self) -> int:
        """K, the number of draft positions."""
        return self.q_rows.shape[0]

    @property
    def vocab(self) -> int:
        """V, the vocabulary size; also the "nothing emitted here" marker in outcomes."""
        return self.q_rows.shape[1]


@dataclass(frozen=True)
class RoundTables(DraftRowsShape):
    """What every round of one run reuses, built once per run.

    ``accept[i, x]`` is the chance of keeping draft x at position i + 1, and
    ``final_rows[n]`` the distribution of the last token after n kept drafts.
    """

    p_rows: np.ndarray  # (K+1, V) target rows
    q_rows: np.ndarray  # (K, V) draft rows the drafts are sampled from
    accept: np.ndarray  # (K, V) A_i(x) = min(1, p_i(x) / q_i(x)) for the correct rule
    final_rows: np.ndarray  # (K+1, V) residuals at positions 1..K, then the bonus p_{K+1}


@dataclass(frozen=True)
class ChunkOutcome:
    """What each round of a chunk did: drafts kept and the token at each position."""

    n_accepted: np.ndarray  # (n,) drafts kept in each round, 0..K
    emitted: np.ndarray  # (n, K+1) token emitted at each position; V = none


ChunkSimulator = Callable[[RoundTables, int, np.random.Generator], ChunkOutcome]


def correct_tables(p_rows: np.ndarray, q_rows: np.ndarray) -> RoundTables:
    """Tables of the published rule: A_i = min(1, p_i / q_i), F = residuals + bonus.

    F_n = norm(max(0, p_{n+1} - q_{n+1})) for n < K and F_K = p_{K+1}
    (Leviathan et al. 2023, Algorithm 1).
    """
    k = q_rows.shape[0]
    residuals = [residual_distribution(p, q) for p, q in zip(p_rows[:k], q_rows, strict=True)]
    return RoundTables(
        p_rows=p_rows,
        q_rows=q_rows,
        accept=acceptance_probability(p_rows[:k], q_rows),  # (K, V)
        final_rows=np.vstack([*residuals, p_rows[k]]),  # (K+1, V)
    )


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


def inverse_cdf_table(dist_rows: np.ndarray) -> InverseCdfTable:
    """Build the lookup of :class:`InverseCdfTable` for the rows (R, V) of distributions."""
    cdf = np.cumsum(dist_rows, axis=1)  # (R, V)
    total = cdf[:, -1].copy()  # (R,)
    last = np.array([np.flatnonzero(row > 0)[-1] for row in dist_rows], dtype=np.intp)
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


def sample_rows(table: InverseCdfTable, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples: entry e of ``u`` from row ``row_of[e]`` (broadcast to u's shape).

    token = min(#{t : cdf[t] <= u * total}, last) by :class:`InverseCdfTable`'s
    lookup; the few uniforms in a bucket with a CDF step search the row's CDF.
    """
    n_buckets = table.n_buckets
    scaled = u * table.total[row_of]  # same shape as u
    flat = (scaled * float(1 << LOOKUP_BITS)).astype(np.intp) + row_of * n_buckets
    tokens = table.start.take(flat)
    odd = np.flatnonzero(table.spread.take(flat))  # uniforms in a bucket with a CDF step
    if odd.size:
        row, s_odd = flat.ravel()[odd] // n_buckets, scaled.ravel()[odd]
        found = np.empty(odd.size, dtype=np.intp)
        for r in np.unique(row):  # a binary search of the row's CDF, for these few only
            at = row == r
            found[at] = np.searchsorted(table.cdf[r], s_odd[at], side="right")
        tokens.ravel()[odd] = np.minimum(found, table.last[row])
    return tokens


def sample_small_vocab(dist_rows: np.ndarray, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples for a small vocabulary: token = min(#{t : cdf[t] <= u * total}, last).

    The same count as :func:`sample_rows` (and a binary search), made as V passes of one
    comparison over all of ``u``: for V <= ``SMALL_VOCAB`` cheaper than building the table.
    """
    cdf = np.cumsum(dist_rows, axis=1)  # (R, V), summed as in inverse_cdf_table
    last = np.array([np.flatnonzero(row > 0)[-1] for row in dist_rows], dtype=np.intp)
    scaled = u * cdf[row_of, -1]  # same shape as u
    tokens = np.zeros(u.shape, dtype=np.intp)
    for t in range(cdf.shape[1] - 1):  # the last step (the total) only matters via min(last)
        tokens += scaled >= cdf[row_of, t]
    return np.minimum(tokens, last[row_of])


def _small_vocab_columns(dist_rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`sample_small_vocab` for column j of ``u`` (n, J) from row j, one row at a time.

    Each column is copied to contiguous memory first: the same comparisons as the
    broadcast form, about 5x faster than running them over the strided (n, J) array.
    """
    cdf = np.cumsum(dist_rows, axis=1)  # (J, V), summed as in inverse_cdf_table
    out = np.empty(u.shape[::-1], dtype=np.intp)  # (J, n)
    for j, u_j in enumerate(np.ascontiguousarray(u.T)):
        scaled = u_j * cdf[j, -1]
        tokens = np.zeros(scaled.shape, dtype=np.intp)
        for t in range(cdf.shape[1] - 1):
            tokens += scaled >= cdf[j, t]
        out[j] = np.minimum(tokens, np.flatnonzero(dist_rows[j] > 0)[-1])
    return np.ascontiguousarray(out.T)  # (n, J)


def _sample(dist_rows: np.ndarray, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples by whichever method is cheaper for the vocabulary size."""
    if dist_rows.shape[1] <= SMALL_VOCAB:
        return sample_small_vocab(dist_rows, row_of, u)
    return sample_rows(inverse_cdf_table(dist_rows), row_of, u)


def sample_columns(dist_rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples, column j of ``u`` (n, J) from row j of ``dist_rows`` (J, V)."""
    if dist_rows.shape[1] <= SMALL_VOCAB:
        return _small_vocab_columns(dist_rows, u)
    return _sample(dist_rows, np.arange(dist_rows.shape[0]), u)


def sample_by_row(dist_rows: np.ndarray, row_of: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF samples, entry r from row ``row_of[r]`` of ``dist_rows`` (R, V), u (n,)."""
    return _sample(dist_rows, row_of, u)


def draft_step(tables: RoundTables, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draft: x_i ~ q_i for n rounds at once -> (n, K) tokens (draws n x K uniforms)."""
    return sample_columns(tables.q_rows, rng.random((n, tables.k_drafts)))


def greedy_draft_step(tables: RoundTables, n: int) -> np.ndarray:
    """A greedy draft: x_i = argmax q_i in every round -> (n, K) (draws nothing)."""
    return np.broadcast_to(np.argmax(tables.q_rows, axis=1), (n, tables.k_drafts))


def verify_step(tables: RoundTables, drafts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Verify: n_accepted = how many leading drafts pass u_i < A_i(x_i) -> (n,).

    Draws one coin per draft position (n x K uniforms), also for positions after
    the first rejection, which are never looked at (seed 003, Ex 2).
    """
    coins = rng.random(drafts.shape)  # (n, K)
    kept = coins < tables.accept[np.arange(tables.k_drafts), drafts]  # (n, K)
    return np.logical_and.accumulate(kept, axis=1).sum(axis=1)


def final_step(tables: RoundTables, n_accepted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Final token: one sample of F_{n_accepted} per round -> (n,) (draws n uniforms)."""
    return sample_by_row(tables.final_rows, n_accepted, rng.random(n_accepted.shape[0]))


def emit_step(
    drafts: np.ndarray, n_accepted: np.ndarray, last: np.ndarray, vocab: int
) -> ChunkOutcome:
    """Tokens by position: kept drafts, then the final token, then V ("none") -> (n, K+1)."""
    n, k = drafts.shape
    emitted = np.full((n, k + 1), vocab, dtype=np.intp)
    emitted[:, :k] = np.where(np.arange(k) < n_accepted[:, None], drafts, vocab)
    emitted[np.arange(n), n_accepted] = last
    return ChunkOutcome(n_accepted=n_accepted, emitted=emitted)


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
    unless greedy, coins (n, K), final tokens (n,).
    """
    drafts = greedy_draft_step(tables, n) if greedy_draft else draft_step(tables, n, rng)
    n_accepted = verify_step(tables, drafts, rng)
    last = final_step(tables, n_accepted, rng)
    if not bonus:
        last[n_accepted == tables.k_drafts] = tables.vocab
    return emit_step(drafts, n_accepted, last, tables.vocab)


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
    """Count: histograms of one chunk's tokens by position, drafts kept and lengths."""
    k_plus_1 = outcome.emitted.shape[1]
    return RoundCounts(
        position_counts=np.stack(
            [np.bincount(col, minlength=vocab + 1)[:vocab] for col in outcome.emitted.T]
        ),  # (K+1, V)
        n_accepted_counts=np.bincount(outcome.n_accepted, minlength=k_plus_1),
        tokens_per_round_counts=np.bincount(
            (outcome.emitted != vocab).sum(axis=1), minlength=k_plus_1 + 1
        ),
    )
