"""One stepper for every page that walks through decisions: First, Back, Next, Last.

The position lives in ``st.session_state[key]`` (an int from ``first`` to ``last``), so a
page can also move it (a link, a jump slider under the same key). The buttons' keys end
in ``_first``, ``_back``, ``_next`` and ``_last``: presenter view's key script presses
``*_next`` / ``*_back`` for a clicker's Page Down / Page Up.

The four buttons sit in one horizontal container (``{prefix}_stepper``), which does not
stack on a phone the way columns do: Back and Next stay side by side under the thumb,
at least 44 px tall (``kit.presenter.APP_CSS``). :func:`steps_below` repeats Back and Next
under a step's chart for a phone (``{prefix}_below``, hidden on wider screens), so a
student taps through the steps with the chart in view instead of scrolling up and down.
A screen reader hears the buttons' words without their arrows ("Next"), the repeated row as
"Back (under the chart)" / "Next (under the chart)", and when the focused button becomes
disabled (the last Next) the focus moves to the nearest enabled one (``kit.presenter.A11Y_JS``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class StepLabels:
    """The four buttons' words (a round page starts over, a run goes to its first round)."""

    first: str = "⏮ First"
    back: str = "◀ Back"
    next: str = "Next ▶"
    last: str = "⏭ Last"


# The buttons' keys are f"{prefix}_{suffix}": the four of :func:`stepper`, the two of
# :func:`steps_below`.
BUTTON_SUFFIXES = ("first", "back", "next", "last", "back_below", "next_below")


def pressed(prefix: str) -> bool:
    """Whether a button of stepper ``prefix`` was pressed in this run (a button's state is
    True for the run its click started; readable before the button is drawn)."""
    return any(st.session_state.get(f"{prefix}_{suffix}") for suffix in BUTTON_SUFFIXES)


def _go(key: str, value: int) -> None:
    """First / Last: go to ``value``."""
    st.session_state[key] = value


def _step(key: str, delta: int, first: int, last: int) -> None:
    """Back / Next: move from the position kept now, so quick double clicks add up."""
    current = int(st.session_state.get(key, first))
    st.session_state[key] = max(first, min(last, current + delta))


def _button(column, label: str, key: str, disabled: bool, move, args, primary: bool) -> None:
    column.button(
        label,
        key=key,
        on_click=move,
        args=args,
        disabled=disabled,
        type="primary" if primary else "secondary",
        width="stretch",
    )


def stepper(
    prefix: str,
    key: str,
    first: int,
    last: int,
    *,
    labels: StepLabels = StepLabels(),
    widths: tuple[float, ...] = (1, 1, 1, 1, 4),
) -> tuple[int, st.delta_generator.DeltaGenerator]:
    """Draw the four buttons; return the current position and the row's free column.

    ``prefix`` makes the button keys (``f"{prefix}_next"``); ``key`` holds the position,
    kept within ``first..last``; ``widths``: the four buttons' share of the row and the
    free column's (the buttons share theirs equally, in one row on any screen).
    """
    current = max(first, min(last, int(st.session_state.get(key, first))))
    st.session_state[key] = current
    buttons, rest = st.columns([sum(widths[:4]), widths[4]], vertical_alignment="center")
    row = buttons.container(horizontal=True, key=f"{prefix}_stepper", gap="small")
    moves = [
        (labels.first, "first", current - first, _go, (key, first)),
        (labels.back, "back", current - first, _step, (key, -1, first, last)),
        (labels.next, "next", last - current, _step, (key, 1, first, last)),
        (labels.last, "last", last - current, _go, (key, last)),
    ]
    for label, suffix, room, move, args in moves:
        _button(row, label, f"{prefix}_{suffix}", room <= 0, move, args, suffix == "next")
    return current, rest


def steps_below(prefix: str, key: str, first: int, last: int, *, labels=StepLabels()) -> None:
    """Back and Next again, under the step's chart (for a phone; hidden on wider screens
    by ``kit.presenter.APP_CSS``): keys ``{prefix}_back_below`` and ``{prefix}_next_below``."""
    current = max(first, min(last, int(st.session_state.get(key, first))))
    row = st.container(horizontal=True, key=f"{prefix}_below", gap="small")
    _button(row, labels.back, f"{prefix}_back_below", current <= first, _step,
            (key, -1, first, last), False)  # fmt: skip
    _button(row, labels.next, f"{prefix}_next_below", current >= last, _step,
            (key, 1, first, last), True)  # fmt: skip
