"""The one stepper (specdec_ui.kit.stepper): its buttons, their bounds and relative moves."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _stepper_script():
    import streamlit as st

    from specdec_ui.kit.stepper import StepLabels, stepper

    shown, rest = stepper("demo", "demo_pos", 0, 5, labels=StepLabels(first="⏮ Reset"))
    rest.caption(f"Step {shown + 1} of 6")
    st.session_state["demo_seen"] = shown


def _open() -> AppTest:
    at = AppTest.from_function(_stepper_script, default_timeout=30)
    at.run()
    return at


def test_buttons_move_within_the_bounds_and_disable_at_the_ends():
    at = _open()
    assert at.session_state["demo_seen"] == 0
    assert at.button(key="demo_first").disabled and at.button(key="demo_back").disabled
    assert at.button(key="demo_first").label == "⏮ Reset"
    at.button(key="demo_next").click().run()
    at.button(key="demo_next").click().run()
    assert at.session_state["demo_seen"] == 2
    assert at.caption[0].value == "Step 3 of 6"
    at.button(key="demo_last").click().run()
    assert at.session_state["demo_seen"] == 5
    assert at.button(key="demo_next").disabled and at.button(key="demo_last").disabled
    at.button(key="demo_back").click().run()
    assert at.session_state["demo_seen"] == 4
    at.button(key="demo_first").click().run()
    assert at.session_state["demo_seen"] == 0


def test_next_and_back_move_from_the_position_kept_now():
    """A position moved after the buttons were drawn (a second quick click, a jump slider)
    is where Next and Back start from: two quick clicks add up."""
    at = _open()
    at.session_state["demo_pos"] = 2  # moved since the buttons were drawn at 0
    at.button(key="demo_next").click().run()
    assert at.session_state["demo_seen"] == 3
    at.session_state["demo_pos"] = 5
    at.button(key="demo_next").click().run()  # drawn enabled at 3; stays within the last
    assert at.session_state["demo_seen"] == 5
    at.session_state["demo_pos"] = 0
    at.button(key="demo_back").click().run()  # drawn at 5, so Back was enabled
    assert at.session_state["demo_seen"] == 0
