"""Speedup explorer: how alpha, K and the two step costs set the wall-clock speedup."""

from __future__ import annotations

import specdec_core as sc
from specdec_ui.kit.page_frame import inputs_area, page_frame
from specdec_ui.kit.widgets import show_source
from specdec_ui.speedup import view

INTRO = (
    "A round costs K cheap draft steps plus **one** target pass, and emits between 1 and K + 1 "
    "tokens. Is that faster than one target pass per token? It depends on how often the "
    "target agrees with the draft (alpha), on K, and on how cheap the draft is."
)

with page_frame(__file__, INTRO) as frame:
    state = view.page_state()
    state.warn_link()
    with inputs_area("⚙️ Inputs: preset, alpha, K and the two costs"):
        view.inputs(state)
    speed = view.speed(state.keep())

    if not frame.presenting:
        view.preset_note(speed)
        view.metrics(speed)
    view.best_k(speed)
    if frame.presenting:  # projector: the answer and its chart in the first screen
        view.charts_vs_k(speed)
        view.metrics(speed)
        view.preset_note(speed)
    view.formula_and_words(speed)
    view.paper_check(speed)
    if not frame.presenting:
        view.charts_vs_k(speed)
    view.curves_vs_alpha(speed)
    view.time_table(speed)
    view.published_table()
    view.assumptions()
    view.share(state, speed)
    show_source(sc.expected_tokens, sc.speedup, sc.optimal_k)
