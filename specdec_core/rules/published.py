"""The exact (lossless) rules: as published, strict, multi-draft, token tree, one-hot drafts.

Each is registered once in :data:`specdec_core.rules.RULES`; its pieces live where the
mathematics is written out (:mod:`specdec_core.sampling`, :mod:`specdec_core.variants`,
:mod:`specdec_core.variants_sim`, :mod:`specdec_core.variants_tree`).
"""

from __future__ import annotations

import numpy as np

from .. import variants as vr
from .. import variants_tree as vt
from ..errors import InvalidParameterError
from ..montecarlo import correct_tables, rounds_chunk
from ..sampling import _overlap, _residual, acceptance_probability, decide_round
from ..variants_sim import candidates_chunk, multidraft_tables, strict_chunk, strict_tables
from .position import draw, geometric_tokens
from .registry import PositionStep, Rule, RuleKind, register_rule


# ----------------------------------------------------------------------------- as published
def correct_step(p_target, q_draft, rng) -> PositionStep:
    """One position of Leviathan et al. 2023, Algorithm 1: x ~ q, keep iff u < min(1, p/q),
    else a sample of norm(max(0, p - q)) (the one kernel, :func:`decide_round`, K = 1)."""
    x = draw(q_draft, rng)
    result = decide_round(np.stack([p_target, p_target]), q_draft[None, :], (x,), rng=rng)
    return PositionStep((x,), result.n_accepted == 1, result.emitted_tokens[0], result)


def emitted_correct(p_target, q_draft) -> np.ndarray:
    """q min(1, p/q) + (1 - alpha) norm(max(0, p - q)) = min(p, q) + max(0, p - q) = p."""
    kept = q_draft * acceptance_probability(p_target, q_draft)  # (V,)
    return kept + (1.0 - kept.sum()) * _residual(p_target, q_draft)[1]


def expected_correct(p_target, q_draft, k: int) -> float:
    """E(alpha, K) = (1 - alpha^(K+1)) / (1 - alpha), alpha = sum min(p, q) (Eq. 1)."""
    return geometric_tokens(float(_overlap(p_target, q_draft)), k)


# ----------------------------------------------------------------------------- strict
def strict_position(p_target, q_draft, rng) -> PositionStep:
    """x ~ q, the target's own y ~ p; keep x iff x == y, else emit y (:func:`strict_step`)."""
    step = vr.strict_step(p_target, q_draft, draw(q_draft, rng), rng=rng)
    return PositionStep((step.token,), step.accepted, step.emitted_token, step)


def emitted_strict(p_target, q_draft) -> np.ndarray:
    """p q + p (1 - q) = p (:func:`specdec_core.variants.strict_emitted`)."""
    return vr._strict_emitted(p_target, q_draft, fresh_after_mismatch=False)


def expected_strict(p_target, q_draft, k: int) -> float:
    """E(beta, K), beta = sum p q (:func:`specdec_core.variants.strict_expected_tokens`)."""
    return vr.strict_expected_tokens(p_target, q_draft, k)


# ----------------------------------------------------------------------------- multi-draft
def multidraft_position(p_target, q_draft, rng, n_candidates=2) -> PositionStep:
    """m candidates x_i ~ q tried in order along the residual chain (SpecInfer)."""
    candidates = vr.draft_candidates(q_draft, n_candidates, rng)
    step = vr.multidraft_step(p_target, q_draft, candidates, rng=rng)
    return PositionStep(candidates, step.kept_index is not None, step.emitted_token, step)


def emitted_multidraft(p_target, q_draft, n_candidates=2) -> np.ndarray:
    """m candidates with the residual update (SpecInfer). Lossless."""
    m = vr.check_candidates(n_candidates, m_max=vr.MAX_CANDIDATES_THEORY)
    return vr._multidraft_emitted(p_target, q_draft, m)


def expected_multidraft(p_target, q_draft, k: int, n_candidates=2) -> float:
    """sum_{i=0..K} beta_m^i (:func:`specdec_core.variants.multidraft_expected_tokens`)."""
    return float(vr.multidraft_expected_tokens(p_target, q_draft, k, n_candidates))


# ----------------------------------------------------------------------------- token tree
def _first_width(branching) -> int:
    widths = tuple(branching)
    if not widths:
        raise InvalidParameterError("branching: give at least one level, e.g. (2, 2).")
    return vr.check_candidates(widths[0], m_max=vr.MAX_CANDIDATES_THEORY)


def tree_position(p_target, q_draft, rng, branching=(2,)) -> PositionStep:
    """At one position a tree is a multi-draft step over the root's b_1 children."""
    return multidraft_position(p_target, q_draft, rng, n_candidates=_first_width(branching))


def emitted_tree(p_target, q_draft, branching=(2,)) -> np.ndarray:
    """Token tree: at one position, a multi-draft step over the b_1 children. Lossless."""
    return vr._multidraft_emitted(p_target, q_draft, _first_width(branching))


def tree_tables(p_rows, q_rows, *, branching=(2,)):
    """A full tree of widths b_1..b_D as multi-draft with one width per position (K = D):
    the kept child's subtree is fresh when p, q depend only on the depth."""
    widths = vt.check_branching(branching)
    if len(widths) != q_rows.shape[0]:
        raise InvalidParameterError(
            f"branching {widths} has {len(widths)} levels; a tree's run has K = its depth."
        )
    return multidraft_tables(p_rows, q_rows, n_candidates=widths)


def expected_tree(p_target, q_draft, k: int, branching=(2,)) -> float:
    """1 + sum_d prod_{j<=d} beta_{b_j} (:func:`tree_expected_tokens`; K is the depth)."""
    return vt.tree_expected_tokens(p_target, q_draft, branching)


# ----------------------------------------------------------------------------- one-hot drafts
def _one_hot_token(q_draft) -> int:
    if q_draft.max() < 1.0:
        raise InvalidParameterError(
            "deterministic drafts need a one-hot q (a single entry equal to 1); "
            f"this q has {int((q_draft > 0).sum())} non-zero entries."
        )
    return int(np.argmax(q_draft))


def deterministic_position(p_target, q_draft, rng) -> PositionStep:
    """A one-hot draft x: y ~ p, keep x iff y == x, else emit y (:func:`onehot_match_step`)."""
    step = vr.onehot_match_step(p_target, _one_hot_token(q_draft), rng=rng)
    return PositionStep((step.token,), step.accepted, step.emitted_token, step)


def emitted_deterministic(p_target, q_draft) -> np.ndarray:
    """One-hot draft (prompt lookup, n-gram): the general rule with q = onehot(x). Lossless."""
    return vr._general_rule(p_target, _one_hot_token(q_draft)).emitted()


def deterministic_tables(p_rows, q_rows):
    """The published rule's tables, for one-hot draft rows (a q that is not one is refused)."""
    for q_row in q_rows:
        _one_hot_token(q_row)
    return correct_tables(p_rows, q_rows)


register_rule(
    Rule(
        name="correct",
        kind=RuleKind.EXACT,
        step=correct_step,
        emitted=emitted_correct,
        tables=correct_tables,
        chunk=rounds_chunk,
        expected=expected_correct,
        source=decide_round,
        labs=("losslessness",),
    )
)
# vLLM's rejection_sample_method = "strict", mlx-lm: keep x iff x == y ~ p, else emit y.
register_rule(
    Rule(
        name="strict",
        kind=RuleKind.EXACT,
        step=strict_position,
        emitted=emitted_strict,
        tables=strict_tables,
        chunk=strict_chunk,
        expected=expected_strict,
        source=vr.strict_step,
        keep_rule="strict",
    )
)
# SpecInfer: m candidates per position, the residual update after each rejection.
register_rule(
    Rule(
        name="multi_draft",
        kind=RuleKind.EXACT,
        step=multidraft_position,
        emitted=emitted_multidraft,
        tables=multidraft_tables,
        chunk=candidates_chunk,
        expected=expected_multidraft,
        source=vr.multidraft_step,
        options=("n_candidates",),
        law_options=("n_candidates",),
        labs=("variants",),
    )
)
register_rule(
    Rule(
        name="tree",
        kind=RuleKind.EXACT,
        step=tree_position,
        emitted=emitted_tree,
        tables=tree_tables,
        chunk=candidates_chunk,
        expected=expected_tree,
        source=vt.verify_tree,
        options=("branching",),
        law_options=("branching",),
        labs=("variants",),
    )
)
register_rule(
    Rule(
        name="deterministic",
        kind=RuleKind.EXACT,
        step=deterministic_position,
        emitted=emitted_deterministic,
        tables=deterministic_tables,
        chunk=rounds_chunk,
        expected=expected_correct,
        source=vr.onehot_general_rule,
        labs=("variants",),
    )
)
