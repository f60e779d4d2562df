"""Rules that are lossy by design: they trade exactness for speed on purpose.

Typical acceptance (Medusa, Cai et al. 2024) and greedy matching at temperature 0
(the target's greedy text, whatever the draft): their tokens do not follow p, and a
lab's chi-square test failing on them is the expected outcome, not a bug.
"""

from __future__ import annotations

import numpy as np

from .. import variants as vr
from ..montecarlo import RoundTables, rounds_chunk
from ..variants_sim import candidates_chunk, typical_tables
from .position import draw, geometric_tokens
from .registry import PositionStep, Rule, RuleKind, register_rule

TYPICAL_OPTIONS = ("epsilon", "delta", "after_rejection")


# ----------------------------------------------------------------------------- typical acceptance
def typical_position(
    p_target,
    q_draft,
    rng,
    epsilon=vr.MEDUSA_EPSILON,
    delta=vr.MEDUSA_DELTA,
    after_rejection="argmax",
) -> PositionStep:
    """x ~ q kept iff p(x) > min(epsilon, delta exp(-H(p))), else the correction token."""
    step = vr.typical_step(
        p_target,
        draw(q_draft, rng),
        epsilon=epsilon,
        delta=delta,
        after_rejection=after_rejection,
        rng=rng,
    )
    return PositionStep((step.token,), step.accepted, step.emitted_token, step)


def emitted_typical(
    p_target, q_draft, epsilon=vr.MEDUSA_EPSILON, delta=vr.MEDUSA_DELTA, after_rejection="argmax"
) -> np.ndarray:
    """Medusa's typical acceptance (:func:`specdec_core.variants.typical_emitted`)."""
    vr._check_typical(epsilon, delta, after_rejection)
    return vr._typical_emitted(p_target, q_draft, epsilon, delta, after_rejection)


def expected_typical(
    p_target, q_draft, k, epsilon=vr.MEDUSA_EPSILON, delta=vr.MEDUSA_DELTA, after_rejection="argmax"
) -> float:
    """sum_{i=0..K} r^i, r = sum_x q(x) [p(x) > tau] (the correction token ends a round)."""
    vr._check_typical(epsilon, delta, after_rejection)
    return vr.typical_expected_tokens(p_target, q_draft, k, epsilon, delta)


# ----------------------------------------------------------------------------- greedy (T = 0)
def greedy_tables(p_rows, q_rows) -> RoundTables:
    """Greedy verification: keep x_i iff x_i = argmax p_i; every last token is argmax p_j.

    accept_i = onehot(argmax p_i), F_n = onehot(argmax p_{n+1}), keep_i = q_i(argmax p_i).
    """
    k = q_rows.shape[0]
    best = np.argmax(p_rows, axis=1)  # (K+1,)
    greedy_rows = np.eye(p_rows.shape[1])[best]  # (K+1, V)
    return RoundTables(
        p_rows=p_rows,
        q_rows=q_rows,
        accept=greedy_rows[:k],
        final_rows=greedy_rows,
        keep_probabilities=q_rows[np.arange(k), best[:k]],
    )


def greedy_position(p_target, q_draft, rng) -> PositionStep:
    """x ~ q kept iff x = argmax p, else argmax p (:func:`specdec_core.variants.greedy_rule`)."""
    rule = vr.greedy_rule(p_target, draw(q_draft, rng))
    kept = rule.keep_probability == 1.0
    return PositionStep((rule.token,), kept, int(np.argmax(p_target)), rule)


def emitted_greedy(p_target, q_draft) -> np.ndarray:
    """Greedy check (T = 0): emits argmax p, the target's greedy token, whatever q."""
    out = np.zeros(p_target.size)
    out[int(np.argmax(p_target))] = 1.0
    return out


def expected_greedy(p_target, q_draft, k: int) -> float:
    """E(r, K) with r = q(argmax p): a draft is kept iff it is the target's greedy token."""
    return geometric_tokens(float(q_draft[int(np.argmax(p_target))]), k)


register_rule(
    Rule(
        name="typical_acceptance",
        kind=RuleKind.LOSSY_BY_DESIGN,
        step=typical_position,
        emitted=emitted_typical,
        tables=typical_tables,
        chunk=candidates_chunk,
        expected=expected_typical,
        source=vr.typical_step,
        options=TYPICAL_OPTIONS,
        law_options=TYPICAL_OPTIONS,
        labs=("variants",),
    )
)
register_rule(
    Rule(
        name="greedy",
        kind=RuleKind.LOSSY_BY_DESIGN,
        step=greedy_position,
        emitted=emitted_greedy,
        tables=greedy_tables,
        chunk=rounds_chunk,
        expected=expected_greedy,
        source=vr.greedy_rule,
        labs=("losslessness",),
    )
)
