"""Speculative Decoding Lab: home page (entry point for `streamlit run app.py`)."""

import streamlit as st

import specdec_core as sc
from specdec_ui.widgets import page_setup

page_setup("Home", "🎯")
st.title("Speculative Decoding Lab")
st.write(
    "A cheap **draft** model q proposes K tokens; the expensive **target** model p checks "
    "them all in one pass. Each draft token is kept with probability min(1, p/q); the first "
    "rejected one is replaced by a sample of the normalised residual max(0, p - q); when all "
    "K survive, a free bonus token comes from p. The output follows p exactly."
)
example = sc.SCENARIOS["000-round"]
st.caption(f"{len(sc.SCENARIOS)} worked examples from the seeds are built in, e.g. {example.title}.")
