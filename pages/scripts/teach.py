"""Teach with it: the 50-minute lesson path, simple mode and printable worksheets."""

from __future__ import annotations

from specdec_ui.kit.page_frame import page_frame
from specdec_ui.teach import view

with page_frame(__file__, view.INTRO):
    view.lesson_path()
    view.simple_mode_note()
    view.worksheets()
    view.share()
