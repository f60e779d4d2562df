"""Step through one round of speculative sampling, one decision per click."""

import streamlit as st

import specdec_core as sc
from specdec_ui import round_codec as codec
from specdec_ui import round_state as rs
from specdec_ui.presenter import chart, page_heading
from specdec_ui.round_story import STEP_KINDS
from specdec_ui.text import md_escape
from specdec_ui.widgets import download_csv, page_setup, show_source

PAGE = page_setup(__file__)
# In both views the step (decision, chart, Next) comes first: the intro and the settings
# fold into expanders under the title, and the step's text and chart sit side by side.
page_heading(
    PAGE,
    "The **draft** model q (the intern) writes K tokens ahead; the **target** model p (the "
    "editor) checks them all in one pass. Click **Next** to see one decision at a time: "
    "each draft is kept with probability a = min(1, p/q), the first rejected one is "
    "replaced by a sample of the leftover max(0, p − q), and when all K survive a free "
    "bonus token comes from p.",
    presenting=True,
)
warning_box = st.container()
rs.open_state()

with st.expander(rs.settings_label(), key="round_settings"):
    controls = rs.round_controls()  # a bad entry's message is shown next to its field
spec, error = controls.spec, controls.error
if error is not None:
    st.info(
        "The round below is still the last valid one; fix the entry marked ⚠️ in "
        "⚙️ Round settings to update it.",
        icon="↩️",
    )

shared = rs.shared_round(spec)  # built once per round, shared by the class
story, trace = shared.story, shared.trace
n_steps = len(story.steps)
index, step_problem = rs.current_step(shared.signature, n_steps)
rs.STATE.warn_link([step_problem] if step_problem else [], box=warning_box)

# Stepping: one decision per click.
cols = st.columns(5)
cols[0].button(
    "⏮ Reset", key="round_reset", on_click=rs.go_to, args=(0,), disabled=index == 0, width="stretch"
)
cols[1].button(
    "◀ Back",
    key="round_back",
    on_click=rs.step_by,
    args=(-1, n_steps),
    disabled=index == 0,
    width="stretch",
)
cols[2].button(
    "Next ▶",
    key="round_next",
    on_click=rs.step_by,
    args=(1, n_steps),
    disabled=index == n_steps - 1,
    type="primary",
    width="stretch",
)
cols[3].button(
    "⏭ Play to end",
    key="round_play",
    on_click=rs.go_to,
    args=(n_steps - 1,),
    disabled=index == n_steps - 1,
    width="stretch",
)
cols[4].progress((index + 1) / n_steps, text=f"Step {index + 1} of {n_steps}")

step = story.step(index)
main_fig, coin_fig, chips_fig = rs.shared_step_figures(shared, index)
main_alt = f"Bar chart. {main_fig.layout.title.text}. {step.title}."
coin_alt = f"The interval from 0 to 1 split at a: keep below, reject above. {step.title}."
COIN_NOTE = (
    "The coin u is uniform on [0, 1): it lands in the keep zone [0, a) with probability exactly a."
)
if coin_fig is None:
    text_box, chart_box = st.columns([2, 3])
    coin_box = None
else:  # a coin step: text | bars | coin, all three in the first screen
    text_box, chart_box, coin_box = st.columns([4, 5, 4])
with text_box:
    # "Step N of M" is the progress bar's label above; the heading names the decision.
    st.subheader(STEP_KINDS[step.kind].capitalize())
    with st.container(key="round_why"):
        st.markdown(f"#### {md_escape(step.title)}")
        st.markdown(f"**Why this step?** {md_escape(step.why)}")
if coin_box is not None:
    with coin_box:
        chart(coin_fig, key="round_chart_coin", alt=coin_alt)
        st.caption(COIN_NOTE)
with chart_box:
    chart(main_fig, key="round_chart_main", alt=main_alt)

st.latex(step.latex)  # full width: a long formula would be clipped in the text column

with st.container(key="round_output", border=True):
    st.markdown("**Output so far** (the tokens this round has emitted)")
    st.text(story.output_text(index))
    st.caption("Drafts: " + md_escape(story.draft_text(index)))
chart(
    chips_fig,
    key="round_chart_chips",
    alt=f"Chips of the drafts and the output. Drafts: {story.draft_text(index)}. "
    f"Output: {story.output_text(index)}.",
)

with st.expander("All decisions so far", expanded=step.kind == "result"):
    st.markdown("\n".join(f"{s.index + 1}. {md_escape(s.title)}" for s in story.steps[: index + 1]))
    if step.kind == "result":
        st.dataframe(
            trace,
            hide_index=True,
            placeholder="—",  # a number that does not apply (no ratio for the final token)
            column_config={
                name: st.column_config.NumberColumn(format="%.4f")
                for name in trace.select_dtypes("number").columns
                if name != "position"
            },
        )

with st.expander("The two rules in plain words"):
    st.markdown("**Keep or reject.** A drafted token x is kept with probability")
    st.latex(r"a(x) = \min\!\left(1, \frac{p(x)}{q(x)}\right)")
    st.markdown(
        "If the target likes x at least as much as the draft did (p ≥ q), it is always "
        "kept; otherwise it is kept p/q of the time. A coin u ~ U[0, 1) keeps it when "
        "u < a."
    )
    st.markdown(
        "**Replace a rejected token.** The replacement is drawn from the leftover of p "
        "over q, normalised:"
    )
    st.latex(
        r"p_{\text{adj}}(x) = \frac{\max(0,\ p(x) - q(x))}{Z},\qquad "
        r"Z = \sum_y \max(0,\ p(y) - q(y)) = 1 - \alpha"
    )
    st.markdown(
        "Together the two rules make every emitted token follow p exactly: speculative "
        "sampling is lossless."
    )

st.subheader("Share and download")
rs.STATE.share(
    codec.share_params(controls.choice, index),
    caption="This page's address already holds the state; copy it, or add this to the app's "
    "address to reopen this exact step:",
)
download_csv(
    trace, "round_trace.csv", key="round_download", label="⬇️ Download the round trace (CSV)"
)
show_source(sc.verify_round, sc.acceptance_probability, sc.residual_distribution)
