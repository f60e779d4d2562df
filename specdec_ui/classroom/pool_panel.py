"""The class's experiment on the Losslessness lab and the Step-through-a-round page (issue 34
item 3): a phone that joined a class on the Class page adds 20 rounds of the experiment the
teacher opened to the class's pool from these pages too.

The seat is the session's (:data:`specdec_ui.classroom.view.STUDENT_KEY`, kept over page
switches, which drop the link's ``join`` and ``me``); the batch is the Class page's own
(:func:`specdec_ui.classroom.view.run_rounds`: :func:`asking.run_batch` with the phone's seed,
then the store). Nothing shows in a session with no student seat.
"""

from __future__ import annotations

import streamlit as st

from specdec_ui.classroom import asking
from specdec_ui.classroom.asking import ROUNDS_PER_PRESS
from specdec_ui.classroom.view import STUDENT_KEY, Seat, describe, last_added, run_rounds
from specdec_ui.kit.widgets import show_error
from specdec_ui.runtime.classroom import ClassNotFound, ClassroomError, store

NO_EXPERIMENT = (
    "No experiment is open in your class yet: the teacher opens one on the projector "
    "(p and q, K and a rule); then press the button to add your rounds."
)


def student_seat() -> Seat | None:
    """This session's student seat (joined on the Class page), or None."""
    mine = st.session_state.get(STUDENT_KEY) or {}
    if not mine.get("code") or not mine.get("id"):
        return None
    return Seat(mine["code"], student=mine["id"])


@st.fragment
def pool_panel() -> None:
    """The box "Your class (code ABC123): add 20 rounds of the class's experiment", its button;
    every refusal (no experiment open, class ended, too fast) said plainly."""
    seat = student_seat()
    if seat is None:
        return
    with st.container(border=True, key="class_pool_panel"):
        st.markdown(
            f"**📱 Your class (code {seat.code}): add {ROUNDS_PER_PRESS} rounds of the "
            "class's experiment**"
        )
        try:
            exp = asking.parse_experiment(store().view(seat.code).pool_name)
        except ClassNotFound as err:
            show_error(err)
            st.session_state.pop(STUDENT_KEY, None)  # the class is over: the panel goes
            return
        except ClassroomError as err:
            show_error(err)
            return
        pressed = st.button(
            f"▶️ Add {ROUNDS_PER_PRESS} rounds to the class's pool", key="class_pool_run"
        )
        if exp is None:
            (st.warning if pressed else st.info)(NO_EXPERIMENT, icon="🧪")
            return
        st.caption(f"The class's experiment: {describe(exp)}.")
        if pressed:
            run_rounds(seat, exp)
        last_added(exp)
