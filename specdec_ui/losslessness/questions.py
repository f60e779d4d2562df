"""What the Losslessness lab asks its class.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import numpy as np

import specdec_core as sc
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import prob_text as _d
from specdec_ui.page_questions import sig_text as _f
from specdec_ui.presets import (
    DEFAULT_K,
    DEFAULT_ROUNDS,
    LAB_PRESETS,
)


def questions() -> tuple[Question, ...]:
    """Losslessness lab: the default preset (the worked round's p and q), K = 4."""
    preset = LAB_PRESETS["000"]
    p = np.array(sc.parse_distribution(preset.p_text, name="p"))
    q = np.array(sc.parse_distribution(preset.q_text, name="q"))
    alpha = sc.acceptance_rate(p, q)
    k = DEFAULT_K
    return (
        Question(
            "The preset's target is p = [0.40, 0.25, 0.20, 0.10, 0.05]. If the algorithm is "
            "right, what must the histogram of emitted tokens look like, whatever the draft q?",
            "Exactly p = [0.40, 0.25, 0.20, 0.10, 0.05], up to noise: keeping x with "
            "probability min(1, p/q) gives min(p, q), and the resample from the normalised "
            "leftover adds max(0, p − q), which together make p. The chi-square test checks it.",
            choices=(
                "Like q, since the drafts come from q",
                "Between p and q, depending on alpha",
                "min(p, q), normalised",
                "Like p, up to noise, whatever q is",
            ),
            right=3,
        ),
        _lab_bug_question(p, q, alpha, k),
        Question(
            "With K = 4, what share of the rounds keeps all four drafts and gets the bonus, "
            "and what share emits one token only?",
            f"All kept: alpha⁴ = {_f(alpha, 2)}⁴ = **{_f(alpha**k, 3)}** (5 tokens). One token "
            f"only (the first draft rejected): 1 − alpha = **{_f(1 - alpha, 2)}**. The "
            "tokens-per-round chart shows both bars.",
            (("alpha", alpha), ("all kept", alpha**k), ("1 - alpha", 1 - alpha)),
            number="all kept",
            tolerance=_tol(alpha**k),
            unit="the share of rounds that keep all four drafts",
        ),
    )


def _lab_bug_question(p: np.ndarray, q: np.ndarray, alpha: float, k: int) -> Question:
    """The Losslessness lab's bug question: what the chart shows under "resample from p"
    (every emitted token, the bonus from p included), beside a drafted position's law."""
    law = sc.emitted_distribution("resample_from_p", p, q)  # a drafted position's token
    e, bonus = sc.expected_tokens(alpha, k), alpha**k  # tokens a round; rounds with the bonus
    shown = ((e - bonus) * law + bonus * p) / e  # every emitted token: what the chart counts
    return Question(
        "Same p = [0.40, 0.25, 0.20, 0.10, 0.05] and q = [0.30, 0.30, 0.15, 0.15, 0.10], "
        "K = 4. Switch on the bug \u201cresample from p\u201d: which token comes out too "
        "often, and by how much?",
        f"At a drafted position the bug emits min(p, q) + (1 − alpha) p, with 1 − alpha = "
        f"{_f(1 - alpha, 2)}: B {_f(law[1], 4)} of the time instead of 0.25, A only "
        f"{_d(law[0])} instead of 0.40. The chart counts every emitted token, and the "
        f"bonus token (in alpha⁴ = {_f(bonus, 3)} of the rounds) comes from p, untouched "
        f"by the bug: of E = {_f(e, 3)} tokens a round, {_f(e - bonus, 3)} come from "
        f"drafted positions. So the bars settle at **B {_f(shown[1], 3)}** and "
        f"**A {_f(shown[0], 3)}** (D and E too often as well); a run of "
        f"{DEFAULT_ROUNDS:,} rounds lands within a few thousandths of these. Tokens the "
        "draft over-proposes (q > p) are kept as often as the target allows and then come "
        "back from p again.",
        (
            ("1 - alpha", 1 - alpha),
            ("B", float(law[1])),
            ("A", float(law[0])),
            ("bonus share", bonus),
            ("E", e),
            ("drafted", e - bonus),
            ("B shown", float(shown[1])),
            ("A shown", float(shown[0])),
            ("rounds", DEFAULT_ROUNDS),
        ),
        number="B shown",
        tolerance=_tol(float(shown[1]), 3),
        unit="B's share of the emitted tokens in the chart, under the bug",
    )
