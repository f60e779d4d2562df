"""What the Speedup explorer asks its class.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import specdec_core as sc
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import sig_text as _f
from specdec_ui.presets import SPEED_PRESETS


def questions() -> tuple[Question, ...]:
    """Speedup explorer: the latency budget preset (alpha 0.7, K = 4, 5 ms, 40 ms)."""
    s = SPEED_PRESETS["003-H"]
    e4 = sc.expected_tokens(s.alpha, 4)
    t4, s4 = sc.time_per_token(s.alpha, 4, s.c_q, s.c_p), sc.speedup(s.alpha, 4, s.c_q, s.c_p)
    e8 = sc.expected_tokens(s.alpha, 8)
    t8, s8 = sc.time_per_token(s.alpha, 8, s.c_q, s.c_p), sc.speedup(s.alpha, 8, s.c_q, s.c_p)
    best = sc.optimal_k(s.alpha, s.c_q, s.c_p)
    round4, round8 = 4 * s.c_q + s.c_p, 8 * s.c_q + s.c_p  # ms a round costs
    return (
        Question(
            "With alpha = 0.7 and K = 4 (the latency-budget preset), how many tokens does a "
            "round emit on average?",
            f"E = (1 − 0.7⁵) / (1 − 0.7) = **{_f(e4, 4)}** tokens: at least 1, at most 5.",
            (("E", e4),),
            number="E",
            tolerance=_tol(e4, 4),
            unit="tokens a round, on average",
        ),
        Question(
            "A draft step takes 5 ms and a target pass 40 ms. What does one token cost at "
            "K = 4, and how much faster is that than the target alone?",
            f"A round costs 4 × 5 + 40 = {_f(round4)} ms for {_f(e4, 4)} tokens: "
            f"**{t4:.2f} ms** per token against 40 ms, a speedup of **{s4:.2f}x**.",
            (("round", round4), ("E", e4), ("ms per token", t4), ("speedup", s4)),
            number="speedup",
            tolerance=0.005,
            unit="the speedup at K = 4 (x)",
        ),
        Question(
            "Same alpha = 0.7 and costs (5 ms, 40 ms): why not K = 8, which drafts twice as much?",
            f"K = 8 emits {_f(e8, 3)} tokens a round, not twice {_f(e4, 3)}: a draft counts "
            "only if every draft before it was kept, with chance alpha to the power of its "
            f"position. Its round costs 8 × 5 + 40 = {_f(round8)} ms: {t8:.2f} ms per token, "
            f"{s8:.2f}x. The best K here is **{best}**.",
            (
                ("E8", e8),
                ("E", e4),
                ("round 8", round8),
                ("ms per token 8", t8),
                ("speedup 8", s8),
                ("best", best),
            ),  # fmt: skip
            number="best",
            tolerance=0.0,
            unit="the best K",
        ),
    )
