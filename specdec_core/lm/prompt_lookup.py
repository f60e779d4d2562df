"""Prompt lookup decoding: a draft that is no model at all (Saxena 2023).

The draft for the next K positions is what followed the most recent earlier occurrence
of the last n tokens in prompt + generated text, trying n = 3, then 2, then 1
(transformers' ``prompt_lookup_num_tokens`` / ``max_matching_ngram_size``; vLLM's n-gram
speculator). Without a match it proposes nothing, and the round is one plain target
step. Drafting costs a substring search, no forward pass: c is close to 0.

The proposal is deterministic, so q is one-hot on the drafted token x. The acceptance
rule of Leviathan et al. 2023 then keeps x with probability min(1, p(x) / 1) = p(x) and
on a rejection samples the residual max(0, p - q) / (1 - p(x)): p without x,
renormalised (``../shared/reference/variants-notes.md``, section 2). At T = 0 p is
one-hot too: x is kept iff it is the target's argmax, so the output is the target's own
greedy output. Lossless at every temperature.
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import InvalidParameterError
from .tokenizer import Tokenizer

MAX_NGRAM = 3  # longest suffix looked up (then shorter ones)
MIN_NGRAM = 1
LOOKUP_CONTEXT = 4096  # tokens of history searched (no model context behind it)


def _as_bytes(tokens) -> bytes:
    """Token ids as 4-byte little-endian words, so a bytes search is a token search."""
    return np.asarray(tokens, dtype="<u4").tobytes()


def find_continuation(tokens, k: int, max_ngram: int = MAX_NGRAM, min_ngram: int = MIN_NGRAM):
    """Up to k tokens that followed the most recent earlier match of the last n tokens.

    For n = max_ngram down to min_ngram: the suffix s = tokens[-n:] is searched in
    tokens[:-1] (so the suffix itself never matches); at the last occurrence ending at
    position j < len - 1, the proposal is tokens[j + 1 : j + 1 + k] (it may run into the
    suffix: periodic text continues its period). Returns [] when no n matches.
    O(len) per n with a C-level ``bytes.rfind``. tokens: a sequence of ints >= 0.
    """
    return find_match(tokens, k, max_ngram, min_ngram)[0]


def find_match(tokens, k: int, max_ngram: int = MAX_NGRAM, min_ngram: int = MIN_NGRAM):
    """(continuation, n): :func:`find_continuation` and the length n of the match (0: none)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise InvalidParameterError(f"k is {k!r}; allowed: a whole number >= 0.")
    n_tok = len(tokens)
    if k == 0 or n_tok < 2:
        return [], 0
    buf = _as_bytes(tokens)
    for n in range(min(max_ngram, n_tok - 1), min_ngram - 1, -1):
        pattern = buf[4 * (n_tok - n) :]
        end = 4 * (n_tok - 1)  # a match must end before the last token
        pos = buf.rfind(pattern, 0, end)
        while pos >= 0 and pos % 4:  # a hit inside a token boundary: look further left
            pos = buf.rfind(pattern, 0, pos + len(pattern) - 1)
        if pos >= 0:
            start = pos // 4 + n  # first token after the match
            return [int(t) for t in tokens[start : start + k]], n
    return [], 0


class PromptLookupDraft:
    """The draft side of a pair that looks its proposals up in the text (no weights).

    Same interface as the models (``fresh``, ``length``, ``rollback``, ``tokenizer``) so
    :func:`specdec_core.lm.speculative_generate` can take it as a draft; it holds no
    cache, so ``length`` stays 0, and the engine calls :meth:`propose` instead of
    ``extend``.
    """

    parallel_verify = False  # never verifies anything: it is only ever the draft
    context_length = LOOKUP_CONTEXT
    length = 0
    # Why a round may propose nothing, for the page (short form, sentence, what it buys)
    quiet_short = "no match in the text"
    quiet_gain = (
        "It gains where the text repeats (quotes of the prompt, code, lists) and costs "
        "almost nothing where it does not."
    )

    @property
    def quiet_why(self) -> str:
        return f"it found no earlier match of the last {self.max_ngram} to 1 tokens"

    def __init__(self, tokenizer: Tokenizer | None, max_ngram: int = MAX_NGRAM) -> None:
        """``max_ngram``: the longest suffix looked up (3, as the issue asks)."""
        if isinstance(max_ngram, bool) or not isinstance(max_ngram, int) or max_ngram < 1:
            raise InvalidParameterError(f"max_ngram is {max_ngram!r}; allowed: 1 or more.")
        self.tokenizer = tokenizer
        self.max_ngram = max_ngram
        self.name = f"prompt lookup (n = {max_ngram}..1)"

    def fresh(self) -> PromptLookupDraft:
        return copy.copy(self)

    def rollback(self, length: int) -> None:
        """Nothing is cached: rolling back to 0 is the only valid call."""
        if length != 0:
            raise InvalidParameterError(
                f"{self.name}: holds no tokens; cannot roll back to {length}."
            )

    def propose(self, tokens, k: int) -> list[int]:
        """Up to k draft tokens for what follows ``tokens`` (see :func:`find_continuation`)."""
        return find_continuation(tokens, k, self.max_ngram)
