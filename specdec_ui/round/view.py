"""The "Step through a round" page's sections, top to bottom (``pages/scripts/round.py``).

The inputs and the session are :mod:`specdec_ui.round.state`; the decisions of a round
are :mod:`specdec_ui.round.story`; the figures come from :mod:`specdec_ui.round.figures`,
built once per round and step (:func:`round.state.shared_step_figures`). In both views
the step (decision, chart, Next) comes first: the intro and the settings fold into
expanders under the title, and the step's text and chart sit side by side.
"""

from __future__ import annotations

import streamlit as st

from specdec_ui.classroom.pool_panel import pool_panel
from specdec_ui.kit.announce import announce_change
from specdec_ui.kit.presenter import chart
from specdec_ui.kit.stepper import StepLabels, stepper, steps_below
from specdec_ui.kit.tables import show_table
from specdec_ui.kit.text import md_escape
from specdec_ui.kit.widgets import download_csv
from specdec_ui.round import codec, state
from specdec_ui.round.story import STEP_KINDS

STEP_KEY = "round_step_index"  # the step on screen (round_state resets it for a new round)
LABELS = StepLabels(first="⏮ Reset", last="⏭ Play to end")
STEPPER_WIDTHS = (1, 1, 1, 1, 1)  # "⏭ Play to end" fits on one line; the progress bar beside
COIN_NOTE = (
    "The coin u is uniform on [0, 1): it lands in the keep zone [0, a) with probability exactly a."
)
STALE_NOTE = (
    "The round below is still the last valid one; fix the entry marked ⚠️ in "
    "⚙️ Round settings to update it."
)
SHARE_CAPTION = (
    "This page's address already holds the state; copy it, or add this to the app's "
    "address to reopen this exact step:"
)


def stale_note(controls: state.RoundControls) -> None:
    """While an input is invalid: the round on screen is the last valid one."""
    if controls.error is not None:
        st.info(STALE_NOTE, icon="↩️")


def step_stepper(shared: state.SharedRound, warning_box) -> int:
    """Reset / Back / Next / Play to end and the progress bar; returns the step shown.

    The link's problems (and a link step beyond the round) go into ``warning_box``.
    """
    n_steps = len(shared.story.steps)
    _, step_problem = state.current_step(shared.signature, n_steps)
    state.STATE.warn_link([step_problem] if step_problem else [], box=warning_box)
    index, rest = stepper("round", STEP_KEY, 0, n_steps - 1, labels=LABELS, widths=STEPPER_WIDTHS)
    rest.progress((index + 1) / n_steps, text=f"Step {index + 1} of {n_steps}")
    announce_change("round_step", (shared.signature, index), step_words(shared.story, index))
    return index


def step_words(story, index: int) -> str:
    """What the live region says on arriving at a step: "Step 5 out of 9: the coin decides.
    Coin u = 0.72 < a = 0.833: keep B." (the story's own words; plain text; "out of": the
    progress bar's "Step 5 of 9" stays the one text of its kind on the page)."""
    step = story.step(index)
    kind = STEP_KINDS[step.kind]
    return f"Step {step.index + 1} out of {len(story.steps)}: {kind}. {step.title.rstrip('.')}."


def step_panel(shared: state.SharedRound, index: int) -> None:
    """The decision in words beside its chart (and the coin, on a coin step), the formula."""
    step = shared.story.step(index)
    main_fig, coin_fig, _ = state.shared_step_figures(shared, index)
    if coin_fig is None:
        text_box, chart_box = st.columns([2, 3])
    else:  # a coin step: text | bars | coin, all three in the first screen
        text_box, chart_box, coin_box = st.columns([4, 5, 4])
    with text_box:
        # "Step N of M" is the progress bar's label above; the heading names the decision.
        st.header(STEP_KINDS[step.kind].capitalize())
        with st.container(key="round_why"):
            st.markdown(f"### {md_escape(step.title)}")
            st.markdown(f"**Why this step?** {md_escape(step.why)}")
    last = len(shared.story.steps) - 1
    # The charts' names leave out the step's title: the heading above says it (issue 33:
    # heard three times a step). A phone (columns stacked): Back / Next right under the
    # step's last chart, the coin on a coin step (issue 33: under the bars, it was pushed
    # off-screen below the row that stays on the bottom edge).
    if coin_fig is not None:
        with coin_box:
            alt = "The interval from 0 to 1 split at a: keep below, reject above."
            chart(coin_fig, key="round_chart_coin", alt=alt)
            steps_below("round", STEP_KEY, 0, last, labels=LABELS)
            st.caption(COIN_NOTE)
    with chart_box:
        chart(main_fig, key="round_chart_main", alt=f"Bar chart. {main_fig.layout.title.text}.")
        if coin_fig is None:
            steps_below("round", STEP_KEY, 0, last, labels=LABELS)
    st.latex(step.latex)  # full width: a long formula would be clipped in the text column


def output_so_far(shared: state.SharedRound, index: int) -> None:
    """The tokens emitted so far and the drafts, in words and as chips."""
    story = shared.story
    with st.container(key="round_output", border=True):
        st.markdown("**Output so far** (the tokens this round has emitted)")
        st.text(story.output_text(index))
        st.caption("Drafts: " + md_escape(story.draft_text(index)))
    chart(
        state.shared_step_figures(shared, index)[2],
        key="round_chart_chips",
        alt=f"Chips of the drafts and the output. Drafts: {story.draft_text(index)}. "
        f"Output: {story.output_text(index)}.",
    )


def decisions(shared: state.SharedRound, index: int) -> None:
    """Every decision up to this step; at the result, the round's trace table."""
    story = shared.story
    is_result = story.step(index).kind == "result"
    with st.expander("All decisions so far", expanded=is_result):
        st.markdown(
            "\n".join(f"{s.index + 1}. {md_escape(s.title)}" for s in story.steps[: index + 1])
        )
        if is_result:
            trace = shared.trace  # "—" where a number does not apply (no ratio at the end)
            show_table(
                trace,
                name="The round's trace: each position's token, p, q, coin and decision",
                formats={
                    name: "%.4f"
                    for name in trace.select_dtypes("number").columns
                    if name != "position"
                },
            )


def two_rules() -> None:
    """Keep-or-reject and the residual, in plain words and formulas."""
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


def share_and_download(
    controls: state.RoundControls, shared: state.SharedRound, index: int
) -> None:
    """The link to this exact step and the round's trace as CSV."""
    st.header("Share and download")
    state.STATE.share(codec.share_params(controls.choice, index), caption=SHARE_CAPTION)
    download_csv(
        shared.trace,
        "round_trace.csv",
        key="round_download",
        label="⬇️ Download the round trace (CSV)",
    )


def class_pool() -> None:
    """A phone that joined a class on the Class page: add rounds of the class's experiment
    to its pool from here (nothing shows in a session with no seat)."""
    pool_panel()
