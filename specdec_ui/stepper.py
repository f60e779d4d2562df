"""One stepper for every page that walks through decisions: First, Back, Next, Last.

The position lives in ``st.session_state[key]`` (an int from ``first`` to ``last``), so a
page can also move it (a link, a jump slider under the same key). The buttons' keys end
in ``_first``, ``_back``, ``_next`` and ``_last``: presenter view's key script presses
``*_next`` / ``*_back`` for a clicker's Page Down / Page Up.
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


def _go(key: str, value: int) -> None:
    """First / Last: go to ``value``."""
    st.session_state[key] = value


def _step(key: str, delta: int, first: int, last: int) -> None:
    """Back / Next: move from the position kept now, so quick double clicks add up."""
    current = int(st.session_state.get(key, first))
    st.session_state[key] = max(first, min(last, current + delta))


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
    kept within ``first..last``; ``widths``: the four buttons' columns and the free one.
    """
    current = max(first, min(last, int(st.session_state.get(key, first))))
    st.session_state[key] = current
    *buttons, rest = st.columns(list(widths))
    moves = [
        (labels.first, "first", first, _go, (key, first)),
        (labels.back, "back", current - 1, _step, (key, -1, first, last)),
        (labels.next, "next", current + 1, _step, (key, 1, first, last)),
        (labels.last, "last", last, _go, (key, last)),
    ]
    for column, (label, suffix, target, move, args) in zip(buttons, moves, strict=True):
        column.button(
            label,
            key=f"{prefix}_{suffix}",
            on_click=move,
            args=args,
            disabled=target == current or not first <= target <= last,
            type="primary" if suffix == "next" else "secondary",
            width="stretch",
        )
    return current, rest
