"""What the Home page asks its class: the bonus token, the timeline, alpha.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import specdec_core as sc
from specdec_ui.page_questions import WORKED_P as _P
from specdec_ui.page_questions import WORKED_Q as _Q
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import sig_text as _f


def questions() -> tuple[Question, ...]:
    """Home: the bonus token, the timeline's arithmetic, alpha of the worked round."""
    draft_step, target_pass, k = 1.0, 4.0, 3
    spec_time, plain_time = k * draft_step + target_pass, (k + 1) * target_pass
    alpha = sc.acceptance_rate(_P, _Q)
    e = sc.expected_tokens(alpha, k)
    return (
        Question(
            "The target checks K = 3 drafts in one pass. Why can that pass give 4 tokens, not 3?",
            "Scoring the 3 drafts gives the target its own distribution at the position after "
            "them too. When all 3 are kept, one more token is sampled from it: the **bonus**. "
            f"So a round emits between 1 and K + 1 = {k + 1} tokens.",
            (("K + 1", k + 1),),
            choices=(
                "The draft adds a fourth token of its own",
                "The target's pass also gives its distribution after the last draft: a bonus "
                "token when all 3 are kept",
                "The target runs twice in such a round",
                "It cannot: a round emits at most K tokens",
            ),
            right=1,
        ),
        Question(
            "In the timeline a draft step costs 1 time unit and a target pass 4. How long do "
            "the speculative round and the target alone take for the same 4 tokens?",
            f"Speculative: 3 × 1 + 4 = **{_f(spec_time)}** units. Target alone: 4 × 4 = "
            f"**{_f(plain_time)}** units. This round is {_f(plain_time / spec_time)}x faster, "
            "because all three drafts were kept; a rejection makes it emit fewer tokens for "
            "the same time.",
            (("speculative", spec_time), ("alone", plain_time), ("ratio", plain_time / spec_time)),
            number="speculative",
            tolerance=_tol(spec_time),
            unit="the speculative round, in time units",
        ),
        Question(
            "The worked round has p = [0.40, 0.25, 0.20, 0.10, 0.05] and q = [0.30, 0.30, "
            "0.15, 0.15, 0.10]. What is alpha, and what does it mean?",
            "alpha = Σ min(p, q) = 0.30 + 0.25 + 0.15 + 0.10 + 0.05 = "
            f"**{_f(alpha, 2)}**: the chance that one drafted token is kept. With K = 3 a "
            f"round then emits on average (1 − alpha⁴) / (1 − alpha) = **{_f(e)}** tokens.",
            (("alpha", alpha), ("E", e)),
            number="alpha",
            tolerance=_tol(alpha, 2),
            unit="alpha",
        ),
    )
