"""The Serving lab's "Why is mine slower?": one click sets the page to a case, and the
case's lesson is computed from the numbers on screen (never a fixed sentence that could
contradict them).

Each :class:`WhyItem` holds the page settings that show it and a lesson function of the
page's :class:`~specdec_ui.serving.view.Result`. Comparisons a lesson makes ("instead of
2.31x with CUDA graphs") are computed by the core for the same setup with one thing changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from specdec_core import serving as sv
from specdec_core import serving_measured as sm
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.text import md_escape
from specdec_ui.serving import settings as serving_settings
from specdec_ui.serving.view import Result

PREFIX = serving_settings.PREFIX
WHY_KEY = f"{PREFIX}__why"
CASES_KEY = f"{PREFIX}_why_cases"  # the box of the case buttons (WHY_SCROLL_JS finds it)

# Issue 33, item 16: on a phone the columns stack, so the case buttons and their lesson lie
# far below the charts a case changes. After a tap on a case (screens under 640 px, where
# Streamlit stacks columns), once the rerun it starts has ended, the first changed chart
# (the speedup against the batch size) is brought onto the screen, and kept there while a
# late layout moves it, until the reader moves the page (scroll, touch, key) or 20 s after
# the last rerun it saw. A static script (no run-time text), installed once per window.
WHY_SCROLL_JS = """<script>
(() => {
  if (window.__specdecWhyScroll) { return; }
  window.__specdecWhyScroll = true;
  const FOLLOW_MS = 20000, PHONE_PX = 640, START_MS = 1500;
  let timer = null, until = 0, clicked = 0, seenRun = false;
  const stop = () => { clearInterval(timer); timer = null; };
  for (const what of ["wheel", "touchstart", "keydown", "pointerdown"]) {
    document.addEventListener(what, stop, { capture: true, passive: true });
  }
  const follow = () => {
    if (Date.now() > until) { stop(); return; }
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute("data-test-script-state") !== "notRunning") {
      seenRun = true;
      until = Date.now() + FOLLOW_MS;
      return;
    }
    if (!seenRun && Date.now() - clicked < START_MS) { return; }  // the rerun not begun
    const chart = document.querySelector(".st-key-serve_fig_speedup");
    if (!chart) { return; }
    const box = chart.getBoundingClientRect(), high = window.innerHeight;
    const fits = box.height <= high;
    if (fits ? box.top < 0 || box.bottom > high : Math.abs(box.top) > 2) {
      chart.scrollIntoView({ block: fits ? "center" : "start" });
    }
  };
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest(".st-key-serve_why_cases button");
    if (!button || window.innerWidth >= PHONE_PX) { return; }
    stop();
    clicked = Date.now();
    seenRun = false;
    until = clicked + FOLLOW_MS;
    timer = setInterval(follow, 150);
  }, true);
})();
</script>"""


@dataclass(frozen=True)
class WhyItem:
    """One entry of "Why is mine slower?": a label, the page settings that show it, a lesson."""

    label: str
    settings: dict[str, object]
    lesson: Callable[[Result], str]


def scenario(hw: str, target: str, draft: str, **workload: object) -> dict[str, object]:
    """Page values for presets ``hw``, ``target``, ``draft`` and a workload."""
    base = {
        key: serving_settings.DEFAULTS[key]
        for key in (
            "bw_frac",
            "fl_frac",
            "overhead",
            "bpp",
            "kernel",
            "work",
            "draft_c",
            "draft_tp",
            "prefill",
            "acc",
            "alpha",
            "tau",
            "verified",
            "k",
            "share",
        )
    }
    return {
        "hw": hw,
        **serving_settings.hw_values(hw),
        "target": target,
        **serving_settings.target_values(target),
        "draft": draft,
        **base,
        "batch": 1,
        "context": 1_024,
        **workload,
    }


# ----------------------------------------------------------------------------- words
def gain(x: float) -> str:
    """A speedup in words: "a gain of 1.28x", "no gain (1.00x)" or "a loss: 0.83x"."""
    if x >= 1.005:
        return f"a gain of {x:.2f}x"
    if x > 0.995:
        return f"no gain ({x:.2f}x)"
    return f"a loss: {x:.2f}x, slower than plain decoding"


def _now(result: Result) -> tuple[float, float, float, float]:
    """(speedup, c, v, tokens per round) at the chosen batch."""
    s, i = result.sweep, result.at
    return float(s.speedup[i]), float(s.c[i]), float(s.v[i]), float(s.expected)


def _with(result: Result, **changes) -> float:
    """The speedup at the chosen batch with the setup changed (``acceptance=`` too)."""
    acc = changes.pop("acceptance", result.acceptance)
    setup = dataclasses.replace(result.setup, **changes) if changes else result.setup
    return float(sv.round_speedup(setup, acc, result.batch))


def _round(result: Result) -> str:
    """ "K c + v + w = 1.23": a round in plain steps at the chosen batch (w: engine work)."""
    return f"K c + v + w = {float(result.sweep.round_steps[result.at]):.2f}"


def _best(result: Result) -> str:
    s, i = result.sweep, result.at
    if s.best_k is None:
        return ""
    return f" The best K at this batch is {int(s.best_k[i])}: {gain(float(s.best_speedup[i]))}."


# ----------------------------------------------------------------------------- lessons
def _compute_lesson(r: Result) -> str:
    x, c, v, e = _now(r)
    m = r.acceptance.verified_tokens
    words = {True: "arithmetic", False: "memory"}
    return (
        f"{r.batch:,} sequences x {m} tokens = {r.batch * m:,} tokens per verify: its linear "
        f"layers are bound by {words[bool(r.verify.linear_compute_bound)]} (the plain step's, "
        f"one token per sequence, by {words[bool(r.plain.linear_compute_bound)]}), so v = "
        f"{v:.2f} and a round of K = {r.acceptance.k} costs {_round(r)} plain steps "
        f"(c = {c:.3f}) for {e:.2f} tokens: {gain(x)}.{_best(r)} "
        "On a CPU (◆, this server) a small model is bound by arithmetic already at batch 1."
    )


def _k_large_lesson(r: Result) -> str:
    x, _, v, _ = _now(r)
    k, a = r.acceptance.k, r.acceptance.alpha
    return (
        f"Each extra draft costs a draft step in every round but is kept only when every draft "
        f"before it was (the {k}th in alpha^{k} = {a**k:.1%} of the rounds). At batch "
        f"{r.batch:,} the verify of {k + 1} tokens per sequence costs v = {v:.2f} plain steps, "
        f"and K = {k} gives {gain(x)}.{_best(r)} Compare the dashed best-K curve."
    )


def _alpha_low_lesson(r: Result) -> str:
    x, c, v, e = _now(r)
    k = r.acceptance.k
    helps = "makes up for" if x >= 1 else "cannot make up for"
    return (
        "llama-68m was trained on other text, with the Llama 2 tokenizer: its tokens must be "
        f"translated for a Llama 3 target, and alpha is low ({r.acceptance.alpha:.2f} assumed "
        f"here). A round emits E = {e:.2f} tokens; the draft's c = {c:.3f}, so a round costs "
        f"{_round(r)} plain steps (K = {k}, v = {v:.2f}, w the engine's work): {gain(x)}. "
        f"Its tiny c {helps} the low alpha."
    )


def _temperature_lesson(r: Result) -> str:
    x, _, _, e = _now(r)
    greedy = sv.Acceptance(r.acceptance.k, alpha=0.75)
    return (
        "The same pair, sampled at T = 1 instead of greedily: Leviathan et al. measured alpha "
        "0.75 at T = 0 and 0.62 at T = 1 (EnDe, T5-small draft; their Table 2). Both models "
        f"spread their probability, so sum min(p, q) shrinks: E falls from "
        f"{greedy.tokens_per_round:.2f} to {e:.2f} tokens per round: {gain(x)}, where alpha "
        f"0.75 gave {_with(r, acceptance=greedy):.2f}x."
    )


def _lookup_lesson(r: Result) -> str:
    x, _, _, _ = _now(r)
    acc = r.acceptance
    return (
        "Prompt lookup costs nothing (c = 0) but proposes only when the text already holds the "
        f"next words: here in {acc.propose_share:.0%} of the rounds, keeping alpha = "
        f"{acc.alpha:.2f} of what it proposes; the other rounds are plain steps of one token. "
        f"That is {acc.effective_tokens:.2f} tokens per round (prompt lookup's mean acceptance "
        "length on MT-bench was 1.63: EAGLE-3, Table 1) for a verify of "
        f"{acc.effective_verified:.1f} tokens per sequence on average: at batch {r.batch:,}, "
        f"{gain(x)}. (Leviathan et al.'s alpha of 0.03-0.23 in their Table 3 belong to unigram "
        "and bigram drafts, not to prompt lookup.)"
    )


def _slow_draft_lesson(r: Result) -> str:
    x, c, v, e = _now(r)
    return (
        f"A draft step that costs {c:.2f} target steps (a draft nearly as large as the target, "
        f"or one on slower hardware): a round costs {_round(r)} plain steps (v = {v:.2f}) "
        f"for {e:.2f} tokens: {gain(x)}."
    )


def _launch_lesson(r: Result) -> str:
    x, c, _, _ = _now(r)
    eager, graph = sm.EAGER_MS[(sm.TWO, 1, 1)], sm.TARGET_MS[(sm.TWO, 1_024, 1)][0]
    hw = r.setup.hardware
    graphed = dataclasses.replace(r.setup, hardware=hw.with_overhead(sv.DEFAULT_OVERHEAD_S))
    c0 = float(sv.draft_cost(graphed, r.batch))
    x0 = float(sv.round_speedup(graphed, r.acceptance, r.batch))
    step_ms = 1e3 * float(r.sweep.plain_s[r.at])
    return (
        "Without CUDA graphs every kernel is launched from the CPU: on the H200 the 8B step "
        f"took {eager:.2f} ms instead of {graph:.2f} ms with a graph (measured for this "
        f"project), {eager - graph:.1f} ms more per pass. Here every pass pays "
        f"{1e3 * hw.overhead_s:.1f} ms: a target step takes {step_ms:.2f} ms, and each draft "
        f"step pays it too (c = {c:.3f} instead of {c0:.3f}): {gain(x)}. With CUDA graphs "
        f"(0.5 ms per pass) it was {x0:.2f}x."
    )


def _prefill_lesson(r: Result) -> str:
    x, c, v, _ = _now(r)
    step_ms = 1e3 * float(r.sweep.plain_s[r.at])
    ms0 = 1e3 * float(sv.plain_step(dataclasses.replace(r.setup, prefill=0), r.batch))
    prompts, total = (float(t) for t in sv.prefill_shares(r.setup, r.acceptance, r.batch))
    return (
        f"New requests' prompts share the steps (chunked prefill): {r.setup.prefill:,} prompt "
        f"tokens per step run through the linear layers with the {r.batch:,} decoding "
        f"sequences, so a plain step takes {step_ms:.1f} ms instead of {ms0:.1f}. The "
        f"verify's extra tokens ride on that step (v = {v:.2f}, c = {c:.3f}): each sequence "
        f"decodes {x:.2f}x as fast, but a round is {_round(r)} plain steps, so "
        f"the prompts move {prompts:.2f}x as fast (new users wait longer for their first "
        f"token), and all tokens together, prompts and answers, come {total:.2f}x as fast: "
        f"{gain(total)} for the server as a whole."
    )


def _quantized_lesson(r: Result) -> str:
    x, _, _, _ = _now(r)
    bf16 = dataclasses.replace(r.setup, target=_bf16(r.setup.target))
    be0, cb0 = sv.break_even_batch(bf16, r.acceptance), sv.compute_bound_batch(bf16, 5)
    return (
        f"{r.setup.target.label}: the weights take a quarter of the bytes for the same "
        "arithmetic (the kernels dequantize them to bf16). The linear layers reach the compute "
        f"roof at {_batch(r.compute_bound)} instead of {_batch(cb0)} in bf16, and speculation "
        f"stops paying at {_batch(r.break_even)} instead of {_batch(be0)}. At batch "
        f"{r.batch:,}: {gain(x)} (bf16: {_with(r, target=bf16.target):.2f}x)."
    )


def _bf16(target: sv.ModelSpec) -> sv.ModelSpec:
    """The same model with bf16 weights."""
    return dataclasses.replace(target, bytes_per_param=2.0)


def _batch(b: int | None) -> str:
    return "no batch that fits" if b is None else f"b = {b:,}"


def _draft_tp_lesson(r: Result) -> str:
    x, c, _, _ = _now(r)
    model, hw, t = r.setup.draft_model, r.setup.hardware, r.setup.draft_chips
    split = sv.step_cost(model, hw, r.batch, 1, r.setup.context, tp=t)
    one = dataclasses.replace(r.setup, draft_tp=1)
    c1 = float(sv.draft_cost(one, r.batch))
    verdict = (
        "splitting pays at this batch"
        if c < c1
        else "one chip is faster here: set the draft to run on one chip"
    )
    return (
        f"The {model.label.split(' (')[0]} draft split over {t} chips: each of its "
        f"{model.layers} layers waits for two all-reduces ({1e3 * float(split.comm_s):.2f} ms "
        f"of its {1e3 * float(split.total_s):.2f} ms step), while its weights shrink {t}-fold. "
        f"c = {c:.3f} split against {c1:.3f} on one chip: {verdict}. Now: {gain(x)} "
        f"({_with(r, draft_tp=1):.2f}x with the draft on one chip)."
    )


BIG = ("4x-h100", "llama-3.1-70b")
WHY: dict[str, WhyItem] = {
    "compute": WhyItem(
        "Verifying is not free: a busy server (or a CPU)",
        scenario("h100-sxm", "llama-3.1-8b", "llama-3.2-1b", batch=192, context=512),
        _compute_lesson,
    ),
    "k_large": WhyItem(
        "K too large", scenario(*BIG, "llama-3.2-1b", batch=64, alpha=0.6, k=8), _k_large_lesson
    ),
    "alpha_low": WhyItem(
        "Low alpha: other training data or tokenizer",
        scenario(*BIG, "llama-68m", alpha=0.3),
        _alpha_low_lesson,
    ),
    "temperature": WhyItem(
        "T > 0: sampling lowers alpha",
        scenario(*BIG, "llama-3.2-1b", alpha=0.62),
        _temperature_lesson,
    ),
    "lookup": WhyItem(
        "Prompt lookup on text that does not repeat",
        scenario(*BIG, "ngram", alpha=0.7, share=0.35, batch=256),
        _lookup_lesson,
    ),
    "slow_draft": WhyItem(
        "A slow draft (c near 1)",
        scenario(*BIG, serving_settings.CUSTOM, draft_c=0.9),
        _slow_draft_lesson,
    ),
    "launch": WhyItem(
        "Engine overhead and kernel launches (no CUDA graphs)",
        scenario("h200", "llama-3.1-8b", "llama-3.2-1b", overhead=4.5),
        _launch_lesson,
    ),
    "prefill": WhyItem(
        "New requests' prompts share the steps",
        scenario(*BIG, "llama-3.2-1b", batch=64, prefill=2_048),
        _prefill_lesson,
    ),
    "quantized": WhyItem(
        "A quantized target (int4)",
        scenario(*BIG, "llama-3.2-1b", batch=64, bpp="int4"),
        _quantized_lesson,
    ),
    "draft_tp": WhyItem(
        "A draft under tensor parallelism",
        scenario(*BIG, "llama-3.2-1b", batch=16),
        _draft_tp_lesson,
    ),
}


def _apply_why(state: PageState, key: str) -> None:
    """on_click of a checklist button: set the page's widgets to that item's settings."""
    state.set_values(WHY[key].settings)
    st.session_state[WHY_KEY] = key


def why_slower(state: PageState, result: Result | None, values: dict[str, object]) -> None:
    """The checklist: each item one click that sets this page to show it happening."""
    st.header("Why is mine slower?")
    st.write(
        "Each button sets this page to a case where speculation disappoints; the answer and "
        "the charts above change with it, and the lesson below is computed from them."
    )
    st.sidebar.html(WHY_SCROLL_JS, unsafe_allow_javascript=True)
    items = list(WHY.items())
    with st.container(key=CASES_KEY):
        for row in range(0, len(items), 2):  # rows of two: a phone stacks them in this order
            cols = st.columns(2)
            for col, (key, item) in zip(cols, items[row : row + 2], strict=False):
                col.button(
                    item.label,
                    key=f"{PREFIX}_why_{key}",
                    on_click=_apply_why,
                    args=(state, key),
                    width="stretch",
                )
    active = st.session_state.get(WHY_KEY)
    if active in WHY and result is not None:
        with st.container(key="serve_why_now", border=True):
            st.markdown(f"**{md_escape(WHY[active].label)}.**")
            st.markdown(md_escape(lesson_for(active, result, values)))


def lesson_for(key: str, result: Result, values: dict[str, object]) -> str:
    """The case's lesson, computed from the page's numbers, while the page still shows the
    case; once an input changed, the lesson (about the case's own settings) is not shown."""
    settings = WHY[key].settings
    if any(values.get(name) != value for name, value in settings.items()):
        return (
            "You changed an input since choosing this case, so its lesson no longer matches "
            "the numbers above: press the case's button again to see it."
        )
    return WHY[key].lesson(result)
