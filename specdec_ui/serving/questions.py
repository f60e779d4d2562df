"""What the Serving lab asks its class: the break-even batch, why the verify stops being
free, "K too large".

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import functools

from specdec_core import serving as sv
from specdec_ui.page_questions import Question
from specdec_ui.presets import SERVING_K_MAX

# The Serving lab's default settings (its room's ``settings.DEFAULTS``, written out here:
# tests/app/test_page_serving.py checks that they are the same setup and round).
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
def questions() -> tuple[Question, ...]:
    """Serving lab: the break-even batch, why verify stops being free, "K too large"."""
    setup, acc = serving_setup(), sv.Acceptance(SERVING_K, alpha=SERVING_ALPHA)
    return (
        _serving_break_even(setup, acc),
        _serving_verify(setup, acc),
        _serving_k_large(setup),
    )
