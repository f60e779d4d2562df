"""What the Model pair lab asks its class.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import specdec_core as sc
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import sig_text as _f


def questions() -> tuple[Question, ...]:
    """Model pair lab: greedy identity, the two formulas, a round that drafts nothing."""
    alpha, k, c, v = 0.64, 3, 0.06, 1.5  # about the default run's, as the page shows them
    e = sc.expected_tokens(alpha, k)
    basic, corrected = e / (k * c + 1), e / (k * c + v)
    return (
        Question(
            "At T = 0 the page says the output is identical to the target's own greedy "
            "decoding. Why must it be, token for token?",
            "At T = 0 both models put all their probability on their top token. A draft is "
            "kept exactly when it is the target's top token, and a rejected one is replaced "
            "by the target's top token: every token is the one the target alone would pick.",
            choices=(
                "A draft is kept only when it is the target's top token, and a rejected one is "
                "replaced by the target's top token",
                "The draft was trained to copy the target exactly",
                "At T = 0 no draft is ever kept",
                "The target checks every token twice",
            ),
            right=0,
        ),
        Question(
            "A run keeps alpha = 0.64 of its checked drafts at K = 3; a draft step costs "
            "c = 0.06 target steps and checking K + 1 tokens v = 1.5. What do the basic "
            "formula (v = 1) and the corrected one predict?",
            f"E = (1 − 0.64⁴) / (1 − 0.64) = {_f(e)} tokens a round. Basic: E / (K c + 1) = "
            f"{_f(e)} / 1.18 = **{_f(basic)}x**. Corrected: E / (K c + v) = {_f(e)} / 1.68 = "
            f"**{_f(corrected)}x**. On a CPU, checking 4 tokens costs more than one step, so "
            "the corrected one is the one near the clock.",
            (
                ("E", e),
                ("basic", basic),
                ("corrected", corrected),
                ("1.18", k * c + 1),
                ("1.68", k * c + v),
            ),  # fmt: skip
            number="corrected",
            tolerance=_tol(corrected),
            unit="the corrected formula's speedup (x)",
        ),
        Question(
            "The default run uses a fixed K, yet some rounds drafted nothing. How, and what "
            "does such a round cost?",
            "The default draft looks its guesses up (in the prompt, or in a table of the "
            "target's habits) and proposes only what it finds; K is the most it may propose. "
            "With nothing found, the round is one plain target step: one token, one call.",
            choices=(
                "Every draft was rejected: K draft steps for one token",
                "The draft found nothing to propose: the round is one plain target step, one "
                "token for one call",
                "K was set to 0 by mistake",
                "The target skipped that round",
            ),
            right=1,
        ),
    )
