"""Variants lab: multi-draft, token trees, deterministic drafts, strict and typical acceptance."""

import streamlit as st

import specdec_core as sc
from specdec_core.rules import RULES
from specdec_ui.kit.page_frame import inputs_area, page_frame
from specdec_ui.kit.widgets import show_error, show_source
from specdec_ui.variants import view
from specdec_ui.variants.table import menu

with page_frame(__file__, view.INTRO) as frame:
    state = view.page_state()
    state.warn_link()
    with inputs_area("⚙️ Inputs: variant, p and q, rounds, seed"):
        view.inputs(state)
    current = state.keep()
    try:
        inputs = view.parse(current)
    except sc.SpecDecError as err:
        show_error(err)
        show_source(*(RULES[name].source for name in menu()))
        st.stop()

    if not frame.presenting:
        view.preset_lesson(current)
    view.step_through(inputs)  # in presenter view the decision and its chart come first
    if frame.presenting:
        view.preset_lesson(current)
    result, report, simulation = view.simulate(inputs)
    view.verdict(inputs, result, report, simulation)
    view.engine_numbers(inputs, result, simulation)
    view.compare(inputs)
    view.downloads(inputs, result, simulation)
    view.share(state, current)
    show_source(RULES[inputs.variant].source, sc.simulate_rounds)
