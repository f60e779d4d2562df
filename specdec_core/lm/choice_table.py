"""A draft made of the target's own choices: prompt lookup, else a table of its argmax.

At T = 0 the target is a fixed function "context -> argmax". A cheap draft that guesses
that function well is accepted often, whatever the language looks like. Two guesses,
tried in this order (issue 12):

1. **Prompt lookup** (:func:`.prompt_lookup.find_continuation`, Saxena 2023): what
   followed the most recent earlier match of the last 4, 3 or 2 tokens. A small model
   decoding greedily repeats itself, so its own text is the best predictor once a loop
   starts.
2. **The choice table**: for the last n = 4, 3, 2, 1 tokens (the longest context the
   table knows), the token the target chose most often right after them. The choices
   are the target's argmax at every position of its training text and of text it wrote
   itself; ``tools/label_target_choices.py`` counts them into the table it ships
   (``assets/choice_table.npz``, SHA-256 checked). A lookup in sorted keys costs a few
   microseconds, against about a millisecond for one step of the 4-layer target.

A lookup fills the first tokens; the table extends the proposal to k tokens, each
guess read after the previous ones (x_1, then x_2 after x_1, ...). The proposal is
deterministic, so q is one-hot on each drafted token and the rule of Leviathan et al.
2023 keeps x with probability p(x) (``../shared/reference/variants-notes.md``,
section 2): lossless at every temperature, and at T = 0 the output is the target's own
greedy output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidParameterError
from .prompt_lookup import PromptLookupDraft, find_match
from .tokenizer import Tokenizer

TABLE_ORDER = 4  # longest context of the choice table (held-out alpha: 3 -> 0.502, 4 -> 0.514)
LOOKUP_MAX, LOOKUP_MIN = 4, 2  # prompt lookup tries suffixes of 4, 3, then 2 tokens
# How often a lookup's first token was the target's choice, by match length (measured on
# the target's greedy text after 40 validation contexts, not the benchmark's prompts).
LOOKUP_HIT = {4: 0.74, 3: 0.65, 2: 0.59, 0: 0.0}  # 0: no match (no tokens)
# A round is worth drafting when it is expected to emit at least this many tokens: a
# verify of K + 1 = 4 tokens costs about 1.4-1.8 plain steps on a CPU (v(K), see
# benchmarks/results_model_pairs.md), and the estimate below runs high. 2.0 gave the
# most tokens per unit of cost on the same validation text (1.8: -0.3 %, 2.4: -7 %).
MIN_EXPECTED_TOKENS = 2.0


def context_keys(tokens: np.ndarray, n: int, vocab: int) -> np.ndarray:
    """Key sum_j tokens[i - n + 1 + j] * vocab^(n - 1 - j) of the n tokens ending at i.

    tokens (N,) int -> keys (N - n + 1,) int64, one per window; vocab^4 < 2^63 for
    vocab <= 2^15, so four-token keys never overflow.
    """
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(tokens, np.int64), n)
    keys = np.zeros(windows.shape[0], np.int64)
    for j in range(n):
        keys = keys * vocab + windows[:, j]
    return keys


def most_frequent_choice(keys: np.ndarray, choices: np.ndarray, vocab: int):
    """For every distinct context key: the choice seen most often after it, and its share.

    Ties go to the smaller token id. Returns sorted unique keys (M,) int64, choices (M,)
    int16 and share (M,) float32 = times that choice was seen / times the context was seen.
    """
    pair, count = np.unique(keys * vocab + choices, return_counts=True)  # sorted by key
    ctx, choice = pair // vocab, pair % vocab
    order = np.lexsort((choice, -count, ctx))  # by key, then count down, then id up
    ctx, choice, count = ctx[order], choice[order], count[order]
    first = np.ones(ctx.size, bool)
    first[1:] = ctx[1:] != ctx[:-1]
    starts = np.flatnonzero(first)
    total = np.add.reduceat(count, starts)  # (M,) times each context was seen
    share = (count[starts] / total).astype(np.float32)
    return ctx[starts], choice[starts].astype(np.int16), share


def _order_table(sequences, choices, n: int, vocab: int):
    """most_frequent_choice over every n-token context inside each sequence."""
    keys = [context_keys(seq, n, vocab) for seq in sequences if len(seq) >= n]
    labels = [np.asarray(lab[n - 1 :], np.int64) for lab in choices if len(lab) >= n]
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0, np.int16), np.zeros(0, np.float32)
    return most_frequent_choice(np.concatenate(keys), np.concatenate(labels), vocab)


class ChoiceTable:
    """The target's most frequent next token after each context of 1..order tokens.

    Per n = 1..order: ``keys[n-1]`` (sorted context keys, int64), ``choice[n-1]`` (int16)
    and ``share[n-1]`` (float32: how often the target made that choice there).
    """

    def __init__(self, keys, choice, share, vocab: int) -> None:
        """The arrays of :meth:`count` (or of a shipped file, :meth:`from_arrays`)."""
        if not 1 <= len(keys) <= 4 or not len(keys) == len(choice) == len(share):
            raise InvalidParameterError(
                f"a choice table has 1 to 4 orders of keys, choices and shares; got "
                f"{len(keys)}, {len(choice)} and {len(share)}."
            )
        self.vocab, self.order = vocab, len(keys)
        self.keys, self.choice, self.share = list(keys), list(choice), list(share)
        for arr in (*self.keys, *self.choice, *self.share):
            arr.flags.writeable = False

    @classmethod
    def count(
        cls,
        sequences: Sequence[np.ndarray],
        choices: Sequence[np.ndarray],
        vocab: int,
        order: int = TABLE_ORDER,
    ) -> ChoiceTable:
        """Count a table: ``choices[s][i]`` is the target's argmax after ``sequences[s][: i + 1]``.

        A context never crosses from one sequence into the next.
        """
        if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 4:
            raise InvalidParameterError(f"table order is {order!r}; allowed: 1 to 4.")
        if len(sequences) != len(choices):
            raise InvalidParameterError(
                f"{len(sequences)} sequences but {len(choices)} rows of choices."
            )
        for seq, lab in zip(sequences, choices, strict=True):
            if len(seq) != len(lab):
                raise InvalidParameterError(
                    f"a sequence has {len(seq)} tokens but {len(lab)} choices."
                )
        orders = [_order_table(sequences, choices, n, vocab) for n in range(1, order + 1)]
        return cls(*zip(*orders, strict=True), vocab)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Compact arrays for ``np.savez_compressed``: key gaps (uint32), choices (int16),
        shares in 1/255 steps (uint8)."""
        out = {"vocab": np.array(self.vocab)}
        for n in range(self.order):
            out[f"gap{n + 1}"] = np.diff(self.keys[n], prepend=0).astype(np.uint32)
            out[f"choice{n + 1}"] = self.choice[n]
            out[f"share{n + 1}"] = np.round(self.share[n] * 255).astype(np.uint8)
        return out

    @classmethod
    def from_arrays(cls, arrays) -> ChoiceTable:
        """The table :meth:`to_arrays` wrote (shares back as q / 255)."""
        n = sum(1 for name in arrays if name.startswith("gap"))
        keys = [np.cumsum(arrays[f"gap{i}"], dtype=np.int64) for i in range(1, n + 1)]
        choice = [np.asarray(arrays[f"choice{i}"], np.int16) for i in range(1, n + 1)]
        share = [arrays[f"share{i}"].astype(np.float32) / 255 for i in range(1, n + 1)]
        return cls(keys, choice, share, int(arrays["vocab"]))

    def lookup(self, tokens: Sequence[int]) -> tuple[int, int, float]:
        """(choice, n, share) for the longest known context: the last n tokens.

        Tries n = order, ..., 1 and stops at the first context the table knows (so a
        known 4-token context costs one search); nothing known gives (0, 0, 0.0).
        """
        longest, whole = min(self.order, len(tokens)), 0
        for t in tokens[len(tokens) - longest :]:
            whole = whole * self.vocab + int(t)  # the same key as context_keys
        for n in range(longest, 0, -1):
            key = whole % self.vocab**n  # the last n tokens' key
            keys = self.keys[n - 1]
            i = int(keys.searchsorted(key))
            if i < keys.size and keys.item(i) == key:
                return self.choice[n - 1].item(i), n, self.share[n - 1].item(i)
        return 0, 0, 0.0

    def predict(self, tokens: Sequence[int]) -> int:
        """The target's most frequent choice after the longest known context."""
        return self.lookup(tokens)[0]


class LookupTableDraft(PromptLookupDraft):
    """Prompt lookup first, the choice table for the rest (see the module docstring).

    A :class:`.prompt_lookup.PromptLookupDraft` (``propose``, no cache), so the engine
    treats it as a draft without a model: one call a round, q one-hot.
    """

    quiet_short = "guesses too unlikely"
    quiet_why = (
        "its guesses were unlikely (the round was expected to emit fewer than "
        f"{MIN_EXPECTED_TOKENS:g} tokens, judged from the table's shares and the lookup's "
        "hit rates)"
    )
    quiet_gain = "A round without drafts costs one plain step: less than checking drafts that fail."

    def __init__(self, table: ChoiceTable, tokenizer: Tokenizer | None) -> None:
        super().__init__(tokenizer, LOOKUP_MAX)
        self.table = table
        self.name = f"prompt lookup (n = {LOOKUP_MAX}..{LOOKUP_MIN}) + choice table"

    def guesses(self, tokens, k: int) -> tuple[list[int], list[float]]:
        """k guesses and how likely each is the target's choice if those before it were.

        A lookup continuation comes first (each token LOOKUP_HIT[n] for a match of n
        tokens); the table extends it (each guess its share), read after the guesses
        before it.
        """
        drafts, n = find_match(tokens, k, LOOKUP_MAX, LOOKUP_MIN)
        sure = [LOOKUP_HIT[n]] * len(drafts)
        text = list(tokens[len(tokens) - self.table.order :]) + drafts
        while len(drafts) < k:
            x, _, share = self.table.lookup(text)
            drafts.append(x)
            sure.append(share)
            text.append(x)
        return drafts, sure

    def propose(self, tokens, k: int) -> list[int]:
        """k guesses, or none when the round is expected to emit < MIN_EXPECTED_TOKENS.

        Expected tokens of a round = 1 + s_1 + s_1 s_2 + ... + s_1 ... s_k (Leviathan et
        al. 2023, Eq. 1 with a separate rate per position); a round without drafts is
        one plain target step, which is cheaper than verifying drafts that will fail.
        """
        drafts, sure = self.guesses(tokens, k)
        expected = chance = 1.0
        for s in sure:
            chance *= s
            expected += chance
        return drafts if expected >= MIN_EXPECTED_TOKENS else []
