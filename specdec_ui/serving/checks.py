"""The Serving lab's checks of its model: the H200 measured for this project, the published
results with each error, and what the model leaves out.

Every figure and table here depends only on shipped numbers and a few choices (context, K),
so it is built once per server (:func:`runtime.figure_cache.shared_figure`) and holds still from
visit to visit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from specdec_core import serving as sv
from specdec_core import serving_measured as sm
from specdec_core import serving_published as sp
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import download_csv
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.serving import figures

KERNEL_WORDS = (
    f"Measured for this project on {sm.GPU}: a Llama-3.1-8B-shaped decode step in torch "
    "(every layer's weights and KV cache read from memory, the embedding lookup not timed), "
    "the median of 15 replays, at 9 batch sizes, two contexts and 1 to 9 tokens per sequence. "
    "One GPU and this kernel set: the solid curve takes the faster of two attention kernels at "
    "each shape (flash decoding for one token, two batched GEMMs for several), as an engine "
    "picks a decode kernel and a verify kernel; the dotted one is the two-GEMM kernel alone."
)


def measured_inputs(state: PageState) -> tuple[int, int]:
    """The context and K of the measured curves (radio and select, kept in the link)."""
    left, right = st.columns(2)
    left.radio(
        "context",
        [1_024, 4_096],
        format_func=lambda n: f"{n:,} tokens",
        horizontal=True,
        key=state.key("meas_n"),
    )
    right.selectbox(
        "K (the verify checks K + 1 tokens)", list(sm.MEASURED_K), key=state.key("meas_k")
    )
    return int(st.session_state[state.key("meas_n")]), int(st.session_state[state.key("meas_k")])


def _figures(context: int, k: int):
    fits = [sm.fits(b, context) for b in sm.BATCHES]
    v = figures.measured_v_figure(
        sm.BATCHES,
        sm.measured_v(k, context),
        sm.measured_v(k, context, sm.TWO),
        sm.model_v(k, context),
        k=k,
        context=context,
        fits=fits,
    )
    tokens = (1, k + 1)
    step = figures.measured_step_figure(
        sm.BATCHES,
        {m: sm.target_ms(m, context) for m in tokens},
        {m: sm.model_ms(m, context) for m in tokens},
        context=context,
        fits=fits,
    )
    return v, step


def error_table(context: int, k: int) -> pd.DataFrame:
    """Per batch: the step (1 token) measured and modelled, its error, and v(K) both ways."""
    measured, model = sm.target_ms(1, context), sm.model_ms(1, context)
    return pd.DataFrame(
        {
            "batch": list(sm.BATCHES),
            "step, measured (ms)": np.round(measured, 2),
            "step, model (ms)": np.round(model, 2),
            "step error (%)": np.round(100 * (model / measured - 1), 0),
            f"v({k}), measured": np.round(sm.measured_v(k, context), 2),
            f"v({k}), model": np.round(sm.model_v(k, context), 2),
            "fits one H200": [
                "yes" if sm.fits(b, context) else "no (KV reused)" for b in sm.BATCHES
            ],
        }
    )


def _error_formats(k: int) -> dict[str, str]:
    """How :func:`error_table`'s columns show (kit.tables)."""
    formats = {"step, measured (ms)": "%.2f", "step, model (ms)": "%.2f"}
    formats |= {f"v({k}), measured": "%.2f", f"v({k}), model": "%.2f"}
    return formats | {"step error (%)": "%+.0f%%"}


def _error_words(context: int, k: int) -> str:
    """What the errors say, computed: the plain step's worst error up to batch 128 and the
    verify's, and v at batch 64."""
    errors = sm.step_errors(context)
    at_64 = sm.BATCHES.index(64)
    plain = float(np.max(np.abs(errors[1][:8])))
    verify = errors[k + 1][:8]
    kernel = sm.H200.kernel
    return (
        f"At {context:,} tokens the model's plain step is within {plain:.0%} of the measurement "
        f"up to batch 128; for {k + 1} tokens per sequence its error runs from "
        f"{float(np.min(verify)):+.0%} to {float(np.max(verify)):+.0%}, and its v({k}) at batch "
        f"64 is {float(sm.model_v(k, context)[at_64]):.2f} where the GPU paid "
        f"{float(sm.measured_v(k, context)[at_64]):.2f}. The model uses the kernel preset "
        f"fitted on this table ({md_escape(kernel.label)}): one token reads the cache at "
        f"{kernel.decode_read_share:.2f} of the spec bandwidth; several read it at "
        f"{kernel.verify_read_share:.2f} and pay their attention arithmetic on top, at "
        f"{kernel.verify_flops_share:.3f} of the peak FLOP/s. "
        "The draft's c is within 0.02 of the measured one at every batch."
    )


def measured_section(state: PageState) -> None:
    """The measured H200 curves beside the model's, with the error per batch."""
    st.header("Measured on one GPU: the model against an H200")
    context, k = measured_inputs(state)
    v_fig, step_fig = shared_figure("serve.measured", (context, k), lambda: _figures(context, k))
    left, right = st.columns(2)
    with left:
        chart(v_fig, key="serve_fig_measured_v")
    with right:
        chart(step_fig, key="serve_fig_measured_step")
    st.caption(
        KERNEL_WORDS + " Hollow squares: batch 256 at 4,096 tokens needs 128 GiB of KV cache "
        "plus 16 GB of weights, more than one H200 holds; the script reused KV slices to time it."
    )
    st.markdown(_error_words(context, k))
    with st.expander("The error at each batch size"):
        show_table(
            error_table(context, k),
            name=f"The model against the H200 at each batch size, {context:,} tokens of context",
            formats=_error_formats(k),
        )


# ----------------------------------------------------------------------------- published
LEVIATHAN_TABLES = (
    "Leviathan et al. 2023 hold these numbers in three tables: Table 2 (Sec. 4.1) gives "
    "gamma, alpha and the measured speed of T5-XXL with each T5 draft; Table 4 (Appendix A.3) "
    "repeats those rows with c, measured from profiler traces, and the speed their formula "
    "expects; Table 3 (Sec. 4.2) gives alpha alone, including unigram and bigram drafts. (The "
    "Speedup explorer's presets use Table 4, which has c.)"
)
NUMBER_FORMATS = {"signed error (%)": "%+.0f%%"}


def _row_story(row: sp.PublishedCheck) -> str:
    """One row in words: figure, prediction, error, where it misses, what was assumed."""
    unit = figures.UNITS[row.quantity]
    circular = " Left out of the median (circular)." if row.circular else ""
    if row.key in sv.ENGINE_WORK_FIT_ROWS:
        circular += " One of the rows the engine work per round was fitted on."
    return (
        f"- **{md_escape(row.source)}**: {md_escape(row.setting)}. Published "
        f"{md_escape(unit.format(row.published))}, model {md_escape(unit.format(row.predicted))} "
        f"({100 * row.relative_error:+.0f}%). {md_escape(row.note)}{circular} "
        f"*Assumed: {md_escape(row.assumed)}.*"
    )


def published_section() -> None:
    """The published results beside the model's predictions, with each error and the median."""
    st.header("The model against published results")
    rows = shared_figure("serve.published", "rows", sp.published_checks)
    median, used, left_out = sp.error_summary(rows)
    signed = sp.signed_median(rows)
    checks = sp.check_rows(rows)
    check_median = sp.error_summary(checks)[0]
    lean = "over-predicts" if signed > 0 else "under-predicts"
    st.markdown(
        f"Over the {used} rows that test the model: median |error| **{median:.0%}**, signed "
        f"median **{signed:+.0%}** (the model leans to {lean} by that much; {left_out} circular "
        "row left out: its alpha was fitted from its own result). The engine work per round, "
        f"{1e3 * sv.DEFAULT_ENGINE_WORK_S:.1f} ms, was fitted on {len(sv.ENGINE_WORK_FIT_ROWS)} "
        f"rows ({', '.join(sv.ENGINE_WORK_FIT_ROWS)}); the other {len(checks)} check it: median "
        f"|error| {check_median:.0%}, signed {sp.signed_median(checks):+.0%}."
    )
    table = shared_figure("serve.published", "display", lambda: figures.published_display(rows))
    show_table(
        table,
        name="Published results beside the model's predictions, with each error",
        formats=NUMBER_FORMATS,
    )
    st.caption(
        "Speedups are at batch 1 unless the setting says otherwise; rows in ms check one plain "
        "step, rows in tokens/s a speculative run. The model misses where acceptance is not the "
        "same at every position (summaries copy text: more tokens per round than the i.i.d. E), "
        "where an engine pays more per draft step than a pass's bytes and overhead, where "
        "kernels near the ridge point or for several query tokens are slower than the roofline, "
        "and where a baseline is slower than the hardware allows. " + LEVIATHAN_TABLES
    )
    with st.expander("Each row: where the model misses, why, and what was assumed"):
        st.markdown("\n".join(_row_story(row) for row in rows))
    download_csv(
        lambda: figures.published_table(rows),
        "serving_published_checks.csv",
        key="serve_csv",
        label="Download the table (CSV)",
    )


def leaves_out() -> None:
    """What the per-layer model does not contain."""
    st.header("What the model leaves out")
    with st.container(key="serve_leaves_out"):
        st.markdown(
            """
- **Kernels beyond the two presets**: the torch preset is fitted on one H200 and one model
  shape; the tuned preset (FlashInfer / FlashAttention-3 style) is assumed, not timed. A
  tree's attention mask is priced as dense query tokens. Elementwise kernels (norms, rotary,
  residuals) are only in the fixed overhead.
- **Engine work as one number**: the work per round (tree building, sampling, CPU sync) is
  one fitted constant for every engine, batch and draft; real engines differ.
- **All-reduce latency beyond one number**: 8 us per all-reduce over NVLink is an assumption
  (about 6 us was measured on 2 H100s); the gather of the LM head's logits is left out.
- **Achieved shares per GPU**: measured on an H200 only; every preset uses the same shares.
- **Trees' draft steps** are priced as one token per sequence, and a tree's tau must be typed
  (the Variants lab computes it for a given tree).
- **Scheduling under load**: a faster round changes how many requests are in flight at a
  given load; here the batch size is given (the vLLM high-QPS rows guess batch 256).
- **Acceptance that varies**: alpha is the same at every position (the i.i.d. model).
"""
        )
