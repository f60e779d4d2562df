"""A toy verification rule, as a newcomer would add one: this module and its test.

"Lazy verification" keeps a draft x ~ q with HALF the published chance, c min(1, p/q)
with c = 1/2, and replaces a rejected draft by a sample of the matching residual
r = (p - c min(p, q)) / (1 - c alpha): emitted = c min(p, q) + (1 - c alpha) r = p, so
it is exact (and slower). Its bug keeps every draft (the output then follows q).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import specdec_core as sc
from specdec_core.montecarlo import RoundTables, rounds_chunk
from specdec_core.rules import LABS, PositionStep, Rule, RuleKind
from specdec_core.rules.position import draw, geometric_tokens, keep_or_replace

LAZINESS = 0.5  # c: the fraction of the published keep chance


def _residual(p_target: np.ndarray, q_draft: np.ndarray) -> np.ndarray:
    """(V,) r = (p - c min(p, q)) / (1 - c alpha)."""
    left = p_target - LAZINESS * np.minimum(p_target, q_draft)
    return left / left.sum()


def lazy_tables(p_rows, q_rows) -> RoundTables:
    """accept = c min(1, p/q), final rows = the lazy residuals then the bonus, keep = c alpha."""
    k = q_rows.shape[0]
    accept = LAZINESS * sc.acceptance_probability(p_rows[:k], q_rows)  # (K, V)
    finals = [_residual(p, q) for p, q in zip(p_rows[:k], q_rows, strict=True)]
    return RoundTables(
        p_rows=p_rows,
        q_rows=q_rows,
        accept=accept,
        final_rows=np.vstack([*finals, p_rows[k]]),
        keep_probabilities=(accept * q_rows).sum(axis=1),
    )


def lazy_step(p_target, q_draft, rng) -> PositionStep:
    """x ~ q kept with c min(1, p(x)/q(x)), else a sample of the lazy residual."""
    x = draw(q_draft, rng)
    keep = LAZINESS * float(sc.acceptance_probability(p_target[x], q_draft[x]))
    return keep_or_replace(x, keep, _residual(p_target, q_draft), rng)


def lazy_emitted(p_target, q_draft) -> np.ndarray:
    """c min(p, q) + (1 - c alpha) r = p."""
    kept = LAZINESS * np.minimum(p_target, q_draft)
    return kept + (1.0 - kept.sum()) * _residual(p_target, q_draft)


def lazy_expected(p_target, q_draft, k: int) -> float:
    """E(c alpha, K)."""
    return geometric_tokens(LAZINESS * sc.acceptance_rate(p_target, q_draft), k)


def keep_all_tables(p_rows, q_rows) -> RoundTables:
    """The bug: every draft is kept (accept = 1)."""
    right = lazy_tables(p_rows, q_rows)
    ones = np.ones_like(right.accept)
    return dataclasses.replace(right, accept=ones, keep_probabilities=np.ones(q_rows.shape[0]))


def keep_all_step(p_target, q_draft, rng) -> PositionStep:
    """The bug at one position: the draft is always kept."""
    x = draw(q_draft, rng)
    return PositionStep(drafted=(x,), kept=True, emitted_token=x)


LAZY = Rule(
    name="toy_lazy",
    kind=RuleKind.EXACT,
    step=lazy_step,
    emitted=lazy_emitted,
    tables=lazy_tables,
    chunk=rounds_chunk,
    expected=lazy_expected,
    source=lazy_tables,
    labs=LABS,
)
KEEP_ALL = Rule(
    name="toy_keep_all",
    kind=RuleKind.BUG_OF,
    breaks="toy_lazy",
    step=keep_all_step,
    emitted=lambda p_target, q_draft: np.asarray(q_draft, dtype=np.float64),
    tables=keep_all_tables,
    chunk=rounds_chunk,
    expected=lambda p_target, q_draft, k: float(k + 1),
    source=keep_all_tables,
    labs=LABS,
)
