"""The Serving lab's engine-log decoder: type what an engine prints, get AL, the draft
acceptance rate both ways (vLLM's accepted / draft tokens beside (AL - 1) / K, with a
sentence on whether and why they differ), the conditional rates and the fitted alpha.

The numbers come from :mod:`specdec_core.engine_metrics`; the chart is the engine panel's
own (:func:`specdec_ui.kit.engine_figures.position_rates_figure`).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

import specdec_core as sc
from specdec_core import SpecDecError
from specdec_ui.kit.engine_figures import position_rates_figure
from specdec_ui.kit.page_state import PageState
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.widgets import show_error
from specdec_ui.runtime.figure_cache import shared_figure
from specdec_ui.serving import settings

CUSTOM, K_MAX = settings.CUSTOM, settings.K_MAX


@dataclass(frozen=True)
class DecodedLog:
    """An engine log decoded: the core's metrics (None when the log gives only AL)."""

    k: int
    mean_acceptance_length: float
    draft_acceptance_rate: float  # (AL - 1) / K
    metrics: sc.AcceptanceMetrics | None

    @property
    def per_drafted(self) -> float:
        """accepted / draft tokens (vLLM's rate); (AL - 1) / K when the log has no counts."""
        return (
            self.draft_acceptance_rate
            if self.metrics is None
            else self.metrics.accepted_per_drafted
        )


def decode_log(values: dict[str, object]) -> DecodedLog:
    """The decoder's fields -> the numbers (specdec_core.engine_metrics); SpecDecError if bad."""
    mode = str(values["log_mode"])
    if mode == "al":
        k, al = int(values["log_k"]), float(values["log_al"])
        return DecodedLog(k, al, sc.draft_acceptance_rate(al, k), None)
    if mode == "counts":
        m = sc.metrics_from_vllm_counters(
            int(values["log_drafts"]),
            int(values["log_draft_tokens"]),
            int(values["log_accepted"]),
            settings.parse_counts(str(values["log_counts"])),
        )
    else:
        m = sc.metrics_from_rates(sc.parse_rates(str(values["log_rates"]), name="rates"))
    return DecodedLog(m.k, m.mean_acceptance_length, m.draft_acceptance_rate, m)


def _counter_inputs(state: PageState, to_custom) -> None:
    st.text_input(
        "Drafts accepted at each position (num_accepted_tokens_per_pos)",
        key=state.key("log_counts"),
        on_change=to_custom,
        max_chars=sc.MAX_TEXT_LENGTH,
    )
    cols = st.columns(3)
    for col, (name, label) in zip(
        cols,
        (
            ("log_drafts", "rounds that drafted (num_drafts)"),
            ("log_draft_tokens", "drafts proposed (num_draft_tokens)"),
            ("log_accepted", "drafts kept (num_accepted_tokens)"),
        ),
        strict=True,
    ):
        low = 1 if name == "log_drafts" else 0
        col.number_input(
            label,
            low,
            settings.LOG_DRAFTS_MAX * settings.LOG_K_MAX,
            key=state.key(name),
            on_change=to_custom,
        )


def _log_inputs(state: PageState) -> None:
    to_custom = state.to_custom(CUSTOM, "log_preset")
    state.preset_select(
        "Published log",
        [*settings.LOG_PRESETS, CUSTOM],
        settings.LOG_PRESETS,
        settings.log_values,
        custom=CUSTOM,
        name="log_preset",
        custom_label="Your own log (type it below)",
    )
    st.radio(
        "What your engine prints",
        list(settings.LOG_MODES),
        format_func=settings.LOG_MODES.get,
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
        _counter_inputs(state, to_custom)
    else:
        left, right = st.columns(2)
        left.number_input(
            "Mean acceptance length (AL)",
            1.0,
            settings.LOG_K_MAX + 1.0,
            step=0.01,
            format="%.2f",
            key=state.key("log_al"),
            on_change=to_custom,
        )
        right.number_input(
            "K (draft tokens per round)",
            1,
            settings.LOG_K_MAX,
            key=state.key("log_k"),
            on_change=to_custom,
        )


def _use_alpha(state: PageState, alpha: float, k: int) -> None:
    """on_click: put the log's fitted alpha (and its K, if the page offers it) above."""
    state.set_values({"acc": "alpha", "alpha": round(alpha, 2), "k": min(k, K_MAX)})


def rates_words(log: DecodedLog) -> str:
    """Whether vLLM's accepted / draft tokens and (AL - 1) / K agree, and why (one sentence)."""
    m = log.metrics
    if m is None or m.draft_tokens is None:
        return (
            "Without the counters the two draft acceptance rates are one number, (AL - 1) / K: "
            "every round is taken to have drafted K tokens."
        )
    full = m.rounds * m.k
    if m.draft_tokens == full:
        return (
            f"They agree: every round drafted K = {m.k} tokens (num_draft_tokens = "
            f"{m.draft_tokens:,} = num_drafts x K)."
        )
    return (
        f"They differ: the rounds drafted {m.mean_drafted:.2f} tokens on average, not K = {m.k} "
        f"({m.draft_tokens:,} drafts, not {full:,}). (AL - 1) / K counts the "
        f"{full - m.draft_tokens:,} drafts never proposed as if they had been rejected; vLLM "
        "divides by the drafts it proposed."
    )


def _log_metrics(log: DecodedLog) -> None:
    top, bottom = st.columns(2), st.columns(2)
    top[0].metric("mean acceptance length AL", f"{log.mean_acceptance_length:.2f}")
    top[1].metric(f"(AL − 1) / K, K = {log.k}", f"{log.draft_acceptance_rate:.3f}")
    bottom[0].metric(
        "accepted / draft tokens (vLLM)",
        f"{log.per_drafted:.3f}",
        help="vLLM's “Avg Draft acceptance rate”: num_accepted_tokens / num_draft_tokens.",
    )
    m = log.metrics
    bottom[1].metric("fitted alpha (i.i.d. model)", "n/a" if m is None else f"{m.fitted_alpha:.3f}")
    st.markdown(rates_words(log))


def _log_results(state: PageState, log: DecodedLog) -> None:
    _log_metrics(log)
    m = log.metrics
    if m is None:
        st.caption(
            "AL alone does not say how the rounds ended, so no alpha is fitted: the draft "
            "acceptance rate is the one number it gives. Type the per-position rates to get more."
        )
        return
    left, right = st.columns([2, 3])
    show_table(
        {
            "position i": list(range(1, m.k + 1)),
            "r_i": list(m.rates),
            "r_i / r_(i-1)": list(m.conditional_rates),  # None: "—"
            "alpha^i": [m.fitted_alpha**i for i in range(1, m.k + 1)],
        },
        name="Your log by draft position: rates, their ratios and the fitted alpha^i",
        formats={"r_i": "%.3f", "r_i / r_(i-1)": "%.3f", "alpha^i": "%.3f"},
        where=left,
    )
    with right:
        title = "Your log, position by position"
        figure = shared_figure(
            "serve.log_positions",
            (m, title),
            lambda: position_rates_figure(m, title=title),
            typed=True,  # numbers a student pasted from a log
        )
        chart(figure, key="serve_fig_log")
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
- **Mean acceptance length AL** = tokens per target pass, bonus included = 1 + (r_1 + ... + r_K)
  = 1 + num_accepted_tokens / num_drafts. vLLM's "Mean acceptance length" counts the bonus
  token; some engines leave it out.
- **Draft acceptance rate**: vLLM's "Avg Draft acceptance rate" is num_accepted_tokens /
  num_draft_tokens. (AL - 1) / K divides by K drafts in every round instead: the same number
  when every round drafts K, smaller when rounds draft fewer (n-gram lookup, the guard).
  Both fall as K grows even when nothing else changes: the drafts after a rejection are
  proposed and never kept.
- **Conditional rate** r_i / r_(i-1): the chance draft i is kept when draft i - 1 was. In
  the i.i.d. model every conditional rate is alpha, and r_i = alpha^i.
- **Fitted alpha** = sum r_i / (sum r_i + 1 - r_K): the i.i.d. model's most likely alpha,
  the same as drafts kept / drafts checked when every round drafts K.
"""


def engine_log_decoder(state: PageState, values: dict[str, object]) -> None:
    """Type what an engine prints; get AL, both draft acceptance rates, conditional rates,
    alpha."""
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
