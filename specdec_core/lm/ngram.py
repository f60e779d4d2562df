"""n-gram language models over BPE tokens, built in a second from the corpus.

Interpolated Witten-Bell smoothing (Witten & Bell 1991; Chen & Goodman 1998, Sec. 2.4):

    P_n(x | h) = lambda_h * c(h, x) / c(h) + (1 - lambda_h) * P_{n-1}(x | h'),
    lambda_h = c(h) / (c(h) + N1+(h)),

with h the last n-1 tokens, h' the last n-2, N1+(h) the number of distinct tokens seen
after h, and a uniform distribution below the unigram, so every token keeps a positive
probability. Counts are stored as sorted int64 keys ``context * V + next`` (one array per
order), so all continuations of a context form one contiguous slice found by
``np.searchsorted``: no Python dictionaries, a few microseconds per lookup.

An n-gram model has no parallel verify: scoring K+1 positions costs K+1 lookups, the
same as K+1 decoding steps (``parallel_verify = False``).
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import InvalidParameterError
from .errors import ContextLengthError
from .tokenizer import Tokenizer

NGRAM_CONTEXT = 4096  # tokens an n-gram model accepts in one sequence (no real limit)


LOG_ROW_CACHE = 1024  # context rows cached per runner: 1024 x V=512 x 8 B = 4 MB


class NGramModel:
    """Order-n interpolated Witten-Bell model; ``extend`` returns log-probabilities."""

    parallel_verify = False

    def __init__(
        self,
        token_ids: np.ndarray,
        order: int,
        vocab: int,
        name: str | None = None,
        *,
        tokenizer: Tokenizer | None = None,
    ):
        """Count the n-grams of ``token_ids``; ``tokenizer`` is the pair's (None for toys)."""
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise InvalidParameterError(f"n-gram order is {order!r}; allowed: 1 or more.")
        self.order, self.vocab = order, vocab
        self.name = name or f"{order}-gram"
        self.tokenizer = tokenizer
        ids = np.asarray(token_ids, dtype=np.int64)
        self.keys: list[np.ndarray] = []  # per order n >= 2: sorted keys ctx * V + next
        self.counts: list[np.ndarray] = []
        unigram = np.bincount(ids, minlength=vocab).astype(np.float64)
        lam = unigram.sum() / (unigram.sum() + np.count_nonzero(unigram))
        self.base = lam * unigram / unigram.sum() + (1 - lam) / vocab  # (V,)
        for n in range(2, order + 1):
            windows = np.lib.stride_tricks.sliding_window_view(ids, n)  # (N-n+1, n)
            key = np.zeros(windows.shape[0], np.int64)
            for j in range(n):
                key = key * vocab + windows[:, j]
            uniq, cnt = np.unique(key, return_counts=True)
            self.keys.append(uniq)
            self.counts.append(cnt.astype(np.float64))
        for arr in (self.base, *self.keys, *self.counts):
            arr.flags.writeable = False
        self.tokens: list[int] = []
        self._log_rows: dict[tuple[int, ...], np.ndarray] = {}  # see _log_row

    context_length = NGRAM_CONTEXT

    @property
    def length(self) -> int:
        return len(self.tokens)

    def fresh(self) -> NGramModel:
        """A new runner sharing the (read-only) counts, with an empty history."""
        other = copy.copy(self)
        other.tokens = []
        other._log_rows = {}  # each generation starts with an empty row cache
        return other

    def rollback(self, length: int) -> None:
        """Forget the tokens from position ``length`` on (the rejected drafts)."""
        if not 0 <= length <= len(self.tokens):
            raise InvalidParameterError(
                f"{self.name}: cannot roll back to {length} tokens; allowed: 0 to "
                f"{len(self.tokens)} (the tokens it holds)."
            )
        del self.tokens[length:]

    def distribution(self, history) -> np.ndarray:
        """P(next | the last order-1 tokens of history): float64 (V,), positive, sums to 1."""
        p = self.base.copy()
        v = self.vocab
        for n in range(2, self.order + 1):
            if len(history) < n - 1:
                break
            ctx = 0
            for t in history[len(history) - (n - 1) :]:
                ctx = ctx * v + int(t)
            keys = self.keys[n - 2]
            lo, hi = np.searchsorted(keys, (ctx * v, ctx * v + v))
            if hi == lo:
                break  # an unseen context: longer ones are unseen too
            cnt = self.counts[n - 2][lo:hi]
            total = cnt.sum()
            lam = total / (total + (hi - lo))
            p *= 1.0 - lam
            p[keys[lo:hi] - ctx * v] += (lam / total) * cnt
        return p

    def _log_row(self, history) -> np.ndarray:
        """log distribution(history), cached by context within one runner.

        A row depends only on the last order-1 tokens, so a cached row is exactly what
        distribution() would compute. The cache lives as long as the runner (one
        generation: ``fresh()`` starts an empty one) and is bounded by LOG_ROW_CACHE.
        """
        key = tuple(history[len(history) - (self.order - 1) :]) if self.order > 1 else ()
        row = self._log_rows.get(key)
        if row is None:
            row = np.log(self.distribution(history))
            row.flags.writeable = False
            if len(self._log_rows) >= LOG_ROW_CACHE:
                self._log_rows.pop(next(iter(self._log_rows)))  # oldest first out
            self._log_rows[key] = row
        return row

    def extend(self, tokens, *, last_only: bool = False) -> np.ndarray:
        """Append tokens; rows of log P(next | prefix) for each new position (m, V)."""
        new = [int(t) for t in np.asarray(tokens).reshape(-1)]
        if len(self.tokens) + len(new) > NGRAM_CONTEXT:
            raise ContextLengthError(f"{self.name}: more than {NGRAM_CONTEXT} tokens.")
        rows = []
        for i, t in enumerate(new):
            self.tokens.append(t)
            if not last_only or i == len(new) - 1:
                rows.append(self._log_row(self.tokens))
        return np.stack(rows)
