"""What "Step through a round" asks its class.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import numpy as np

import specdec_core as sc
from specdec_ui.page_questions import WORKED_P as _P
from specdec_ui.page_questions import WORKED_Q as _Q
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import prob_text as _d
from specdec_ui.page_questions import sig_text as _f


def questions() -> tuple[Question, ...]:
    """Step through a round: the coin against a, the residual, the discarded drafts."""
    a_b = sc.acceptance_probability(0.25, 0.30)
    residual = sc.residual_distribution(_P, _Q)
    leftover = np.maximum(0.0, _P - _Q)
    z = float(leftover.sum())
    return (
        Question(
            "Open the worked example (a full round). At position 2 the draft proposed B with "
            "q(B) = 0.30, and the target has p(B) = 0.25. What is the chance that B is kept, "
            "and does the coin u = 0.72 keep it?",
            f"a = min(1, p/q) = min(1, 0.25 / 0.30) = **{_f(a_b)}**. The coin keeps B when "
            f"u < a: 0.72 < {_f(a_b)}, so B is **kept**. Over many rounds B survives "
            f"{_f(100 * a_b)}% of the time.",
            (("a", a_b), ("percent", 100 * a_b)),
            number="a",
            tolerance=_tol(a_b),
            unit="the chance a that B is kept",
        ),
        Question(
            "In the rejection example B is rejected. Where does the replacement token come "
            "from, and how likely is it to be A?",
            "From the leftover of p over q, normalised: max(0, p − q) = "
            f"[{', '.join(_d(x) for x in leftover)}], which sums to Z = {_d(z)} "
            f"(= 1 − alpha). So A comes out with {_d(leftover[0])} / {_d(z)} = "
            f"**{_f(residual[0])}** and C with **{_f(residual[2])}**; B, D and E never, "
            "since the draft already offered them at least as often as the target wants.",
            (
                *((f"leftover {i}", float(x)) for i, x in enumerate(leftover)),
                ("Z", z),
                ("A", float(residual[0])),
                ("C", float(residual[2])),
            ),
            number="A",
            tolerance=_tol(float(residual[0])),
            unit="the chance that the replacement is A",
        ),
        Question(
            "After B is rejected, why is C (drafted after B) never checked, however likely "
            "the target finds it?",
            "The draft wrote C assuming B came before it. Once B is replaced, C's context is "
            "gone, and so is the meaning of its probabilities: the round ends at the first "
            "rejection and every later draft is discarded unchecked.",
            choices=(
                "C is too unlikely under the target to be worth checking",
                "C is checked in the next round instead",
                "C was drafted assuming B came before it: once B is replaced, C's "
                "probabilities mean nothing",
                "The target pass stops early to save time",
            ),
            right=2,
        ),
    )
