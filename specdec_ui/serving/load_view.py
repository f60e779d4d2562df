"""The Serving lab's "Under load" section: requests at a QPS instead of a chosen batch.

The page's hardware, models and round (its :class:`~specdec_ui.serving.view.Result`) meet a
stream of requests (:mod:`specdec_core.serving_load`: continuous batching in a steady
state, Little's law): per-token latency and tokens served against QPS with and without
speculation, the QPS where speculation stops paying, vLLM's switch-off rule, and the
largest batch the memory holds against the context, with and without the draft.

Its inputs (keys ``serve_load_*``) are this section's own and are not in the share link.
Everything is computed once per server for its inputs (``runtime.shared_work``, the figures
through ``runtime.figure_cache.shared_figure``); a sweep is 40 QPS points (bounded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from specdec_core import SpecDecError
from specdec_core import serving as sv
from specdec_core import serving_load as sl
from specdec_ui.kit.chart_text import fmt
from specdec_ui.kit.presenter import chart, presenting
from specdec_ui.kit.widgets import show_error
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.runtime.shared_work import shared_result
from specdec_ui.serving import load_figures

KEY = "serve_load_"
QPS_POINTS = 40
# name -> (label, lo, hi, step, default, help)
FIELDS = {
    "qps": (
        "highest QPS on the charts",
        0.0,
        sl.MAX_QPS,
        0.5,
        40.0,
        "Requests per second, arriving at random (Poisson). Allowed: 0.001 to 10,000.",
    ),
    "prompt": ("prompt tokens per request", 1, sv.MAX_CONTEXT - 1, 1, 512, None),
    "output": ("output tokens per request", 1, sv.MAX_CONTEXT - 1, 1, 256, None),
    "seqs": (
        "most sequences per step (max_num_seqs)",
        1,
        sv.MAX_BATCH,
        1,
        sl.DEFAULT_MAX_SEQS,
        "vLLM's max_num_seqs (256 by default): the batch never grows past it.",
    ),
    "off": (
        "switch speculation off above batch (0: never)",
        0,
        sv.MAX_BATCH,
        1,
        64,
        "vLLM's speculative_disable_by_batch_size: new requests decode plainly while more "
        "than this many sequences run.",
    ),
    "mem": (
        "share of memory for weights and KV cache",
        0.0,
        1.0,
        0.01,
        sl.DEFAULT_MEMORY_SHARE,
        "vLLM's gpu_memory_utilization (0.9 by default). Allowed: more than 0, at most 1.",
    ),
}
LABEL = "⚙️ Load: requests, engine limits, switch-off rule"


def _inputs() -> dict[str, float | int]:
    """The section's widgets (folded in presenter view); their values as typed."""
    with st.expander(LABEL, expanded=not presenting()):
        cols = st.columns(3)
        for i, (name, (label, lo, hi, step, default, help_)) in enumerate(FIELDS.items()):
            fmt_ = "%.2f" if isinstance(step, float) else None
            cols[i % 3].number_input(
                label, lo, hi, default, step, format=fmt_, key=KEY + name, help=help_
            )
    return {name: st.session_state[KEY + name] for name in FIELDS}


@dataclass(frozen=True)
class LoadResult:
    """The core's numbers for the section (module doc)."""

    workload: sl.Workload
    sweep: sl.LoadSweep
    crossover: float | None
    at_crossover: tuple[sl.LoadPoint, sl.LoadPoint] | None  # (plain, speculation) there
    disable_above: int | None
    rule_on: np.ndarray
    rule_tpot_s: np.ndarray
    memory: sl.MemoryCurve
    break_even: int | None  # the batch from which a round loses, at the mean context


def compute(setup: sv.ServingSetup, acc: sv.Acceptance, values: dict) -> LoadResult:
    """Everything the section shows; raises SpecDecError for bad values."""
    work = sl.Workload(
        int(values["prompt"]),
        int(values["output"]),
        max_seqs=int(values["seqs"]),
        memory_share=float(values["mem"]),
    )
    qps_max = sl.check_qps(float(values["qps"]), "highest QPS on the charts")
    off = int(values["off"]) or None
    sweep = sl.load_sweep(setup, acc, work, sl.qps_grid(qps_max, QPS_POINTS))
    cross = sl.crossover_qps(setup, acc, work, qps_max, sweep)
    at = sl.at_mean_context(setup, work)
    there = None
    if cross is not None:
        plain_setup = sl.plain_setup(at)
        there = (
            sl.steady_batch(plain_setup, None, work, cross),
            sl.steady_batch(at, acc, work, cross),
        )
    on, tpot = sl.switch_off(sweep, off)
    cap = sl.batch_cap(at, work)
    return LoadResult(
        work,
        sweep,
        cross,
        there,
        off,
        on,
        tpot,
        sl.memory_curve(setup, work),
        sv.break_even_batch(at, acc, cap),
    )


def _result(setup, acc, values) -> LoadResult | SpecDecError:
    key = (setup, acc, tuple(sorted(values.items())))
    try:
        return shared_result("serve.load", key, lambda: compute(setup, acc, values), heavy=False)
    except SpecDecError as err:
        return err


def _answer(res: LoadResult) -> str:
    """The section's answer in words, every number from the core."""
    s = res.sweep
    words = (
        f"At QPS {fmt(float(s.qps[0]))} speculation gives **{float(s.gain[0]):.2f}x** per "
        f"token. Plain decoding keeps up with {fmt(s.plain_capacity)} requests per second, "
        f"speculation with {fmt(s.spec_capacity)}."
    )
    if res.crossover is None:
        words += " Speculation pays at every QPS shown."
    else:
        words += f" It **stops paying from QPS {fmt(res.crossover)}**. " + _crossover_words(res)
    return words + " " + _rule_words(res)


def _crossover_words(res: LoadResult) -> str:
    """Why the crossover comes where it does: the prompts a round's one pass carries."""
    plain, spec = res.at_crossover
    words = (
        f"There both run about {spec.batch:,.0f} sequences (the same time per token, so "
        f"the same batch), but a round lasts longer than a plain step, so its one target pass "
        f"carries {spec.prefill:,} prompt tokens against {plain.prefill:,} in a plain step"
    )
    if res.break_even is None or res.break_even > spec.batch:
        more = "at the same batch without prompts a round loses " + (
            f"only from b = {res.break_even:,}" if res.break_even else "at no batch that fits"
        )
        return words + f": the pass reaches the compute roof sooner ({more})."
    return words + "."


def _rule_words(res: LoadResult) -> str:
    if res.disable_above is None:
        return "The engine never switches speculation off."
    on = res.sweep.qps[res.rule_on]
    until = f"up to QPS {fmt(float(on[-1]))}" if on.size else "at no QPS shown"
    best = (
        f" A threshold near {res.at_crossover[1].batch:,.0f}, the batch where speculation "
        "stops paying, keeps the faster of the two."
        if res.at_crossover is not None
        else ""
    )
    return (
        f"With speculative_disable_by_batch_size = {res.disable_above:,} the engine "
        f"speculates {until}.{best}"
    )


def _charts(res: LoadResult, key: tuple) -> None:
    s = res.sweep
    rule = None if res.disable_above is None else res.rule_tpot_s
    left, right = st.columns(2)
    with left:
        fig = shared_figure(
            "serve.load.latency",
            key,
            lambda: load_figures.latency_figure(s, crossover=res.crossover, rule=rule),
        )
        chart(fig, key="serve_fig_load_latency")
    with right:
        fig = shared_figure("serve.load.tokens", key, lambda: load_figures.throughput_figure(s))
        chart(fig, key="serve_fig_load_tokens")
    fig = shared_figure(
        "serve.load.memory",
        key,
        lambda: load_figures.memory_figure(res.memory, context=res.workload.mean_context),
    )
    chart(fig, key="serve_fig_load_memory")
    st.caption(_memory_words(res.memory, res.workload.mean_context))


def _memory_words(curve: sl.MemoryCurve, context: int) -> str:
    """What the draft takes from the batch at the requests' context, and where memory binds."""
    i = int(np.argmin(np.abs(curve.context - context)))
    n, plain, spec = int(curve.context[i]), int(curve.without_draft[i]), int(curve.with_draft[i])
    binds = (
        f"From {curve.binds_from:,} tokens of context the KV cache, not max_num_seqs "
        f"({curve.max_seqs:,}), caps the batch: long contexts are where memory binds."
        if curve.binds_from is not None
        else f"The KV cache never caps the batch below max_num_seqs ({curve.max_seqs:,})."
    )
    return (
        f"Largest batch = (memory share - weights) / KV bytes per sequence. At {n:,} tokens "
        f"the draft's weights and cache take {plain - spec:,} of {plain:,} sequences. {binds}"
    )


def under_load(result) -> None:
    """The section: inputs, answer, latency and tokens against QPS, memory against batch."""
    st.header("Under load: requests per second instead of a batch")
    st.markdown(
        "A server does not choose its batch: requests arrive, and the batch is however many "
        "are still decoding (Little's law: batch = QPS x time in the server). Speculation "
        "makes each request leave sooner, but each of its steps does more work: past some "
        "QPS that work costs more than it saves."
    )
    values = _inputs()
    res = _result(result.setup, result.acceptance, values)
    if isinstance(res, SpecDecError):
        show_error(res)
        return
    with st.container(key="serve_load_answer", border=True):
        st.markdown(_answer(res))
    _charts(res, (result.setup, result.acceptance, tuple(sorted(values.items()))))
    w = res.workload
    st.caption(
        f"A steady state, not a simulation: Poisson arrivals, {w.prompt:,} prompt and "
        f"{w.output:,} output tokens per request (mean context {w.mean_context:,}), prompts in "
        f"chunks of at most {w.chunk:,} tokens sharing the steps, at most {w.max_seqs:,} "
        f"sequences per step and the KV cache that fits in {w.memory_share:.0%} of the memory "
        "after both models' weights. A gap in a curve: that server cannot keep up there and "
        "its queue grows without end. Sources: the vLLM blog (Oct 2024) on speculative "
        "decoding under load; SmartSpec (Liu et al. 2024) for goodput. The time to the first "
        "token is left out."
    )
