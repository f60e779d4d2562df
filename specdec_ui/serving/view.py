"""The Serving lab's settings, inputs and answer (the page file only calls the sections).

- :func:`page_state` / :func:`start` / :func:`inputs` / :func:`share`: the page's settings,
  read from a link once, drawn in the main column, written back to the link;
- :func:`compute`: the core's numbers for the chosen settings (:class:`Result`);
- :func:`this_server_costs`: the ONE place that reads what this server measures (the
  Model pair lab's cost profile, ``model_pairs.work.get_costs``);
- :func:`headline`, :func:`metrics`, :func:`charts`, :func:`server_note`: the answer.

The other sections live in :mod:`specdec_ui.serving.cases` ("Why is mine slower?"),
:mod:`specdec_ui.serving.engine_log` (the engine-log decoder) and :mod:`specdec_ui.serving.checks`
(the H200
measurement, the published results, what the model leaves out). No math here: every number
comes from :mod:`specdec_core.serving`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core import serving as sv
from specdec_core import serving_models as smod
from specdec_core.lm.adaptive import CostProfile
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.text import md_escape
from specdec_ui.model_pairs import work as model_pairs_work
from specdec_ui.runtime import shared_work
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.serving import figures, settings

PREFIX = settings.PREFIX
CUSTOM = settings.CUSTOM
K_MAX = settings.K_MAX
SERVER_PAIR = "gpt-1L-to-gpt-4L"  # this server's draft model and target (Model pair lab)
SERVER_LABEL = "this server, tiny GPT pair"  # the ◆ point's name on the charts (SERVER_PAIR)
SERVER_T = 0.0
POLL_S = 1.5
CURVE_K = (1, 2, 4, 8)
MARKS = (1, 8, 64, 512)
INPUTS_LABEL = "⚙️ Inputs: hardware, models, batch, context, acceptance"
INTRO = (
    "On a GPU, one decoding step of a large model reads every weight from memory, so "
    "checking K + 1 drafted tokens costs about as much as producing one: 2-3x is normal at "
    "batch 1. A server runs many sequences per step, though, and once the step's matrix "
    "products are bound by arithmetic instead of memory, each drafted token costs real work: "
    "the gain melts away and turns into a slowdown. Pick hardware, models, batch and context "
    "and watch where."
)
DEFAULTS = settings.DEFAULTS
values_from_link = settings.values_from_link


def page_state() -> PageState:
    return PageState(PREFIX, DEFAULTS)


def start(state: PageState) -> None:
    """On the session's first visit: take the settings from the link."""
    if (link := state.first_visit()) is not None:
        state.start(values_from_link(link), link.problems)
    state.restore()


# ----------------------------------------------------------------------------- inputs
def _hardware_inputs(state: PageState) -> None:
    to_custom = state.to_custom(CUSTOM, "hw")
    state.preset_select(
        "Hardware",
        [*sv.GPUS, CUSTOM],
        sv.GPUS,
        settings.hw_values,
        custom=CUSTOM,
        name="hw",
        custom_label="Typed hardware (the numbers below)",
    )
    cols = st.columns(3)
    for i, (name, (label, _, _, lo, hi, step)) in enumerate(settings.HW_FIELDS.items()):
        cols[i % 3].number_input(label, lo, hi, step=step, key=state.key(name), on_change=to_custom)
    cols[2].number_input(
        "chips (tensor parallel)", *settings.CHIPS, key=state.key("hw_chips"), on_change=to_custom
    )
    _efficiency_inputs(state)


def _efficiency_inputs(state: PageState) -> None:
    cols = st.columns(3)
    measured = "Measured on an H200 for this project: "
    cols[0].number_input(
        "share of peak bandwidth reached",
        *settings.SHARE,
        step=0.01,
        format="%.2f",
        key=state.key("bw_frac"),
        help=measured + "the 8B's weights were read at 0.67 of the 4.8 TB/s (a plain copy "
        "reached 0.85). Allowed: more than 0, at most 1.",
    )
    cols[1].number_input(
        "share of peak FLOP/s reached",
        *settings.SHARE,
        step=0.01,
        format="%.2f",
        key=state.key("fl_frac"),
        help=measured + "decoder-shaped bf16 GEMMs reached 0.50-0.72 of 989 TFLOP/s; the "
        "best large GEMM on an H100 reaches 0.80 (Bekman's MAMF table).",
    )
    cols[2].number_input(
        "overhead per pass (ms)",
        *settings.OVERHEAD_MS,
        step=0.05,
        format="%.2f",
        key=state.key("overhead"),
        help=measured + "about 0.5 ms per forward pass beyond the bytes (kernel launches "
        "inside a CUDA graph, norms). Without CUDA graphs the 8B step took 9.41 ms, not 5.44.",
    )
    _engine_inputs(state)


def _engine_inputs(state: PageState) -> None:
    left, right = st.columns(2)
    left.selectbox(
        "attention kernel (how the verify pays for the KV cache)",
        list(sv.KERNELS),
        format_func=settings.KERNEL_LABELS.get,
        key=state.key("kernel"),
        help="torch, as measured: fitted on this project's H200 table; several query tokens "
        "read the cache slower and pay their arithmetic on top. A tuned engine kernel "
        "(FlashInfer, FlashAttention-3): one pass over the cache for every token, arithmetic "
        "on tensor cores; assumed, not timed here.",
    )
    fit = ", ".join(sv.ENGINE_WORK_FIT_ROWS)
    right.number_input(
        "engine work per round (ms)",
        *settings.ENGINE_WORK_MS,
        step=0.1,
        format="%.2f",
        key=state.key("work"),
        help="Draft steps' bookkeeping, tree building, sampling and the CPU's sync between "
        f"draft and verify, once per round. Default {1e3 * sv.DEFAULT_ENGINE_WORK_S:.1f} ms: "
        f"fitted on 4 of the 23 published rows ({fit}) and checked on the others (the table "
        "below says which). Allowed: 0 to 1,000 ms.",
    )


def _target_inputs(state: PageState) -> None:
    to_custom = state.to_custom(CUSTOM, "target")
    state.preset_select(
        "Target model",
        [*sv.TARGETS, CUSTOM],
        sv.TARGETS,
        settings.target_values,
        custom=CUSTOM,
        name="target",
        custom_label="Typed model (the numbers below)",
    )
    cols = st.columns(4)
    cols[0].number_input(
        "parameters (billions)",
        *settings.PARAMS_B,
        step=1e-6,  # on its minimum's grid: the browser reads a preset's 70.552388 as valid
        format="%.3f",
        key=state.key("t_params"),
        on_change=to_custom,
    )
    for i, (name, (label, lo, hi)) in enumerate(settings.TARGET_INTS.items(), start=1):
        cols[i % 4].number_input(label, lo, hi, key=state.key(name), on_change=to_custom)
    left, right = st.columns(2)
    left.checkbox(
        "tied embeddings (the LM head is the input embedding)",
        key=state.key("t_tied"),
        on_change=to_custom,
    )
    right.selectbox(
        "bytes per weight",
        list(sv.BYTES_PER_PARAM),
        key=state.key("bpp"),
        format_func=settings.BPP_LABELS.get,
        help="Weight-only quantization: the weights shrink, the arithmetic stays at the bf16 "
        "rate, the KV cache stays bf16.",
    )


def _draft_inputs(state: PageState) -> None:
    left, right = st.columns([3, 2])
    with left:
        state.preset_select(
            "Draft",
            [*sv.DRAFTS, CUSTOM],
            sv.DRAFTS,
            lambda _: None,
            custom=CUSTOM,
            name="draft",
            custom_label="Typed c (a draft step / a target step, any batch)",
        )
    chosen = st.session_state.get(state.key("draft"))
    if chosen == CUSTOM:
        right.number_input("c (typed)", *settings.DRAFT_C, step=0.05, key=state.key("draft_c"))
    elif sv.DRAFTS[chosen].fixed_c is None:  # a model: it runs on some chips
        right.radio(
            "the draft model runs on",
            list(settings.DRAFT_TP),
            format_func=settings.DRAFT_TP.get,
            key=state.key("draft_tp"),
            horizontal=True,
            help="vLLM's speculative_draft_tensor_parallel_size: 1 or the target's.",
        )


def _workload_inputs(state: PageState) -> None:
    cols = st.columns(3)
    cols[0].number_input("batch size b", *settings.BATCH, step=1, key=state.key("batch"))
    cols[1].number_input("context n (tokens)", *settings.CONTEXT, step=1, key=state.key("context"))
    cols[2].number_input(
        "prompt tokens per step (prefill)",
        *settings.PREFILL,
        step=256,
        key=state.key("prefill"),
        help="New requests' prompts processed in the same steps (chunked prefill under load).",
    )


def _acceptance_inputs(state: PageState) -> None:
    st.radio(
        "acceptance",
        list(settings.ACC_MODES),
        format_func=settings.ACC_MODES.get,
        key=state.key("acc"),
        horizontal=True,
    )
    cols = st.columns(3)
    if st.session_state[state.key("acc")] == "alpha":
        cols[0].slider("alpha: acceptance rate", 0.0, 1.0, step=0.01, key=state.key("alpha"))
    else:
        cols[0].number_input(
            "tau: tokens per round (an engine's AL)",
            *settings.TAU,
            step=0.05,
            format="%.2f",
            key=state.key("tau"),
        )
        cols[0].number_input(
            "tokens verified per round (tree size)", *settings.VERIFIED, key=state.key("verified")
        )
    cols[1].slider("K: draft steps per round (a tree: its depth)", 1, K_MAX, key=state.key("k"))
    cols[2].slider(
        "share of rounds that propose drafts",
        0.0,
        1.0,
        step=0.05,
        key=state.key("share"),
        help="Prompt lookup proposes only when the text already holds the next words; a "
        "round without a proposal is a plain step of one token.",
    )


def inputs(state: PageState) -> None:
    """Hardware, target, draft, workload and acceptance (main column)."""
    _hardware_inputs(state)
    _target_inputs(state)
    _draft_inputs(state)
    _workload_inputs(state)
    _acceptance_inputs(state)


def share(state: PageState, values: dict[str, object]) -> None:
    """Every setting in the address bar and on screen (with the QR code)."""
    text = {
        name: (f"{value:.10g}" if isinstance(value, float) else value)
        for name, value in values.items()
    }
    state.share(text)


# ----------------------------------------------------------------------------- the model
def _hardware(values: dict[str, object]) -> sv.Hardware:
    key, overhead_s = str(values["hw"]), float(values["overhead"]) / 1e3
    shares = (float(values["bw_frac"]), float(values["fl_frac"]))
    kernel = sv.KERNELS[str(values["kernel"])]
    if key in sv.GPUS:
        return sv.GPUS[key].with_overhead(overhead_s).with_fractions(*shares).with_kernel(kernel)
    typed = {
        field: float(values[n]) * scale for n, (_, field, scale, *_) in settings.HW_FIELDS.items()
    }
    return sv.Hardware(
        "typed hardware",
        chips=int(values["hw_chips"]),
        overhead_s=overhead_s,
        bw_fraction=shares[0],
        flops_fraction=shares[1],
        link="typed link",
        kernel=kernel,
        **typed,
    )


def _target(values: dict[str, object]) -> sv.ModelSpec:
    key, bpp = str(values["target"]), str(values["bpp"])
    if key in sv.TARGETS:
        model = sv.TARGETS[key]
        return model if bpp == "bf16" else model.quantized(sv.BYTES_PER_PARAM[bpp], bpp)
    shape = tuple(int(values[name]) for name in ("t_layers", "t_d", "t_heads", "t_kv", "t_hd"))
    return smod.model_from_params(
        f"typed model ({bpp})",
        float(values["t_params"]) * 1e9,
        shape=shape,
        vocab=int(values["t_vocab"]),
        tied=bool(values["t_tied"]),
        bytes_per_param=sv.BYTES_PER_PARAM[bpp],
    )


def _draft(values: dict[str, object]) -> sv.DraftSpec:
    key = str(values["draft"])
    if key in sv.DRAFTS:
        return sv.DRAFTS[key]
    return sv.DraftSpec("typed draft", fixed_c=float(values["draft_c"]))


def build_setup(values: dict[str, object]) -> sv.ServingSetup:
    """Hardware, target, draft and workload from the page's values (checked by the core)."""
    return sv.ServingSetup(
        _hardware(values),
        _target(values),
        _draft(values),
        int(values["context"]),
        draft_tp=1 if values["draft_tp"] == "1" else None,
        prefill=int(values["prefill"]),
        engine_work_s=float(values["work"]) / 1e3,
    )


def build_acceptance(values: dict[str, object]) -> sv.Acceptance:
    """alpha or a measured tau, K, the tokens verified and the share of rounds with drafts."""
    k, share_ = int(values["k"]), float(values["share"])
    if values["acc"] == "alpha":
        return sv.Acceptance(k, alpha=float(values["alpha"]), propose_share=share_)
    return sv.Acceptance(
        k, tau=float(values["tau"]), verified=int(values["verified"]), propose_share=share_
    )


@dataclass(frozen=True)
class Result:
    """The core's numbers for one set of page values."""

    setup: sv.ServingSetup
    batch: int
    sweep: sv.BatchSweep  # over a grid of batches that includes ``batch``
    b_fit: int  # the largest batch that fits in memory
    break_even: int | None
    compute_bound: int | None  # batch from which the verify's linear layers are compute-bound
    v_by_tokens: dict[int, np.ndarray]
    plain: sv.StepCost  # the plain step at ``batch``, part by part
    verify: sv.StepCost  # the verify at ``batch``

    @property
    def at(self) -> int:
        """Index of the chosen batch in the sweep."""
        return int(np.flatnonzero(self.sweep.batch == self.batch)[0])

    @property
    def acceptance(self) -> sv.Acceptance:
        return self.sweep.acceptance


def _step(setup: sv.ServingSetup, batch: int, tokens: float) -> sv.StepCost:
    return sv.step_cost(
        setup.target, setup.hardware, batch, tokens, setup.context, prefill=setup.prefill
    )


def compute(values: dict[str, object]) -> Result:
    """Everything the page shows, from the core; raises SpecDecError for bad settings."""
    setup, acceptance = build_setup(values), build_acceptance(values)
    batch = int(values["batch"])
    sv.check_fits(setup, batch)
    b_fit = sv.max_batch(setup)
    grid = np.union1d(sv.batch_grid(b_fit), [m for m in (*MARKS, batch) if m <= b_fit])
    m = acceptance.verified_tokens
    tokens = sorted({*(k + 1 for k in CURVE_K), m} if acceptance.alpha is not None else {m})
    return Result(
        setup,
        batch,
        sv.batch_sweep(setup, acceptance, grid, k_max=K_MAX),
        b_fit,
        sv.break_even_batch(setup, acceptance),
        sv.compute_bound_batch(setup, acceptance.effective_verified),
        {t: sv.verify_step(setup, t, grid) / sv.plain_step(setup, grid) for t in tokens},
        _step(setup, batch, 1),
        _step(setup, batch, acceptance.effective_verified),
    )


def try_compute(values: dict[str, object]) -> Result | SpecDecError:
    """:func:`compute`, or the core's refusal (the page shows it with ``show_error``)."""
    try:
        return compute(values)
    except SpecDecError as err:
        return err


# ----------------------------------------------------------------------------- this server
@dataclass(frozen=True)
class ServerReading:
    """This server's measured costs, or why they are not there (yet)."""

    costs: sv.ServerCosts | None
    measuring: bool = False
    problem: str = ""


def this_server_costs(k: int) -> ServerReading:
    """The step time, c and v(K) measured on the machine the app runs on, at batch 1.

    The cost profile the Model pair lab's guard that steps aside starts from
    (``model_pairs.work.get_costs``: c and v(k) for k = 0..8 of its GPT pair at T = 0, per-thread
    CPU time, measured once per server in the background and kept); ``measuring`` while
    it runs, the reason when it could not finish.
    """
    k = min(int(k), model_pairs_work.K_MAX)
    try:
        costs = model_pairs_work.get_costs(SERVER_PAIR, SERVER_T)
    except SpecDecError as err:
        return ServerReading(None, problem=f"this server's models are not available: {err}")
    except RuntimeError as err:  # a full queue
        return ServerReading(None, problem=str(err))
    if costs is shared_work.MISSING:
        return ServerReading(None, measuring=True)
    if not isinstance(costs, CostProfile):  # a stored "not measured, and why"
        return ServerReading(None, problem=str(getattr(costs, "reason", "it was not measured")))
    return ServerReading(
        sv.ServerCosts(SERVER_LABEL, k, costs.step_s, costs.draft, costs.verify[k])
    )


def _poll_server(k: int) -> None:
    """Inside a fragment: rerun the page once the measurement is there."""
    if not this_server_costs(k).measuring:
        st.rerun()
    st.caption("⏱️ measuring this server…")


def server_note(result: Result, reading: ServerReading) -> None:
    """What the "this server" point is, or that it is being measured."""
    k, alpha = result.sweep.k, result.sweep.alpha
    if reading.measuring:
        st.info(
            f"⏱️ Measuring this server at K = {min(k, model_pairs_work.K_MAX)} (the Model pair "
            "lab's small GPT "
            "pair, once, then shared by every visitor). Its point appears on the charts when "
            "the measurement is done.",
            icon="⏳",
        )
        st.fragment(run_every=POLL_S)(_poll_server)(k)
        return
    costs = reading.costs
    if costs is None:
        st.caption(f"No point for this server: {md_escape(reading.problem)}")
        return
    gain = (
        f"so {costs.speedup(alpha):.2f}x at alpha = {alpha:.2f}"
        if alpha is not None
        else "(its point needs an alpha: choose alpha above to see it on the charts)"
    )
    st.caption(
        f"◆ This server, running the Model pair lab's {md_escape(lm.PAIRS[SERVER_PAIR].label)} "
        f"pair, measured at batch 1: a target step takes "
        f"{1e3 * costs.step_s:.2f} ms, c = {costs.c:.3f}, v({costs.k}) = {costs.v:.2f}, "
        f"{gain}. Its few megabytes of weights sit in the processor's cache: the step is bound "
        "by arithmetic already at batch 1, so checking K + 1 tokens costs more than one step "
        f"(v > 1), unlike a GPU at batch 1. {_other_pair_words(k)}"
    )


def _other_pair_words(k: int) -> str:
    """Why ◆ is not the Model pair lab's measured speedup (issue 33, item 19)."""
    lab_k = model_pairs_work.DEFAULT_K
    default = md_escape(lm.PAIRS[model_pairs_work.DEFAULT_PAIR].label)
    return (
        "It is not the Model pair lab's measured speedup either: that page starts with another "
        f"pair ({default}) at K = {lab_k}, with the acceptance its text really gets, timed "
        "over a whole run; "
        f"this point prices the tiny GPT pair's measured c and v at this page's alpha and "
        f"K = {min(k, model_pairs_work.K_MAX)}."
    )


# ----------------------------------------------------------------------------- the answer
def round_words(acceptance: sv.Acceptance) -> str:
    """The round as the headline names it."""
    if acceptance.alpha is not None:
        words = f"K = {acceptance.k} and alpha = {acceptance.alpha:.2f}"
    else:
        words = (
            f"tau = {acceptance.tau:.2f} tokens per round, {acceptance.verified_tokens} "
            f"verified, {acceptance.k} draft steps"
        )
    if acceptance.propose_share < 1:
        words += f", drafts in {acceptance.propose_share:.0%} of the rounds"
    return words


def break_even_words(result: Result) -> str:
    """Where speculation stops paying, naming the round it is about (one sentence)."""
    acc = result.acceptance
    who = f"With K = {acc.k}" if acc.alpha is not None else "With this round"
    if result.break_even is None:
        return (
            f"{who}, speculation still pays at the largest batch that fits in memory "
            f"(b = {result.b_fit:,}): the KV cache fills the memory before the verify gets "
            "expensive enough to lose."
        )
    if result.break_even == 1:
        return f"{who}, speculation is slower than plain decoding at every batch size here."
    return f"{who}, speculation stops paying at b = {result.break_even:,} (break-even batch)."


def headline(result: Result) -> None:
    """The answer at the chosen batch, and where speculation stops paying."""
    s, i = result.sweep, result.at
    best = ""
    if s.best_k is not None:
        best = f" Best K here: {int(s.best_k[i])} ({s.best_speedup[i]:.2f}x)."
    if result.setup.prefill:
        prompts, total = sv.prefill_shares(result.setup, result.acceptance, result.batch)
        best += (
            f" With {result.setup.prefill:,} prompt tokens in every step, prompts move "
            f"{float(prompts):.2f}x as fast and all tokens together {float(total):.2f}x."
        )
    with st.container(key="serve_answer", border=True):
        st.markdown(
            f"**At batch {result.batch:,}: {s.speedup[i]:.2f}x** with "
            f"{round_words(result.acceptance)} on "
            f"{md_escape(result.setup.hardware.label)}.{best} {break_even_words(result)}"
        )


def metrics(result: Result) -> None:
    """Step time, c, v, tokens per round, and where the step stands: two rows of three
    (six in one row read "mem…" at 1366 px)."""
    s, i = result.sweep, result.at
    m = result.acceptance.effective_verified
    words = {True: "arithmetic", False: "memory"}
    top, bottom = st.columns(3), st.columns(3)
    top[0].metric("target step", f"{1e3 * s.plain_s[i]:.2f} ms")
    top[1].metric("c: draft step / target step", f"{s.c[i]:.3f}")
    top[2].metric(f"v: verify of {m:g} tokens / step", f"{s.v[i]:.2f}")
    bottom[0].metric("tokens per round", f"{s.expected:.2f}")
    bottom[1].metric(
        "verify bound by",
        words[bool(result.verify.linear_compute_bound)],
        help="What sets the time of the verify's linear layers; the plain step's are bound by "
        f"{words[bool(result.plain.linear_compute_bound)]}. Attention reads the KV cache at "
        "the kernel's rate at every batch, and the verify pays its attention arithmetic on top.",
    )
    bottom[2].metric("KV cache share of a step", f"{float(result.plain.attention_share):.1%}")


def context_words(result: Result) -> str:
    """What a longer KV cache does to v here, from the core's numbers (one sentence)."""
    m = result.acceptance.effective_verified
    r = sv.attention_ratio(result.setup, m)
    v = float(result.sweep.v[result.at])
    kernel = result.setup.hardware.kernel.label
    if abs(v - r) < 0.005:
        way = "leaves it where it is"
    else:
        way = "raises it" if v < r else "lowers it"
    return (
        f"With {md_escape(kernel)}, attention over {m:g} tokens per sequence costs r = {r:.2f} "
        f"times one token's, so a longer KV cache pulls v towards {r:.2f}: at batch "
        f"{result.batch:,} (v = {v:.2f}) it {way}."
    )


def _chart_key(result: Result, server: sv.ServerCosts | None) -> tuple:
    """Every input of the charts (the figures are shared by every visitor with them)."""
    return (result.setup, result.acceptance, result.batch, server)


def charts(result: Result, reading: ServerReading) -> None:
    """Speedup and v against the batch size, then throughput against latency."""
    server = reading.costs if result.acceptance.alpha is not None else None
    key = _chart_key(result, server)
    s, i = result.sweep, result.at
    left, right = st.columns(2)
    with left:
        fig = shared_figure(
            "serve.speedup",
            key,
            lambda: figures.speedup_vs_batch_figure(
                s, break_even=result.break_even, current=(result.batch, s.speedup[i]), server=server
            ),
        )
        chart(fig, key="serve_fig_speedup")
    with right:
        fig = shared_figure(
            "serve.v",
            key,
            lambda: figures.verify_cost_figure(
                s.batch,
                result.v_by_tokens,
                current=result.acceptance.verified_tokens,
                compute_bound=result.compute_bound,
                server=server,
            ),
        )
        chart(fig, key="serve_fig_v")
    hw = result.setup.hardware
    best = ", and with the best K at each batch (dashed)" if s.best_k is not None else ""
    st.caption(
        f"Speedup: tokens per round / (K c + v + w) at every batch that fits ({result.b_fit:,} "
        f"sequences of {result.setup.context:,} tokens){best}; w = "
        f"{1e3 * result.setup.engine_work_s:.2f} ms of engine work per round / the plain step. "
        "Verify cost: v starts near 1 while the linear layers are bound by memory and climbs "
        "towards the number of tokens as they near and pass the ridge point (memory and "
        f"arithmetic add there). {context_words(result)} Ridge point of the "
        f"{md_escape(hw.label)} at the shares its kernels reach: {hw.achieved_ridge:,.0f} FLOPs "
        f"per byte (spec sheet: {hw.ridge:,.0f})."
    )
    fig = shared_figure(
        "serve.throughput",
        key,
        lambda: figures.throughput_latency_figure(s, server=server, hardware_label=hw.label),
    )
    chart(fig, key="serve_fig_throughput")
    st.caption(
        "Each point is one batch size. Speculation moves a point left (less waiting per token) "
        "while the step is bound by memory; under heavy load it moves it down and right. The "
        "diamonds are this server (one CPU process at batch 1)."
    )
