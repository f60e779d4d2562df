"""One panel for the numbers serving engines print, shared by every page that shows them.

The Losslessness lab (a Monte Carlo), the Model pair lab (a real run), the Variants lab and
the Serving lab's log decoder all call :func:`engine_panel` with the metrics of their own
run (:mod:`specdec_core.engine_metrics`), so the words and definitions are the same
everywhere: the log line vLLM would print, the mean acceptance length, the draft acceptance
rate, the alpha of the i.i.d. model that fits best, the per-position chart and one line
that says which engine word names which number.
"""

from __future__ import annotations

import streamlit as st

from specdec_core.engine_metrics import AcceptanceMetrics
from specdec_ui.kit.engine_figures import ENGINE_WORDS, position_rates_figure, vllm_log_line
from specdec_ui.kit.presenter import chart
from specdec_ui.runtime.figure_cache import shared_figure


def engine_panel(metrics: AcceptanceMetrics, *, key: str, about: str) -> None:
    """Log line, three metrics, the per-position chart and the engines' words.

    ``about`` says whose numbers they are (e.g. "your 60-token run, 21 rounds that
    drafted"); ``key`` keys the chart.
    """
    st.caption(f"What a serving engine would print for {about}:")
    st.code(vllm_log_line(metrics), language=None, wrap_lines=True)
    left, mid, right = st.columns(3)
    left.metric(
        "Mean acceptance length (AL)",
        f"{metrics.mean_acceptance_length:.2f}",
        help="Tokens emitted per target forward pass, bonus token included: AL = 1 + Σ r_i.",
    )
    mid.metric(
        "Draft acceptance rate",
        f"{metrics.accepted_per_drafted:.1%}",
        help="Drafts kept / drafts proposed (vLLM's “Avg Draft acceptance rate”); (AL − 1) / K "
        "when every round drafts K tokens. It falls as K grows, because the drafts after a "
        "rejection are proposed and never kept.",
    )
    right.metric(
        "α of the i.i.d. fit",
        f"{metrics.fitted_alpha:.3f}",
        help="The maximum-likelihood α of the model in which every draft is kept "
        "independently with probability α: Σ r_i / (Σ r_i + 1 − r_K), which is kept / "
        "checked.",
    )
    title = "Per-position acceptance rates"
    figure = shared_figure(
        "engine.positions", (metrics, title), lambda: position_rates_figure(metrics, title=title)
    )  # the metrics are numbers (a frozen dataclass): the whole input of the figure
    chart(figure, key=key)
    st.caption(ENGINE_WORDS)
