"""'🏫 Start a class' (issue 34): a button on Home and in every page's sidebar (the presenter's
bar) that starts a class session in the class store and opens the Class page as its teacher.

The teacher key stays in this browser's session (``TEACHER_KEY``) and in the teacher's own
link, which the Class page shows folded; the address bar and every QR code carry the join
code only. Once the session holds a class, the button says "🏫 Class CODE" and goes back to it.
"""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException

from specdec_ui.kit.text import md_escape
from specdec_ui.runtime.classroom import ClassroomError, store

TEACHER_KEY = "class_teacher"  # session: {"code": ..., "key": ...} of the class it teaches
CLASS_PAGE = "pages/scripts/classroom.py"
CLASS_PARAM = "class"  # the teacher's address: ?class=CODE (no key)


def held_class() -> dict[str, str] | None:
    """The class this browser teaches ({"code", "key"}), or None."""
    held = st.session_state.get(TEACHER_KEY)
    return held if isinstance(held, dict) else None


def start_class() -> str | None:
    """Start a class, keep its teacher key in the session; its code, or None after showing
    why not (the server's bound on classes)."""
    try:
        code, key = store().start()
    except ClassroomError as err:
        st.error(md_escape(err), icon="⚠️")
        return None
    st.session_state[TEACHER_KEY] = {"code": code, "key": key}
    return code


def class_button(where, *, key: str) -> None:
    """The button in ``where`` (``st.sidebar`` or a container): starts a class (or goes back
    to the one this browser teaches) and opens the Class page."""
    held = held_class()
    label = f"🏫 Class {held['code']}" if held else "🏫 Start a class"
    hint = (
        "Back to your class: its join code, QR code, questions and the class's experiment."
        if held
        else "Starts a class session: a join code and QR code for the phones, questions to "
        "ask, answers and rounds pooled from every phone on the projector."
    )
    if not where.button(label, key=key, help=hint):
        return
    code = held["code"] if held else start_class()
    if code is None:
        return
    try:
        st.switch_page(CLASS_PAGE, query_params={CLASS_PARAM: code})
    except StreamlitAPIException:  # a page file run on its own (no router): no Class page
        st.info(f"Class {code} has started: open the Class page to show its join code.")
