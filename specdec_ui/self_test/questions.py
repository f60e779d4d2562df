"""What the Self-test asks its class before the quiz.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import numpy as np

import specdec_core as sc
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import sig_text as _f


def questions() -> tuple[Question, ...]:
    """Self-test: questions for a discussion before the quiz."""
    a = sc.acceptance_probability(0.2, 0.5)
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.6, 0.2])
    alpha = sc.acceptance_rate(p, q)
    return (
        Question(
            "Some tutorials say \u201ckeep a draft if p ≥ q\u201d. The draft proposes x with "
            "q(x) = 0.5, the target has p(x) = 0.2. What does the real rule do, and why?",
            f"It keeps x with probability min(1, p/q) = 0.2 / 0.5 = **{_f(a, 2)}**, not never: "
            "tokens the draft over-proposes are thinned out to exactly what the target wants. "
            "\u201cp ≥ q\u201d would never keep x, and the output would no longer follow p.",
            (("a", a),),
            number="a",
            tolerance=_tol(a, 2),
            unit="the chance that x is kept",
        ),
        Question(
            "p = [0.5, 0.3, 0.2] and q = [0.2, 0.6, 0.2]. How often is a drafted token kept?",
            f"alpha = Σ min(p, q) = 0.2 + 0.3 + 0.2 = **{_f(alpha, 2)}** (= 1 − TV(p, q)).",
            (("alpha", alpha),),
            number="alpha",
            tolerance=_tol(alpha, 2),
            unit="alpha",
        ),
    )
