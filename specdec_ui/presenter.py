"""Presenter view: any page as a projector layout, switched on in the sidebar or by ``present=1``.

What the switch does (a page helper calls these; pages stay thin):

- ``presenting()`` reads the state (a link's ``present=1``/``0`` once, then the toggle);
  the page helper collapses the sidebar and pages fold their input expanders with it.
- ``presenter_toggle()`` draws the switch in the sidebar; ``link_params()`` is the
  ``present=1`` a page adds to its own link so a reload keeps the view.
- ``presenter_style()`` adds static CSS (less padding, larger text) and a static key
  script: the right arrow / Page Down of a clicker presses the page's ``*_next`` button,
  the left arrow / Page Up its ``*_back`` button. Both strings are module constants:
  no user text ever reaches them (tests/test_security.py checks that).
- ``chart(fig, ...)`` is ``st.plotly_chart`` with ``theme.presenter_figure`` applied in
  presenter view (chart text >= 20 px, thicker lines, high-contrast ink).
- ``share_panel(link)`` shows the QR code of the page's link, the link itself (with
  Streamlit's copy button) and a warning when the link only works on this computer.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go
import streamlit as st

from .qr import LinkTooLongError, is_local_link, qr_png
from .registry import PageInfo
from .share import share_query
from .theme import presenter_figure

PRESENT_PARAM = "present"
STATE_KEY = "presenter"  # not a widget key: survives page switches
TOGGLE_KEY = "presenter_toggle"
SEEN_KEY = "presenter_link_seen"  # the last ``present`` value read from the link
TRUE_WORDS = ("1", "true", "on", "yes")
FALSE_WORDS = ("0", "false", "off", "no")
QR_WIDTH = 240  # px on screen: scannable from a phone a few metres from the projector

# Static CSS for the projector layout. A module constant: never formatted with user text.
# ``--specdec-presenter`` tells the key script below that presenter view is on.
PRESENTER_CSS = """<style>
:root { --specdec-presenter: 1; }
[data-testid="stMainBlockContainer"] { padding-top: 3.25rem; padding-bottom: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding-top: 0; }
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.2rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] { font-size: 1.05rem; }
[data-testid="stMainBlockContainer"] button p { font-size: 1.2rem; font-weight: 600; }
</style>"""

# Static key script (runs once per browser tab; a flag on window stops a second listener).
# It presses the visible, enabled button of an element whose key ends in _next / _back, and
# only while presenter view is on and the focus is not in a field, slider or menu.
PRESENTER_KEYS_JS = """<script>
(() => {
  if (window.__specdecPresenterKeys) { return; }
  window.__specdecPresenterKeys = true;
  const NEXT = ["ArrowRight", "PageDown"];
  const BACK = ["ArrowLeft", "PageUp"];
  const typing = (el) => el && el.closest && el.closest(
    "input, textarea, select, [contenteditable='true'], [role='slider'], [role='listbox'], " +
    "[role='combobox'], [role='menu'], [role='tablist']");
  const button = (suffix) => {
    for (const box of document.querySelectorAll("[class*='st-key-']")) {
      const mine = [...box.classList].some((c) => c.startsWith("st-key-") && c.endsWith(suffix));
      const b = mine ? box.querySelector("button") : null;
      if (b && !b.disabled && b.offsetParent !== null) { return b; }
    }
    return null;
  };
  document.addEventListener("keydown", (event) => {
    const on = getComputedStyle(document.documentElement)
      .getPropertyValue("--specdec-presenter").trim() === "1";
    if (!on || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) {
      return;
    }
    const suffix = NEXT.includes(event.key) ? "_next" : BACK.includes(event.key) ? "_back" : "";
    const target = suffix ? button(suffix) : null;
    if (target) { event.preventDefault(); target.click(); }
  });
})();
</script>"""


def parse_present(raw: str | None) -> bool | None:
    """``present`` link value -> True/False, or None when absent or not a yes/no word."""
    if raw is None:
        return None
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def presenting() -> bool:
    """Whether presenter view is on; a changed ``present`` link value is applied once.

    The link is read only when its value differs from the last one seen, so a link
    that still says ``present=1`` cannot switch the view back on after the toggle
    turned it off (the toggle also removes the parameter).
    """
    raw = st.query_params.get(PRESENT_PARAM)
    if raw != st.session_state.get(SEEN_KEY):
        st.session_state[SEEN_KEY] = raw
        wanted = parse_present(raw)
        if wanted is not None:
            st.session_state[STATE_KEY] = wanted
    return bool(st.session_state.get(STATE_KEY, False))


def _toggled() -> None:
    st.session_state[STATE_KEY] = bool(st.session_state[TOGGLE_KEY])


def presenter_toggle() -> bool:
    """The sidebar switch; returns the (possibly new) state."""
    on = presenting()
    st.session_state[TOGGLE_KEY] = on  # the widget's value is dropped on page switches
    st.sidebar.toggle(
        "🖥️ Presenter view",
        key=TOGGLE_KEY,
        on_change=_toggled,
        help="Projector layout: inputs folded away, larger chart text, thicker lines. "
        "→ / Page Down (a clicker) presses Next, ← / Page Up presses Back. "
        "The link gets present=1 so a reload keeps it.",
    )
    return on


def link_params() -> dict[str, str]:
    """``{"present": "1"}`` in presenter view, else ``{}``: add it to the page's link."""
    return {PRESENT_PARAM: "1"} if presenting() else {}


def sync_link() -> None:
    """Write the presenter state into the address bar (after the page wrote its own)."""
    on = presenting()
    if on and st.query_params.get(PRESENT_PARAM) != "1":
        st.query_params[PRESENT_PARAM] = "1"
    elif not on and PRESENT_PARAM in st.query_params:
        del st.query_params[PRESENT_PARAM]
    st.session_state[SEEN_KEY] = st.query_params.get(PRESENT_PARAM)


def presenter_style() -> None:
    """Static CSS and the static key script, only in presenter view."""
    if not presenting():
        return
    st.html(PRESENTER_CSS)  # style only: Streamlit puts it out of the page flow
    st.sidebar.html(PRESENTER_KEYS_JS, unsafe_allow_javascript=True)


def page_heading(page: PageInfo, intro: str, *, presenting: bool) -> None:
    """The page's title and its intro paragraph (markdown, the page's own text); in
    presenter view the intro folds into "What this page asks", so the result comes first."""
    st.title(f"{page.icon} {page.title}")
    (st.expander("What this page asks") if presenting else st.container()).write(intro)


def chart(fig: go.Figure, **kwargs) -> None:
    """``st.plotly_chart`` with the presenter look applied in presenter view."""
    if presenting():
        fig = presenter_figure(fig, theme_type=st.context.theme.type)
    st.plotly_chart(fig, **kwargs)


def share_link(params: Mapping[str, str] | None = None) -> str | None:
    """This page's full address with its state (``present`` left out), or None if unknown.

    ``st.context.url`` is the page address the browser used (no query); ``params``
    defaults to the current query parameters. Presenter view is a screen setting, not
    state: a student's phone opens the normal page.
    """
    base = st.context.url
    if not base:
        return None
    values = dict(st.query_params.to_dict() if params is None else params)
    values.pop(PRESENT_PARAM, None)
    return base + (share_query(values) if values else "")


def share_panel(link: str | None) -> None:
    """QR code of ``link`` beside the link as copyable text, and a note on local addresses."""
    if not link:
        st.caption("The share link appears here once the page has loaded in a browser.")
        return
    code, text = st.columns([1, 3], vertical_alignment="center")
    try:
        png = qr_png(link)
    except LinkTooLongError as err:
        code.info(f"No QR code: {err}. Copy the link instead.", icon="🔗")
    else:
        code.image(png, width=QR_WIDTH, caption="Scan to open this page in the same state")
    with text:
        st.code(link, language=None, wrap_lines=True)
        if is_local_link(link):
            st.caption(
                "This address points at this computer (localhost), so phones cannot open "
                "it; serve the app on the network or a public host to share it."
            )


def share_page(params: Mapping[str, str] | None = None) -> None:
    """For a page without ``PageState``: keep ``present=1`` in its link, show the QR panel."""
    sync_link()
    share_panel(share_link(params))
