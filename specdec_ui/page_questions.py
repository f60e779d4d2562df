"""What each page asks its class: two or three questions with worked answers, folded.

"What this page asks" used to repeat the page's intro. A teacher needs questions to put to
the class, with an answer to unfold after the students have tried. Every question is about
numbers a student can open on the page (its default preset or example), and every number in
an answer is computed here by the core (:mod:`specdec_core`), never typed:
``tests/app/test_held_speedup_and_page_questions.py`` recomputes each one and checks that an
answer states no number that is neither given in its question nor one of its computed
``facts``.

:func:`questions_for` gives a page's questions by its script path; :func:`questions_box`
draws them (Streamlit) inside "What this page asks", each answer in its own folded box.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

import specdec_core as sc
from specdec_core import serving as sv
from specdec_core import variants as vr
from specdec_ui.presets import (
    DEFAULT_K,
    DEFAULT_ROUNDS,
    LAB_PRESETS,
    SERVING_K_MAX,
    SPEED_PRESETS,
    VARIANT_PRESETS,
)

BOX_LABEL = "What this page asks"


@dataclass(frozen=True)
class Question:
    """One question for the class, its worked answer (markdown) and the numbers the answer
    states, by name, as the core computed them."""

    ask: str
    answer: str
    facts: tuple[tuple[str, float], ...] = ()
    # Asked in class (specdec_ui.classroom): multiple choice (``choices``, ``right`` the index
    # of the right one) or a number (the fact named ``number``, within ``tolerance``, the half
    # unit of the last digit its worked answer writes; ``unit`` says what the number is).
    choices: tuple[str, ...] = ()
    right: int = 0
    number: str = ""
    tolerance: float = 0.0
    unit: str = ""

    def fact(self, name: str) -> float:
        return dict(self.facts)[name]


def _tol(x: float, digits: int = 3) -> float:
    """Half a unit of the last of ``digits`` significant digits of ``x``: the tolerance its
    worked answer implies (``_f(x, digits)``)."""
    return 0.5 * 10.0 ** (np.floor(np.log10(abs(x))) - digits + 1) if x else 0.5 * 10.0**-digits


def _f(x: float, digits: int = 3) -> str:
    """A computed number as the answers write it (``digits`` significant digits)."""
    return f"{x:.{digits}g}"


def _d(x: float) -> str:
    """A probability with two decimals, as the pages write vector entries (0 for zero)."""
    return "0" if x == 0 else f"{x:.2f}"


# ----------------------------------------------------------------------------- the numbers
_P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # the worked round's target p (A..E)
_Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])  # and its draft q


def home_questions() -> tuple[Question, ...]:
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


def round_questions() -> tuple[Question, ...]:
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


def speedup_questions() -> tuple[Question, ...]:
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


def lab_questions() -> tuple[Question, ...]:
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


def self_test_questions() -> tuple[Question, ...]:
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


def model_pair_questions() -> tuple[Question, ...]:
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


def variants_questions() -> tuple[Question, ...]:
    """Variants lab: the rescue preset, strict verification, typical acceptance."""
    rescue = VARIANT_PRESETS["rescue"]
    p = np.array(sc.parse_distribution(rescue.p_text, name="p"))
    q = np.array(sc.parse_distribution(rescue.q_text, name="q"))
    beta1, beta2 = (float(x) for x in vr.multidraft_acceptance(p, q, np.array([1, 2])))
    strict, alpha = vr.strict_acceptance(_P, _Q), sc.acceptance_rate(_P, _Q)
    return (
        Question(
            "In the rescue preset (p = [0.70, 0.30, 0, 0], a flat draft), how often is one "
            "candidate kept, and how often one of two?",
            f"One: alpha = Σ min(p, q) = **{_f(beta1, 2)}**. After a rejection the target "
            "shrinks to its residual and the second candidate is tried against it: "
            f"beta_2 = **{_f(beta2, 3)}**. A second candidate rescues a position the first "
            "one lost.",
            (("beta1", beta1), ("beta2", beta2)),
            number="beta2",
            tolerance=_tol(beta2),
            unit="beta_2, the chance one of two candidates is kept",
        ),
        Question(
            "Strict verification keeps a draft only when the target's own sample is the same "
            "token. With the worked round's p and q, how often is that, against alpha?",
            f"beta = Σ p q = **{_f(strict, 3)}** against alpha = Σ min(p, q) = "
            f"**{_f(alpha, 2)}**. Both rules emit exactly p, but strict rounds are much shorter.",
            (("beta", strict), ("alpha", alpha)),
            number="beta",
            tolerance=_tol(strict),
            unit="beta, the strict rule's keep chance",
        ),
        Question(
            "Typical acceptance (Medusa) never looks at q and is faster. Why does it fail the "
            "chi-square test?",
            "It keeps any draft the target finds likely enough, with no coin that corrects "
            "for how often the draft proposes it, and takes argmax p after a rejection. The "
            "output then leans towards likely tokens: fluent, fast, and not distributed as p.",
            choices=(
                "It uses too few drafts for the test",
                "The test had too few rounds",
                "It keeps likely drafts with no coin that corrects for how often the draft "
                "proposes them, so the output leans towards likely tokens",
                "It samples its bonus token from q",
            ),
            right=2,
        ),
    )


# The Serving lab's default settings (its room's ``settings.DEFAULTS``, which this module may not
# import: tests/app/test_page_serving.py checks that they are the same setup and round).
SERVING_DEFAULT = ("4x-h100", "llama-3.1-70b", "llama-3.2-1b", 1_024)  # hardware, target, draft, n
SERVING_ALPHA, SERVING_K = 0.75, 4
K_LARGE = (64, 0.6, 8)  # "Why is mine slower?": "K too large" (batch, alpha, K), same setup


def serving_setup() -> sv.ServingSetup:
    """The Serving lab's default setup, built by the core (the preset's shares and overhead)."""
    hw, target, draft, context = SERVING_DEFAULT
    hardware = sv.GPUS[hw].with_overhead(sv.DEFAULT_OVERHEAD_S)
    hardware = hardware.with_fractions(sv.DEFAULT_BW_FRACTION, sv.DEFAULT_FLOPS_FRACTION)
    return sv.ServingSetup(hardware, sv.TARGETS[target], sv.DRAFTS[draft], context)


def _round_price(setup: sv.ServingSetup, acc: sv.Acceptance, batch: int) -> float:
    """K c + v + w: a round's cost in plain steps at ``batch`` (w: the engine's work)."""
    return float(sv.round_cost(setup, acc, batch))


def _serving_break_even(setup: sv.ServingSetup, acc: sv.Acceptance) -> Question:
    """Where speculation stops paying: the round's price against the tokens it emits."""
    e, b = acc.tokens_per_round, sv.break_even_batch(setup, acc)
    c1, v1 = (float(x) for x in sv.round_costs(setup, acc, 1))
    w1 = float(sv.engine_work_steps(setup, 1))
    s1, before = float(sv.round_speedup(setup, acc, 1)), float(sv.round_speedup(setup, acc, b - 1))
    price = {n: _round_price(setup, acc, n) for n in (b - 1, b)}
    return Question(
        "With the page's default settings (Llama 3.1 70B on 4 x H100, a Llama 3.2 1B draft, "
        f"K = 4, alpha = 0.75, context 1,024 tokens) speculation is {s1:.2f}x as fast at "
        "batch 1. At what batch does it stop paying, and why there?",
        f"A round emits E = (1 − 0.75⁵) / (1 − 0.75) = **{e:.2f}** tokens at any batch and "
        f"costs K c + v + w plain steps (w: the engine's {1e3 * setup.engine_work_s:.1f} ms of "
        f"work per round over a plain step): at batch 1, 4 × {c1:.3f} + {v1:.2f} + {w1:.2f} = "
        f"{acc.k * c1 + v1 + w1:.2f}, hence {s1:.2f}x. v grows with the batch (the verify's "
        "extra tokens cost "
        f"real arithmetic in a full batch, question 2): at b = {b - 1} the round costs "
        f"{price[b - 1]:.2f} plain steps (still {before:.2f}x), at b = **{b}** it costs "
        f"{price[b]:.2f}, more than the {e:.2f} tokens it emits. From there on speculation is "
        f"slower: the break-even batch the headline names, although {sv.max_batch(setup)} "
        "sequences would still fit in memory.",
        (
            ("E", e),
            ("c1", c1),
            ("v1", v1),
            ("engine work ms", 1e3 * setup.engine_work_s),
            ("w1", w1),
            ("price 1", acc.k * c1 + v1 + w1),
            ("speedup 1", s1),
            ("before", b - 1),
            ("price before", price[b - 1]),
            ("speedup before", before),
            ("break-even", b),
            ("price at", price[b]),
            ("fits", sv.max_batch(setup)),
        ),
        number="break-even",
        tolerance=0.0,
        unit="the batch where speculation stops paying",
    )


def _serving_verify(setup: sv.ServingSetup, acc: sv.Acceptance) -> Question:
    """Why the verify of K + 1 tokens stops being free: the compute-bound batch."""
    m, v = acc.verified_tokens, lambda b: float(sv.verify_cost(setup, acc.k, b))
    bound, plain_bound = sv.compute_bound_batch(setup, m), sv.compute_bound_batch(setup, 1)
    b_even, b_fit = sv.break_even_batch(setup, acc), sv.max_batch(setup)
    weights_gb = setup.target.weight_bytes / 1e9
    return Question(
        f"At batch 1, checking K + 1 = {m} tokens per sequence costs v = {v(1):.2f} plain "
        "steps, as if free. Why does the verify stop being free as the batch grows, and from "
        "which batch?",
        f"A step reads all the target's weights ({weights_gb:.1f} GB over the "
        f"{setup.hardware.chips} chips) whatever the number of tokens; at batch 1 the arithmetic "
        f"for {m} tokens hides under that read. The arithmetic grows with batch × tokens, the "
        f"read does not: from b = **{bound}** the verify's {bound * m} tokens per pass make its "
        "linear layers bound by arithmetic (the plain step's single token per sequence only "
        f"from b = {plain_bound}), and each checked token costs its own work: v = "
        f"{v(bound):.2f} at b = {bound}, {v(b_even):.2f} at the break-even b = {b_even} and "
        f"{v(b_fit):.2f} at b = {b_fit}, the largest batch that fits, climbing towards {m}.",
        (
            ("weights GB", weights_gb),
            ("bound", bound),
            ("tokens per pass", bound * m),
            ("plain bound", plain_bound),
            ("v bound", v(bound)),
            ("v break-even", v(b_even)),
            ("break-even", b_even),
            ("v fits", v(b_fit)),
            ("fits", b_fit),
        ),
        number="bound",
        tolerance=0.0,
        unit="the batch from which the verify is bound by arithmetic",
    )


def _serving_k_large(setup: sv.ServingSetup) -> Question:
    """The "K too large" case of "Why is mine slower?"."""
    batch, alpha, k = K_LARGE
    acc = sv.Acceptance(k, alpha=alpha)
    c, v = (float(x) for x in sv.round_costs(setup, acc, batch))
    w = float(sv.engine_work_steps(setup, batch))
    x, e = float(sv.round_speedup(setup, acc, batch)), acc.tokens_per_round
    best = sv.best_k(setup, alpha, batch, k_max=SERVING_K_MAX)
    best_x = float(sv.serving_speedup(setup, alpha, best, batch))
    bound = sv.compute_bound_batch(setup, k + 1)
    return Question(
        "In \u201cWhy is mine slower?\u201d press \u201cK too large\u201d: the same 70B on "
        "4 x H100 at batch 64, with alpha = 0.6 and K = 8. Why does drafting eight tokens a "
        "round make it slower than plain decoding?",
        f"The 8th draft counts only when the {k - 1} before it were kept: alpha⁸ = 0.6⁸ = "
        f"{alpha**k:.1%} of the rounds. A round emits E = (1 − 0.6⁹) / (1 − 0.6) = {e:.2f} "
        f"tokens but costs K c + v + w = 8 × {c:.3f} + {v:.2f} + {w:.2f} = {k * c + v + w:.2f} "
        "plain steps (w: the engine's work per round; from "
        f"b = {bound} on, the verify of {k + 1} tokens per sequence is bound by arithmetic): "
        f"**{x:.2f}x**. The best K at this batch is **{best}**: {best_x:.2f}x, with fewer "
        "draft steps and a cheaper verify.",
        (
            ("before", k - 1),
            ("percent", 100 * alpha**k),
            ("E", e),
            ("c", c),
            ("v", v),
            ("w", w),
            ("price", k * c + v + w),
            ("K + 1", k + 1),
            ("bound", bound),
            ("speedup", x),
            ("best", best),
            ("best speedup", best_x),
        ),
        number="best",
        tolerance=0.0,
        unit="the best K at batch 64",
    )


@functools.cache
def serving_questions() -> tuple[Question, ...]:
    """Serving lab: the break-even batch, why verify stops being free, "K too large"."""
    setup, acc = serving_setup(), sv.Acceptance(SERVING_K, alpha=SERVING_ALPHA)
    return (
        _serving_break_even(setup, acc),
        _serving_verify(setup, acc),
        _serving_k_large(setup),
    )


QUESTIONS: dict[str, Callable[[], tuple[Question, ...]]] = {
    "pages/scripts/home.py": home_questions,
    "pages/scripts/round.py": round_questions,
    "pages/scripts/speedup.py": speedup_questions,
    "pages/scripts/losslessness.py": lab_questions,
    "pages/scripts/self_test.py": self_test_questions,
    "pages/scripts/model_pairs.py": model_pair_questions,
    "pages/scripts/variants.py": variants_questions,
    "pages/scripts/serving.py": serving_questions,
}


def questions_for(page_path: str) -> tuple[Question, ...]:
    """The questions of the page whose script is ``page_path`` (none for other pages)."""
    make = QUESTIONS.get(page_path)
    return make() if make is not None else ()


def questions_box(questions: tuple[Question, ...], intro: str | None = None) -> None:
    """ "What this page asks" (folded): each question, its worked answer folded under it;
    then the page's intro, when the page shows it nowhere else (``intro``)."""
    with st.expander(BOX_LABEL, key="page_questions"):
        st.caption("Questions for the class; unfold an answer once they have tried.")
        for i, q in enumerate(questions, start=1):
            st.markdown(f"**{i}.** {q.ask}")
            with st.expander("Worked answer", key=f"page_answer_{i}"):
                st.markdown(q.answer)
        if intro is not None:
            st.divider()
            st.markdown(intro)
