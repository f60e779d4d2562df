"""The greedy rule (T = 0): the acceptance rule of speculative decoding on argmax choices.

At temperature 0 both models take their most likely token, so p_i and q_i are one-hot
rows: p_i at the target's argmax b_i, q_i at the draft x_i. Leviathan et al. 2023,
Algorithm 1 (:func:`specdec_core.sampling.decide_round`) then decides without chance:
min(1, p_i(x_i) / q_i(x_i)) is 1 when x_i = b_i and 0 otherwise, so every coin keeps a
match and rejects a mismatch; the residual max(0, p_i - q_i) of two different one-hot
rows is p_i itself, and the bonus row p_{K+1} is one-hot too. The round keeps drafts
while they equal the target's argmax and emits the argmax at the first mismatch (or the
bonus): the output equals the target's own greedy output token for token.

- :func:`greedy_decide`: the rule itself, :func:`decide_round` on the one-hot rows
  (the same code every other temperature runs);
- :func:`greedy_match`: what it keeps and emits, in closed form, for the engine's
  untraced T = 0 rounds, where building V-wide rows and a :class:`RoundResult` each
  round costs more than the decision (``tests/core/test_greedy.py`` proves it equal to
  :func:`greedy_decide` on every pattern of matches up to K = 8, and measures the cost).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .sampling import RoundResult, decide_round


def one_hot_rows(tokens: Sequence[int], vocab_size: int) -> np.ndarray:
    """Rows (len(tokens), V) with a 1 at each token: the distribution of an argmax choice."""
    rows = np.zeros((len(tokens), vocab_size))
    if len(tokens):
        rows[np.arange(len(tokens)), list(tokens)] = 1.0
    return rows


def greedy_decide(
    target_argmax: Sequence[int],
    draft_tokens: Sequence[int],
    vocab_size: int,
    rng: np.random.Generator,
) -> RoundResult:
    """One round at T = 0: :func:`decide_round` on one-hot p (the target's K + 1 argmax
    choices b_1..b_{K+1}) and one-hot q (the K drafts).

    Keeps x_i while x_i = b_i; at the first mismatch emits b_i (the residual of two
    different one-hot rows is p_i), after K matches the bonus b_{K+1}. ``rng`` supplies
    the uniforms the rule draws (one per checked position, then one); at T = 0 they decide
    nothing, as every acceptance probability is 0 or 1 and every final row is one-hot.
    """
    drafts = tuple(int(x) for x in draft_tokens)
    p_rows = one_hot_rows([int(b) for b in target_argmax], vocab_size)  # (K+1, V)
    q_rows = one_hot_rows(drafts, vocab_size)  # (K, V)
    return decide_round(p_rows, q_rows, drafts, rng=rng)


def greedy_match(
    target_argmax: Sequence[int], draft_tokens: Sequence[int]
) -> tuple[int, tuple[int, ...]]:
    """What :func:`greedy_decide` keeps and emits, in closed form: n, the length of the
    longest prefix on which x_i = b_i (0..K), and the tokens x_1..x_n, b_{n+1}."""
    n = 0
    for x, b in zip(draft_tokens, target_argmax, strict=False):
        if int(x) != int(b):
            break
        n += 1
    return n, (*(int(x) for x in draft_tokens[:n]), int(target_argmax[n]))
