"""Step through one round of speculative sampling, one decision per click."""

import streamlit as st

import specdec_core as sc
from specdec_ui.kit.page_frame import asks, page_frame
from specdec_ui.kit.presenter import page_heading
from specdec_ui.kit.widgets import show_source
from specdec_ui.round import state, view

INTRO = (
    "The **draft** model q (the intern) writes K tokens ahead; the **target** model p (the "
    "editor) checks them all in one pass. Click **Next** to see one decision at a time: "
    "each draft is kept with probability a = min(1, p/q), the first rejected one is "
    "replaced by a sample of the leftover max(0, p − q), and when all K survive a free "
    "bonus token comes from p."
)

with page_frame(__file__) as frame:
    # In both views the step comes first: the intro and the settings fold under the title.
    page_heading(frame.info, INTRO, presenting=True, questions=asks(frame.info))
    view.class_pool()  # a phone that joined a class adds its rounds to the class's pool
    warning_box = st.container()
    state.open_state()
    with st.expander(state.settings_label(), key="round_settings"):
        controls = state.round_controls()  # a bad entry's message is shown next to its field
    view.stale_note(controls)

    shared = state.shared_round(controls.spec)  # built once per round, shared by the class
    index = view.step_stepper(shared, warning_box)
    view.step_panel(shared, index)
    view.output_so_far(shared, index)
    view.decisions(shared, index)
    view.two_rules()
    view.share_and_download(controls, shared, index)
    show_source(sc.verify_round, sc.acceptance_probability, sc.residual_distribution)
