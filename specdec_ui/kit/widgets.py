"""Streamlit pieces every page uses: page set-up, errors, seeds, source, CSV, and the
accessibility statement (Home)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import pandas as pd
import streamlit as st

from specdec_ui.kit import class_start, presenter, simple_mode
from specdec_ui.kit.text import md_escape
from specdec_ui.presets import MAX_SEED
from specdec_ui.registry import PageInfo, page_info
from specdec_ui.runtime import processes


def page_setup(page_file: str | Path) -> PageInfo:
    """Title, icon and wide layout (for projectors) of a page; returns its registry entry.

    Call ``page_setup(__file__)``: the title and the emoji icon come from
    :mod:`specdec_ui.registry`, where each page is defined once.
    """
    info = page_info(page_file)
    presenting = presenter.presenting()  # projector layout: the sidebar folds away
    st.set_page_config(
        page_title=f"{info.title} · Speculative Decoding Lab",
        page_icon=info.icon,
        layout="wide",
        initial_sidebar_state="collapsed" if presenting else "auto",
    )
    presenter.presenter_toggle()
    simple_mode.simple_toggle()  # simple=1: a first lesson's pages (issue 34)
    presenter.presenter_style()
    presenter.app_style()
    presenter.qr_button()  # the share link as a large QR code, from the first screen
    class_start.class_button(st.sidebar, key="class_sidebar")  # issue 34: a class session
    processes.warm_up()  # the helper processes start soon after the first page (once)
    return info


def show_error(err: Exception | str) -> None:
    """Show a core error message as plain text (never as markdown or HTML)."""
    st.error(md_escape(err), icon="⚠️")


@lru_cache(maxsize=64)
def _source(fn: Callable) -> str:
    """``inspect.getsource`` once per function: files do not change while the app runs."""
    return inspect.getsource(fn)


def show_source(*functions: Callable, label: str = "Show the code that runs") -> None:
    """An expander with the real source of core functions (``inspect.getsource``).

    The code on screen is the code that ran: it cannot drift from it.
    """
    with st.expander(label):
        for fn in functions:
            st.caption(f"`{fn.__module__}.{fn.__qualname__}`")
            st.code(_source(fn), language="python")


def seed_control(prefix: str, *, default: int = 0) -> int:
    """An integer seed kept in ``st.session_state[f"{prefix}_seed"]``.

    Same seed, same round: a teacher can replay it. "New seed" picks the next
    one. Returns the current seed.
    """
    key = f"{prefix}_seed"
    if key not in st.session_state:
        st.session_state[key] = default

    def _next() -> None:
        st.session_state[key] = (int(st.session_state[key]) + 1) % (MAX_SEED + 1)

    st.number_input(
        "Random seed",
        min_value=0,
        max_value=MAX_SEED,
        step=1,
        key=key,
        help="The same seed replays the same random draws.",
    )
    st.button("🎲 New seed", key=f"{prefix}_new_seed", on_click=_next)
    return int(st.session_state[key])


CSV_FLOAT_FORMAT = "%.6g"  # 6 significant digits: 1.7000000000000002 -> 1.7 (issue 10)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV without index, floats to 6 significant digits."""
    return frame.to_csv(index=False, float_format=CSV_FLOAT_FORMAT).encode("utf-8")


def download_csv(
    frame: pd.DataFrame | Callable[[], pd.DataFrame],
    filename: str,
    *,
    key: str,
    label: str = "Download CSV",
) -> None:
    """A download button for a table (UTF-8 CSV, no index, rounded numbers).

    The CSV is made when the button is clicked (Streamlit calls the function then), not
    on every rerun of the page: most visitors never download it. ``frame`` may be the
    table or a function that builds it (then the table is built on the click too).
    """
    build = frame if callable(frame) else lambda: frame
    st.download_button(
        label,
        lambda: csv_bytes(build()),
        file_name=filename,
        mime="text/csv",
        key=key,
    )


@contextmanager
def queue_status(spinner_text: str) -> Iterator[Callable]:
    """A spinner while heavy work runs, and the queue's words while it waits.

    Yields the ``on_wait`` callback for :func:`specdec_ui.runtime.shared_work.shared_result`;
    the waiting notice is cleared afterwards, also when the work raised.
    """
    box = st.empty()
    try:
        with st.spinner(spinner_text):
            yield lambda status: box.info(status.text, icon="⏳")
    finally:
        box.empty()


ACCESSIBILITY_STATEMENT = """
**Aim: WCAG 2.1 level AA**, the standard US public schools and colleges must meet (ADA
Title II) and Europe's EN 301 549 asks for.

**What we check, on every change** (browser tests with axe-core 4.12 in Chromium, all eight
pages, light and dark, at 1366 × 768, in presenter view and on a 390 × 844 phone, before and
after a typical action): no axe violation of the WCAG 2.0, 2.1 and 2.2 A and AA rules.
- Every chart is named by one or two sentences with its key numbers, made from the same
  data the chart draws, and its numbers are in a table under it ("This chart's numbers as a
  table").
- Every control works with the keyboard alone, with a visible focus ring; "Skip to the
  lesson" is the first thing Tab reaches. Presenter view's → / Page Down never step while
  you type in a field or scroll a box sideways, and quick presses of a clicker all count.
  When the button you pressed becomes disabled (the last Next), the focus moves to the
  nearest button still enabled; a "Help for ..." button is described by its help text.
- One h1 per page, headings in order, every input named in words, the page language set;
  the app's error messages are announced (an alert).
- Text and buttons have a contrast of at least 4.5:1 in both themes; colours come from a
  colour-blind-safe palette and every status also has a symbol and a word.
- With "reduce motion" set in your system, nothing on the page animates (Play to end
  jumps to the result anyway). At 200 % zoom and at 320 px width the pages reflow with
  no sideways scrolling.

**Known not to conform, or not checked**
- The charts' own mouse features (hover values, zoom, the chart toolbar) do not work with
  a keyboard or a screen reader, and the toolbar is kept out of the Tab order and the
  accessibility tree; the same numbers are in each chart's table.
- At 320 px width a select box shows only the start of a long option (its open list shows
  it whole), and some chart titles are cut at the chart's edge (the chart's description
  and table hold the same words).
- Automated checks find only part of the barriers. The app has not yet been tried with a
  screen reader (NVDA, JAWS, VoiceOver) by a person who uses one, nor in browsers other
  than Chromium.
- Formulas are drawn by KaTeX, which adds MathML for screen readers; how well it is read
  depends on the screen reader.

**Found a barrier?** Tell your teacher, or open an issue in the project's repository:
name the page, what you tried, your browser and any assistive technology you use. We
treat barriers as bugs.
"""


def accessibility_statement() -> None:
    """The accessibility statement (issue 28) in an expander: what conforms, what does
    not, how to report a barrier (docs/ACCESSIBILITY.md says the same)."""
    with st.expander("♿ Accessibility statement"):
        st.markdown(ACCESSIBILITY_STATEMENT)
