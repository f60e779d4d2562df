"""The frame every page shares: set-up, the labs' drawing gate, title and intro, inputs area.

A page script reads::

    with page_frame(__file__, INTRO) as frame:
        with inputs_area("⚙️ Inputs: ..."):
            ...widgets...
        ...sections (named functions of the page's view module)...

``page_frame`` calls :func:`specdec_ui.kit.widgets.page_setup` (title, icon, layout, presenter
switch, helpers), holds a drawing slot for the pages the registry marks ``heavy``
(:mod:`specdec_ui.runtime.render_gate`: the labs draw one session at a time) and writes the
title with its intro, which folds into "What this page asks" in presenter view so the
result comes first. ``inputs_area`` is an expander in the main column, open in normal
view and folded in presenter view.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from specdec_ui.kit.announce import announce_change, live_region
from specdec_ui.kit.presenter import page_heading, presenting
from specdec_ui.kit.widgets import page_setup
from specdec_ui.page_questions import page_questions, questions_box
from specdec_ui.registry import PageInfo
from specdec_ui.runtime.render_gate import render_slot


@dataclass(frozen=True)
class Frame:
    """What a page learns from its frame: its registry entry and the view it is drawn in."""

    info: PageInfo
    presenting: bool


@contextlib.contextmanager
def page_frame(page_file: str | Path, intro: str | None = None) -> Iterator[Frame]:
    """Set up the page, take a drawing slot if it is heavy, write its title and ``intro``
    (the page's own markdown, never user text; None: the page writes its own heading)."""
    info = page_setup(page_file)
    frame = Frame(info, presenting())
    said = live_region()  # the page's live region (issue 33)
    announce_change("page", info.path, f"Page: {info.title}.")
    try:
        with render_slot() if info.heavy else contextlib.nullcontext():
            if intro is not None:
                page_heading(info, intro, presenting=frame.presenting, questions=asks(info))
            yield frame
    finally:
        said()  # what this run changed, said once at its end (also after st.stop)


def asks(info: PageInfo):
    """The drawer of the page's "What this page asks" (its questions for the class,
    its room's ``questions.py``, found by :func:`specdec_ui.page_questions.page_questions`,
    which fails loudly where a page that asks has none), or None for a page registered with
    ``asks=False``."""
    questions = page_questions(info)
    return functools.partial(questions_box, questions) if questions else None


def inputs_area(label: str, *, folded: bool = False):
    """The container of a page's inputs: an expander labelled ``label`` in the main column
    (a sidebar is hidden on a phone), open in normal view and folded in presenter view,
    where the projector shows the results; ``folded`` folds it in normal view too (a link
    that opens a step: the stepper comes first, issue 33, item 16)."""
    return st.expander(label, expanded=not (folded or presenting()))
