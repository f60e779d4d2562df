"""The Serving lab's sections, one named function each (the page file only calls them).

- :func:`page_state` / :func:`start` / :func:`inputs` / :func:`share`: the page's settings,
  read from a link once, drawn in the main column, written back to the link;
- :func:`compute`: the core's numbers for the chosen settings (:class:`Result`);
- :func:`this_server_costs`: the ONE place that reads what this server measures (the
  Model pair lab's cost profile, ``lm_work.get_costs``);
- :func:`headline`, :func:`charts`, :func:`server_note`, :func:`why_slower`,
  :func:`published_section`, :func:`leaves_out`: the sections, in page order.

No math here: every number comes from :mod:`specdec_core.serving`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import streamlit as st

import specdec_core as sc
import specdec_core.lm as lm
from specdec_core import SpecDecError
from specdec_core import serving as sv
from specdec_core.lm.adaptive import CostProfile

from . import figures_serving as fsv
from . import lm_work as lw
from . import shared_work as sw
from .figures_engine import position_rates_figure
from .page_state import PageState
from .presenter import chart
from .share import LinkReader
from .text import md_escape
from .widgets import download_csv, show_error

PREFIX = "serve"
CUSTOM = "custom"
K_MAX = 8  # the pages offer K = 1..8 (the Model pair lab measures these too)
SERVER_PAIR = "gpt-1L-to-gpt-4L"  # this server's draft model and target (Model pair lab)
SERVER_T = 0.0
POLL_S = 1.5
CURVE_K = (1, 2, 4, 8)
MARKS = (1, 8, 64, 512)
INPUTS_LABEL = "⚙️ Inputs: hardware, models, batch, context, alpha, K"
INTRO = (
    "On a GPU, one decoding step of a large model reads every weight from memory, so "
    "checking K + 1 drafted tokens costs about as much as producing one: 2-3x is normal at "
    "batch 1. A server runs many sequences per step, though, and once the step is bound by "
    "arithmetic instead of memory, each drafted token costs real work: the gain melts away "
    "and turns into a slowdown. Pick hardware, models, batch and context and watch where."
)
# Page units of the typed values: (widget key suffix, core field, scale to SI, lo, hi, step).
HW_FIELDS = {
    "hw_bw": ("bandwidth", 1e9, 0.1, 100_000.0, 100.0),  # GB/s per chip
    "hw_tflops": ("peak_flops", 1e12, 0.001, 100_000.0, 10.0),  # TFLOP/s per chip
    "hw_mem": ("memory", 1e9, 0.1, 10_000.0, 8.0),  # GB per chip
}
TARGET_INTS = {
    "t_layers": ("layers", 1, 1_000),
    "t_heads": ("q_heads", 1, 1_024),
    "t_kv": ("kv_heads", 1, 1_024),
    "t_hd": ("head_dim", 1, 1_024),
}
PARAMS_B = (0.001, 10_000.0)  # typed target size, billions of parameters
DRAFT_C = (0.0, 2.0)
OVERHEAD_MS = (0.0, 1_000.0)
BATCH = (1, sv.MAX_BATCH)
CONTEXT = (1, sv.MAX_CONTEXT)


# ----------------------------------------------------------------------------- settings
def hw_values(key: str) -> dict[str, object] | None:
    """The typed fields of a hardware preset, in page units."""
    hw = sv.GPUS.get(key)
    if hw is None:
        return None
    values = {
        name: round(getattr(hw, field) / scale, 6) for name, (field, scale, *_) in HW_FIELDS.items()
    }
    return {**values, "hw_chips": hw.chips}


def target_values(key: str) -> dict[str, object] | None:
    """The typed fields of a target preset (parameters in billions)."""
    model = sv.TARGETS.get(key)
    if model is None:
        return None
    ints = {name: getattr(model, field) for name, (field, *_) in TARGET_INTS.items()}
    return {"t_params": round(model.params / 1e9, 6), **ints}


@dataclass(frozen=True)
class LogPreset:
    """A published engine log: what it gives (``mode``) and its numbers."""

    label: str
    values: dict[str, object]  # the decoder fields it sets (log_mode and that mode's inputs)
    source: str


LOG_MODES = {
    "rates": "per-position rates (vLLM, llama.cpp)",
    "counts": "counts per position",
    "al": "mean acceptance length only",
}
LOG_K_MAX = sc.MAX_METRIC_POSITIONS
_parse_counts = functools.partial(sc.parse_counts, name="accepted per position")
LOG_DRAFTS_MAX = 10**12
LOG_PRESETS: dict[str, LogPreset] = {
    "llama-cpp": LogPreset(
        "llama.cpp log: rates 0.805, 0.632, 0.483 (AL 2.92)",
        {"log_mode": "rates", "log_rates": "0.805, 0.632, 0.483"},
        "a published llama.cpp log, per the project's serving notes",
    ),
    "vllm-k7": LogPreset(
        "vLLM log, K = 7: mean acceptance length 2.91",
        {"log_mode": "al", "log_al": 2.91, "log_k": 7},
        "a published vLLM log (K = 7), per the project's serving notes",
    ),
    "vllm-counts": LogPreset(
        "vLLM counters: 1,000 drafts; 805, 632, 483 kept at positions 1-3",
        {"log_mode": "counts", "log_counts": "805, 632, 483", "log_drafts": 1_000},
        "the llama.cpp rates above as vLLM's counters would print them",
    ),
}


def log_values(key: str) -> dict[str, object] | None:
    """The decoder fields a log preset sets."""
    preset = LOG_PRESETS.get(key)
    return None if preset is None else dict(preset.values)


LOG_DEFAULTS: dict[str, object] = {
    "log_preset": "llama-cpp",
    "log_mode": "rates",
    "log_rates": "0.805, 0.632, 0.483",
    "log_counts": "805, 632, 483",
    "log_drafts": 1_000,
    "log_al": 2.91,
    "log_k": 7,
}
DEFAULTS: dict[str, object] = {
    "hw": "4x-h100",
    **hw_values("4x-h100"),
    "target": "llama-3.1-70b",
    **target_values("llama-3.1-70b"),
    "draft": "llama-3.2-1b",
    "draft_c": 0.2,
    "batch": 1,
    "context": 1_024,
    "alpha": 0.75,
    "k": 4,
    "overhead": round(sv.DEFAULT_OVERHEAD_S * 1e3, 6),
    **LOG_DEFAULTS,
}


def page_state() -> PageState:
    return PageState(PREFIX, DEFAULTS)


def _number(lo: float, hi: float, *, whole: bool = False):
    """A link parser: a number (a whole one if ``whole``) in [lo, hi]."""

    def parse(raw: str):
        text = raw.strip()
        value = int(text) if whole and text.lstrip("-").isdigit() else float(text)
        if whole and not isinstance(value, int):
            raise ValueError(f"{text[:20]!r} is not a whole number")
        if not lo <= value <= hi:
            raise ValueError(f"{value:g} is out of range; allowed: {lo:g} to {hi:g}")
        return value

    return parse


def _typed_from_link(link: LinkReader) -> dict[str, object]:
    """Every typed value of the link (defaults where absent or bad)."""
    values = {}
    for name, (_, _, lo, hi, _) in HW_FIELDS.items():
        values[name] = link.get(name, _number(lo, hi), DEFAULTS[name])
    values["hw_chips"] = link.int_in("hw_chips", 1, sv.MAX_CHIPS, DEFAULTS["hw_chips"])
    values["t_params"] = link.get("t_params", _number(*PARAMS_B), DEFAULTS["t_params"])
    for name, (_, lo, hi) in TARGET_INTS.items():
        values[name] = link.int_in(name, lo, hi, DEFAULTS[name])
    values["draft_c"] = link.get("draft_c", _number(*DRAFT_C), DEFAULTS["draft_c"])
    values["batch"] = link.int_in("batch", *BATCH, DEFAULTS["batch"])
    values["context"] = link.int_in("context", *CONTEXT, DEFAULTS["context"])
    values["alpha"] = link.get("alpha", _number(0.0, 1.0), DEFAULTS["alpha"])
    values["k"] = link.int_in("k", 1, K_MAX, DEFAULTS["k"])
    values["overhead"] = link.get("overhead", _number(*OVERHEAD_MS), DEFAULTS["overhead"])
    return values


def _checked(parse):
    """A link parser that keeps the typed text when ``parse`` accepts it."""

    def check(raw: str) -> str:
        parse(raw)
        return raw

    return check


def _log_from_link(link: LinkReader) -> dict[str, object]:
    """The engine-log decoder's fields of the link."""
    d = LOG_DEFAULTS
    return {
        "log_mode": link.choice("log_mode", list(LOG_MODES), d["log_mode"]),
        "log_rates": link.get("log_rates", _checked(sc.parse_rates), d["log_rates"]),
        "log_counts": link.get("log_counts", _checked(_parse_counts), d["log_counts"]),
        "log_drafts": link.int_in("log_drafts", 1, LOG_DRAFTS_MAX, d["log_drafts"]),
        "log_al": link.get("log_al", _number(1.0, LOG_K_MAX + 1.0), d["log_al"]),
        "log_k": link.int_in("log_k", 1, LOG_K_MAX, d["log_k"]),
    }


PICKERS = (
    ("hw", [*sv.GPUS, CUSTOM], hw_values),
    ("target", [*sv.TARGETS, CUSTOM], target_values),
    ("log_preset", [*LOG_PRESETS, CUSTOM], log_values),
)


def values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's settings; typed values that differ from the chosen preset make it custom."""
    values = {**_typed_from_link(link), **_log_from_link(link)}
    for name, options, values_of in PICKERS:
        key = link.choice(name, options, DEFAULTS[name])
        preset = values_of(key) or {}
        typed = {field: values[field] for field in preset}
        if any(field in link.params for field in preset) and typed != preset:
            key = CUSTOM
        else:
            values.update(preset)
        values[name] = key
    values["draft"] = link.choice("draft", [*sv.DRAFTS, CUSTOM], DEFAULTS["draft"])
    return values


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
        hw_values,
        custom=CUSTOM,
        name="hw",
        custom_label="Typed hardware (the numbers below)",
    )
    cols = st.columns(4)
    labels = (
        "memory bandwidth (GB/s per chip)",
        "dense bf16 (TFLOP/s per chip)",
        "memory (GB per chip)",
    )
    for col, label, (name, (_, _, lo, hi, step)) in zip(
        cols, labels, HW_FIELDS.items(), strict=False
    ):
        col.number_input(label, lo, hi, step=step, key=state.key(name), on_change=to_custom)
    cols[3].number_input(
        "chips (tensor parallel)", 1, sv.MAX_CHIPS, key=state.key("hw_chips"), on_change=to_custom
    )


def _target_inputs(state: PageState) -> None:
    to_custom = state.to_custom(CUSTOM, "target")
    state.preset_select(
        "Target model",
        [*sv.TARGETS, CUSTOM],
        sv.TARGETS,
        target_values,
        custom=CUSTOM,
        name="target",
        custom_label="Typed model (the numbers below, bf16)",
    )
    cols = st.columns(5)
    cols[0].number_input(
        "parameters (billions)",
        *PARAMS_B,
        step=1.0,
        format="%.3f",
        key=state.key("t_params"),
        on_change=to_custom,
    )
    labels = ("layers", "query heads", "KV heads", "head size")
    for col, label, (name, (_, lo, hi)) in zip(cols[1:], labels, TARGET_INTS.items(), strict=True):
        col.number_input(label, lo, hi, key=state.key(name), on_change=to_custom)


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
    if st.session_state.get(state.key("draft")) == CUSTOM:
        right.number_input("c (typed)", *DRAFT_C, step=0.05, key=state.key("draft_c"))


def _workload_inputs(state: PageState) -> None:
    cols = st.columns(5)
    cols[0].number_input("batch size b", *BATCH, step=1, key=state.key("batch"))
    cols[1].number_input("context n (tokens)", *CONTEXT, step=256, key=state.key("context"))
    cols[2].slider("alpha: acceptance rate", 0.0, 1.0, step=0.01, key=state.key("alpha"))
    cols[3].slider("K: draft tokens per round", 1, K_MAX, key=state.key("k"))
    cols[4].number_input(
        "overhead per step (ms)",
        *OVERHEAD_MS,
        step=0.05,
        format="%.2f",
        key=state.key("overhead"),
        help="A fixed time added to every forward pass (kernel launches, sampling, the engine). "
        "Not on any spec sheet: 0.3 ms is an assumption.",
    )


def inputs(state: PageState) -> None:
    """Hardware, target, draft, batch, context, alpha, K and the overhead (main column)."""
    _hardware_inputs(state)
    _target_inputs(state)
    _draft_inputs(state)
    _workload_inputs(state)


def share(state: PageState, values: dict[str, object]) -> None:
    """Every setting in the address bar and on screen (with the QR code)."""
    text = {
        name: (f"{value:.10g}" if isinstance(value, float) else value)
        for name, value in values.items()
    }
    state.share(text)


# ----------------------------------------------------------------------------- the model
def _hardware(values: dict[str, object], overhead_s: float) -> sv.Hardware:
    key = str(values["hw"])
    if key in sv.GPUS:
        return sv.GPUS[key].with_overhead(overhead_s)
    typed = {field: float(values[name]) * scale for name, (field, scale, *_) in HW_FIELDS.items()}
    return sv.Hardware(
        "typed hardware", chips=int(values["hw_chips"]), overhead_s=overhead_s, **typed
    )


def _target(values: dict[str, object]) -> sv.ModelSpec:
    key = str(values["target"])
    if key in sv.TARGETS:
        return sv.TARGETS[key]
    ints = {field: int(values[name]) for name, (field, *_) in TARGET_INTS.items()}
    return sv.ModelSpec("typed model (bf16)", float(values["t_params"]) * 1e9, **ints)


def _draft(values: dict[str, object]) -> sv.DraftSpec:
    key = str(values["draft"])
    if key in sv.DRAFTS:
        return sv.DRAFTS[key]
    return sv.DraftSpec("typed draft", fixed_c=float(values["draft_c"]))


def build_setup(values: dict[str, object]) -> sv.ServingSetup:
    """Hardware, target, draft and context from the page's values (checked by the core)."""
    overhead_s = float(values["overhead"]) / 1e3
    return sv.ServingSetup(
        _hardware(values, overhead_s), _target(values), _draft(values), int(values["context"])
    )


@dataclass(frozen=True)
class Result:
    """The core's numbers for one set of page values."""

    setup: sv.ServingSetup
    batch: int
    sweep: sv.BatchSweep  # over a grid of batches that includes ``batch``
    b_fit: int  # the largest batch that fits in memory
    break_even: int | None
    compute_bound: int | None  # batch from which the verify of K + 1 tokens is compute-bound
    v_by_k: dict[int, np.ndarray]

    @property
    def at(self) -> int:
        """Index of the chosen batch in the sweep."""
        return int(np.flatnonzero(self.sweep.batch == self.batch)[0])


def compute(values: dict[str, object]) -> Result:
    """Everything the page shows, from the core; raises SpecDecError for bad settings."""
    setup = build_setup(values)
    alpha, k, batch = float(values["alpha"]), int(values["k"]), int(values["batch"])
    sv.check_fits(setup, batch)
    b_fit = sv.max_batch(setup)
    grid = np.union1d(sv.batch_grid(b_fit), [m for m in (*MARKS, batch) if m <= b_fit])
    return Result(
        setup,
        batch,
        sv.batch_sweep(setup, alpha, k, grid, k_max=K_MAX),
        b_fit,
        sv.break_even_batch(setup, alpha, k),
        sv.compute_bound_batch(setup, k + 1),
        {j: sv.verify_cost(setup, j, grid) for j in sorted({*CURVE_K, k})},
    )


# ----------------------------------------------------------------------------- this server
@dataclass(frozen=True)
class ServerReading:
    """This server's measured costs, or why they are not there (yet)."""

    costs: sv.ServerCosts | None
    measuring: bool = False
    problem: str = ""


def this_server_costs(k: int) -> ServerReading:
    """The step time, c and v(K) measured on the machine the app runs on, at batch 1.

    The cost profile the Model pair lab's adaptive draft length is priced by
    (``lm_work.get_costs``: c and v(k) for k = 0..8 of its GPT pair at T = 0, per-thread
    CPU time, measured once per server in the background and kept); ``measuring`` while
    it runs, the reason when it could not finish.
    """
    k = min(int(k), lw.K_MAX)
    try:
        costs = lw.get_costs(SERVER_PAIR, SERVER_T)
    except SpecDecError as err:
        return ServerReading(None, problem=f"this server's models are not available: {err}")
    except RuntimeError as err:  # a full queue
        return ServerReading(None, problem=str(err))
    if costs is sw.MISSING:
        return ServerReading(None, measuring=True)
    if not isinstance(costs, CostProfile):  # a stored "not measured, and why"
        return ServerReading(None, problem=str(getattr(costs, "reason", "it was not measured")))
    label = f"this server ({lm.PAIRS[SERVER_PAIR].label})"
    return ServerReading(sv.ServerCosts(label, k, costs.step_s, costs.draft, costs.verify[k]))


def _poll_server(k: int) -> None:
    """Inside a fragment: rerun the page once the measurement is there."""
    if not this_server_costs(k).measuring:
        st.rerun()
    st.caption("⏱️ measuring this server…")


def server_note(k: int, reading: ServerReading, alpha: float) -> None:
    """What the "this server" point is, or that it is being measured."""
    if reading.measuring:
        st.info(
            f"⏱️ Measuring this server at K = {min(k, lw.K_MAX)} (the Model pair lab's small GPT "
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
    st.caption(
        f"◆ {md_escape(costs.label)}, measured at batch 1: a target step takes "
        f"{1e3 * costs.step_s:.2f} ms, c = {costs.c:.3f}, v({costs.k}) = {costs.v:.2f}, so "
        f"{costs.speedup(alpha):.2f}x at alpha = {alpha:.2f}. Its few megabytes of weights sit in "
        "the processor's cache: the step is bound by arithmetic already at batch 1, so checking "
        "K + 1 tokens costs more than one step (v > 1), unlike a GPU at batch 1."
    )


# ----------------------------------------------------------------------------- the answer
def _break_even_words(result: Result) -> str:
    if result.break_even is None:
        return (
            f"Speculation still pays at the largest batch that fits in memory "
            f"(b = {result.b_fit:,}): the KV cache fills the memory before the verify of "
            "K + 1 tokens gets expensive enough to lose."
        )
    if result.break_even == 1:
        return "Speculation is slower at every batch size here: don't speculate."
    return f"Speculation stops paying at b = {result.break_even:,} (break-even batch)."


def headline(result: Result) -> None:
    """The answer at the chosen batch, and where speculation stops paying."""
    s, i = result.sweep, result.at
    with st.container(key="serve_answer", border=True):
        st.markdown(
            f"**At batch {result.batch:,}: {s.speedup[i]:.2f}x** with K = {s.k} and alpha = "
            f"{s.alpha:.2f} on {md_escape(result.setup.hardware.label)}. Best K here: "
            f"{int(s.best_k[i])} ({s.best_speedup[i]:.2f}x). {_break_even_words(result)}"
        )


def metrics(result: Result) -> None:
    """Step time, c, v, E and where the step stands on the roofline."""
    s, i = result.sweep, result.at
    setup, b = result.setup, result.batch
    words = {True: "arithmetic", False: "memory"}
    plain = bool(sv.is_compute_bound(setup.target, setup.hardware, b, 1, setup.context))
    verify = bool(sv.is_compute_bound(setup.target, setup.hardware, b, s.k + 1, setup.context))
    cols = st.columns(6)
    cols[0].metric("target step", f"{1e3 * s.plain_s[i]:.2f} ms")
    cols[1].metric("c = draft / target step", f"{s.c[i]:.3f}")
    cols[2].metric(f"v({s.k}) = verify / step", f"{s.v[i]:.2f}")
    cols[3].metric("E[tokens per round]", f"{s.expected:.2f}")
    cols[4].metric("plain step bound by", words[plain])
    cols[5].metric(f"verify of {s.k + 1} bound by", words[verify])


def charts(result: Result, reading: ServerReading) -> None:
    """Speedup and v(K) against the batch size, then throughput against latency."""
    server = reading.costs
    s, i = result.sweep, result.at
    left, right = st.columns(2)
    with left:
        chart(
            fsv.speedup_vs_batch_figure(
                s, break_even=result.break_even, current=(result.batch, s.speedup[i]), server=server
            ),
            key="serve_fig_speedup",
        )
    with right:
        chart(
            fsv.verify_cost_figure(
                s.batch,
                result.v_by_k,
                k_current=s.k,
                compute_bound=result.compute_bound,
                server=server,
            ),
            key="serve_fig_v",
        )
    st.caption(
        f"Speedup: E / (K c + v) at every batch that fits ({result.b_fit:,} sequences of "
        f"{result.setup.context:,} tokens), and with the best K at each batch (dashed). Verify "
        "cost: v(K, b) stays at 1 while the step is bound by memory and climbs towards K + 1 once "
        f"it is bound by arithmetic. Ridge point of the {md_escape(result.setup.hardware.label)}: "
        f"{result.setup.hardware.ridge:,.0f} FLOPs per byte."
    )
    chart(
        fsv.throughput_latency_figure(s, server=server, hardware_label=result.setup.hardware.label),
        key="serve_fig_throughput",
    )
    st.caption(
        "Each point is one batch size. Speculation moves a point left (less waiting per token) "
        "while the step is bound by memory; under heavy load it moves it down and right. The "
        "diamonds are this server (one CPU process at batch 1)."
    )


# ----------------------------------------------------------------------------- why slower
@dataclass(frozen=True)
class WhyItem:
    """One entry of "Why is mine slower?": a label, the page settings that show it, a lesson."""

    label: str
    settings: dict[str, object]
    lesson: str


def scenario(hw: str, target: str, draft: str, **workload: object) -> dict[str, object]:
    """Page values for presets ``hw``, ``target``, ``draft`` and a workload."""
    base = {"batch": 1, "context": 1_024, "alpha": 0.75, "k": 4, "overhead": 0.3, "draft_c": 0.2}
    return {
        "hw": hw,
        **hw_values(hw),
        "target": target,
        **target_values(target),
        "draft": draft,
        **base,
        **workload,
    }


BIG = ("4x-h100", "llama-3.1-70b")
WHY: dict[str, WhyItem] = {
    "compute": WhyItem(
        "Verifying is not free: a busy server (or a CPU)",
        scenario("h100-sxm", "llama-3.1-8b", "llama-3.2-1b", batch=512, context=512),
        "512 sequences x 5 tokens = 2,560 tokens per verify: the verify is bound by "
        "arithmetic (the plain step, one token per sequence, still by memory), v(4) is far "
        "above 1 and a round costs more than the tokens it saves. The best K at this batch "
        "is 1. On a CPU (◆, this server) a small model is bound by arithmetic already at "
        "batch 1.",
    ),
    "k_large": WhyItem(
        "K too large",
        scenario(*BIG, "llama-3.2-1b", batch=64, alpha=0.6, k=8),
        "Each extra draft token costs a draft step every round but is used only if every "
        "token before it was kept (alpha to the power of its place). At batch 64 a verify "
        "of 9 tokens per sequence is no longer free: compare K = 8 with the best K, dashed.",
    ),
    "alpha_low": WhyItem(
        "Low alpha: other training data or tokenizer",
        scenario(*BIG, "llama-68m", alpha=0.3),
        "llama-68m was trained on other text, with the Llama 2 tokenizer: its tokens must be "
        "translated for a Llama 3 target, and alpha is low (0.3 assumed here). A round emits "
        "about 1.4 tokens: its tiny c cannot make up for that.",
    ),
    "temperature": WhyItem(
        "T > 0: sampling lowers alpha",
        scenario(*BIG, "llama-3.2-1b", alpha=0.62),
        "The same pair, sampled at T = 1 instead of greedy: Leviathan et al. measured alpha "
        "= 0.75 at T = 0 and 0.62 at T = 1 (EnDe, T5-small draft). Both models spread their "
        "probability, so sum min(p, q) shrinks and fewer drafts are kept.",
    ),
    "lookup": WhyItem(
        "Prompt lookup on text that does not repeat",
        scenario(*BIG, "ngram", alpha=0.1, batch=256),
        "Prompt lookup costs nothing (c = 0) but can only propose what the text already "
        "holds: on new text almost nothing is kept (0.1 here; Leviathan et al. measured 0.03 "
        "to 0.23 for n-gram drafts). About 1.1 tokens per round, and under load, where the "
        "verify is not free, it is slower than no speculation.",
    ),
    "slow_draft": WhyItem(
        "A slow draft (c near 1)",
        scenario(*BIG, CUSTOM, draft_c=0.9),
        "A draft step that costs 0.9 target steps (a draft nearly as large as the target, or "
        "one on slower hardware): a round costs K c + v = 4.6 steps for about 3 tokens.",
    ),
}
WHY_KEY = f"{PREFIX}__why"


def _apply_why(state: PageState, key: str) -> None:
    """on_click of a checklist button: set the page's widgets to that item's settings."""
    state.set_values(WHY[key].settings)
    st.session_state[WHY_KEY] = key


def why_slower(state: PageState, result: Result | None) -> None:
    """The checklist: each item one click that sets this page to show it happening."""
    st.header("Why is mine slower?")
    st.write(
        "Each button sets this page to a case where speculation disappoints; the answer and "
        "the charts above change with it."
    )
    items = list(WHY.items())
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
    if active in WHY:
        with st.container(key="serve_why_now", border=True):
            st.markdown(f"**{md_escape(WHY[active].label)}.** {md_escape(WHY[active].lesson)}")
            if result is not None:
                s, i = result.sweep, result.at
                st.markdown(
                    f"Now: **{s.speedup[i]:.2f}x** at b = {result.batch:,} (c = {s.c[i]:.3f}, "
                    f"v({s.k}) = {s.v[i]:.2f}, E = {s.expected:.2f}); best K here "
                    f"{int(s.best_k[i])}, {s.best_speedup[i]:.2f}x."
                )


# ----------------------------------------------------------------------------- published
SHOWN_COLUMNS = [
    "source",
    "setting",
    "published",
    "model",
    "error (%)",
    "c (paper)",
    "c (model)",
    "v (model)",
]
NUMBER_FORMATS = {
    "published": "%.2f",
    "model": "%.2f",
    "error (%)": "%+.0f%%",
    "c (paper)": "%.3f",
    "c (model)": "%.3f",
    "v (model)": "%.2f",
}


def _row_story(row: sv.PublishedCheck) -> str:
    """One row in words: figure, prediction, error, where it misses, what was assumed."""
    unit = "x" if row.quantity == "speedup" else " ms per token"
    return (
        f"- **{md_escape(row.source)}**: {md_escape(row.setting)}. Published "
        f"{row.published:.2f}{unit}, model {row.predicted:.2f}{unit} "
        f"({100 * row.relative_error:+.0f}%). {md_escape(row.note)} "
        f"*Assumed: {md_escape(row.assumed)}.*"
    )


def published_section() -> None:
    """The published results beside the model's predictions, with each error."""
    st.header("The model against published results")
    rows = sv.published_checks()
    table = fsv.published_table(rows)
    config = {name: st.column_config.NumberColumn(format=f) for name, f in NUMBER_FORMATS.items()}
    config["source"] = st.column_config.TextColumn(width="medium")
    config["setting"] = st.column_config.TextColumn(width="large")
    st.dataframe(table[SHOWN_COLUMNS], hide_index=True, column_config=config, key="serve_published")
    st.caption(
        "Speedups are at batch 1 unless the setting says otherwise; rows with a figure in "
        "ms check the step time itself. The model gets the direction right in every row (a "
        "gain at batch 1, a loss under load) but misses the size where (1) acceptance is not "
        "the same at every position (summaries copy text: more tokens per round than the "
        "i.i.d. E), (2) chips talk to each other (left out: a 16-chip step comes out twice "
        "too fast), (3) kernels reach less than the spec sheet's peak bandwidth (an 8B step "
        "is 19% slower than predicted), and (4) an engine adds its own cost per draft step "
        "and prefill work under load."
    )
    with st.expander("Each row: where the model misses, why, and what was assumed"):
        st.markdown("\n".join(_row_story(row) for row in rows))
    download_csv(
        table, "serving_published_checks.csv", key="serve_csv", label="Download the table (CSV)"
    )


def leaves_out() -> None:
    """What the roofline model does not contain."""
    st.header("What the model leaves out")
    with st.container(key="serve_leaves_out"):
        st.markdown(
            """
- **Kernel launch overhead and the engine's bookkeeping**: one fixed time per forward pass
  (the overhead input); real engines pay more for many small draft steps than for one.
- **Achieved bandwidth and FLOP/s**: real kernels reach a share of the spec-sheet peaks.
- **Communication between GPUs**: tensor parallelism adds two all-reduces per layer; here
  n chips simply have n times the bandwidth and FLOP/s.
- **Tree attention**: EAGLE, Medusa and SpecInfer verify a tree of candidates; here a round
  is one chain of K tokens.
- **Prefill and scheduling under load**: new prompts share the steps with decoding, and a
  faster round changes how many requests are in flight at a given load.
- **Acceptance that varies**: alpha is the same at every position (the i.i.d. model).
"""
        )


# ----------------------------------------------------------------------------- engine logs
@dataclass(frozen=True)
class DecodedLog:
    """An engine log decoded: the core's metrics (None when the log gives only AL)."""

    k: int
    mean_acceptance_length: float
    draft_acceptance_rate: float
    metrics: sc.AcceptanceMetrics | None


def decode_log(values: dict[str, object]) -> DecodedLog:
    """The decoder's fields -> the numbers (specdec_core.engine_metrics); SpecDecError if bad."""
    mode = str(values["log_mode"])
    if mode == "al":
        k, al = int(values["log_k"]), float(values["log_al"])
        return DecodedLog(k, al, sc.draft_acceptance_rate(al, k), None)
    if mode == "counts":
        counts = _parse_counts(str(values["log_counts"]))
        m = sc.metrics_from_position_counts(counts, int(values["log_drafts"]))
    else:
        m = sc.metrics_from_rates(sc.parse_rates(str(values["log_rates"]), name="rates"))
    return DecodedLog(m.k, m.mean_acceptance_length, m.draft_acceptance_rate, m)


def _log_inputs(state: PageState) -> None:
    to_custom = state.to_custom(CUSTOM, "log_preset")
    state.preset_select(
        "Published log",
        [*LOG_PRESETS, CUSTOM],
        LOG_PRESETS,
        log_values,
        custom=CUSTOM,
        name="log_preset",
        custom_label="Your own log (type it below)",
    )
    st.radio(
        "What your engine prints",
        list(LOG_MODES),
        format_func=LOG_MODES.get,
        horizontal=True,
        key=state.key("log_mode"),
        on_change=to_custom,
    )
    mode = st.session_state[state.key("log_mode")]
    if mode == "rates":
        st.text_input(
            "Per-position acceptance rates r_1, r_2, ... (unconditional: share of all rounds)",
            key=state.key("log_rates"),
            on_change=to_custom,
            max_chars=sc.MAX_TEXT_LENGTH,
        )
    elif mode == "counts":
        left, right = st.columns([3, 2])
        left.text_input(
            "Drafts accepted at each position (vLLM: num_accepted_tokens_per_pos)",
            key=state.key("log_counts"),
            on_change=to_custom,
            max_chars=sc.MAX_TEXT_LENGTH,
        )
        right.number_input(
            "Rounds (vLLM: num_drafts)",
            1,
            LOG_DRAFTS_MAX,
            key=state.key("log_drafts"),
            on_change=to_custom,
        )
    else:
        left, right = st.columns(2)
        left.number_input(
            "Mean acceptance length (AL)",
            1.0,
            LOG_K_MAX + 1.0,
            step=0.01,
            format="%.2f",
            key=state.key("log_al"),
            on_change=to_custom,
        )
        right.number_input(
            "K (draft tokens per round)", 1, LOG_K_MAX, key=state.key("log_k"), on_change=to_custom
        )


def _use_alpha(state: PageState, alpha: float, k: int) -> None:
    """on_click: put the log's fitted alpha (and its K, if the page offers it) above."""
    state.set_values({"alpha": round(alpha, 2), "k": min(k, K_MAX)})


def _log_results(state: PageState, log: DecodedLog) -> None:
    cols = st.columns(3)
    cols[0].metric("mean acceptance length AL", f"{log.mean_acceptance_length:.2f}")
    cols[1].metric(f"draft acceptance rate (K = {log.k})", f"{log.draft_acceptance_rate:.3f}")
    m = log.metrics
    if m is None:
        cols[2].metric("fitted alpha", "n/a")
        st.caption(
            "AL alone does not say how the rounds ended, so no alpha is fitted: the draft "
            "acceptance rate is the one number it gives. Type the per-position rates to get more."
        )
        return
    cols[2].metric("fitted alpha (i.i.d. model)", f"{m.fitted_alpha:.3f}")
    left, right = st.columns([2, 3])
    left.dataframe(
        {
            "position i": list(range(1, m.k + 1)),
            "r_i": list(m.rates),
            "r_i / r_(i-1)": [None if c is None else round(c, 3) for c in m.conditional_rates],
            "alpha^i": [round(m.fitted_alpha**i, 3) for i in range(1, m.k + 1)],
        },
        hide_index=True,
        key="serve_log_table",
    )
    with right:
        chart(
            position_rates_figure(m, title="Your log, position by position"),
            key="serve_fig_log",
        )
    st.button(
        f"Use alpha = {m.fitted_alpha:.2f} and K = {min(m.k, K_MAX)} in the charts above",
        key="serve_log_use",
        on_click=_use_alpha,
        args=(state, m.fitted_alpha, m.k),
    )


LOG_DEFINITIONS = """
- **r_i**, per-position acceptance rate (what vLLM prints): the share of *all* rounds in
  which draft i was kept. Draft i is kept only if draft i - 1 was, so r_1 >= r_2 >= ...;
  a list that increases is probably conditional rates, and is refused.
- **Mean acceptance length AL** = tokens per target pass, bonus included = 1 + (r_1 + ... + r_K).
  vLLM's "Mean acceptance length" counts the bonus token; some engines leave it out.
- **Draft acceptance rate** = drafts kept / drafts proposed = (AL - 1) / K. It falls as K
  grows even when nothing else changes: the drafts after a rejection are proposed, never kept.
- **Conditional rate** r_i / r_(i-1): the chance draft i is kept when draft i - 1 was. In
  the i.i.d. model every conditional rate is alpha, and r_i = alpha^i.
- **Fitted alpha** = sum r_i / (sum r_i + 1 - r_K): the i.i.d. model's most likely alpha,
  the same as drafts kept / drafts checked.
"""


def engine_log_decoder(state: PageState, values: dict[str, object]) -> None:
    """Type what an engine prints; get AL, the draft acceptance rate, conditional rates, alpha."""
    st.header("What do the numbers in my engine's log mean?")
    with st.container(key="serve_log", border=True):
        _log_inputs(state)
        try:
            log = decode_log(values)
        except SpecDecError as err:
            show_error(err)
        else:
            _log_results(state, log)
        st.markdown(LOG_DEFINITIONS)
