"""One polite live region for the whole app: every action is said (WCAG 4.1.3, issue 33).

A screen reader hears what an action changed without hunting for it: the page's title after
a page change, the step after Next on the round page, the speedup after a slider moves, the
verdict after a simulation, the verdict on a self-test answer. The region is one keyed
container (``st.container(key="announce")``, class ``st-key-announce``) near the top of
every page, drawn by :func:`specdec_ui.kit.page_frame.page_frame` before the page's own
elements, so it exists before its text changes (a live region only announces changes). Its
text is plain text (``st.text``): no user text ever reaches HTML. Two static module
constants make it a region: ``ANNOUNCE_CSS`` hides it visually (still read by a screen
reader) and ``ANNOUNCE_JS`` gives it ``role="status"`` and ``aria-live="polite"``.

A page says what changed with :func:`announce` (any time during its run, callbacks
included) or :func:`announce_change` (only when the thing it is about changed since the
last run that said it); :func:`live_region` draws the region and returns the function that
writes this run's messages into it at the end of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import streamlit as st

REGION_KEY = "announce"  # the container's key: class "st-key-announce" in the page
MESSAGES = "announce__messages"  # session key: this run's messages, in order
SEEN = "announce__seen"  # session key: topic -> the state last announced for it

# Visually hidden, still in the accessibility tree (the usual "sr-only" rules); out of the
# page flow, so it adds no gap. A module constant: no run-time text.
ANNOUNCE_CSS = """<style>
.st-key-announce {
  position: absolute !important; width: 1px !important; height: 1px !important;
  margin: -1px !important; padding: 0 !important; border: 0 !important;
  overflow: hidden !important; clip: rect(0 0 0 0) !important; clip-path: inset(50%) !important;
  white-space: nowrap !important;
}
</style>"""

# Static script (runs once per browser tab): the region becomes a polite status region as
# soon as it is in the page, before any text of it changes. A module constant.
ANNOUNCE_JS = """<script>
(() => {
  if (window.__specdecAnnounce) { return; }
  window.__specdecAnnounce = true;
  const mark = () => {
    for (const box of document.querySelectorAll(".st-key-announce")) {
      if (box.getAttribute("aria-live") !== "polite") {
        box.setAttribute("role", "status");
        box.setAttribute("aria-live", "polite");
        box.setAttribute("aria-atomic", "true");
      }
    }
  };
  new MutationObserver(mark).observe(document.body, { childList: true, subtree: true });
  mark();
})();
</script>"""


def announce(message: str) -> None:
    """Say ``message`` (plain text, a sentence) in the live region at the end of this run."""
    st.session_state.setdefault(MESSAGES, []).append(message)


def announce_change(topic: str, state: Hashable, message: str) -> bool:
    """Say ``message`` when ``state`` of ``topic`` differs from the last one said for it
    (a first visit says it too); True when it was said."""
    seen = st.session_state.setdefault(SEEN, {})
    if topic in seen and seen[topic] == state:
        return False
    seen[topic] = state
    announce(message)
    return True


def live_region() -> Callable[[], None]:
    """Draw the region (its style, its script and the container) at this point of the page;
    return the function that writes this run's messages into it (called once, at the end
    of the run, also when the page stops early)."""
    st.html(ANNOUNCE_CSS)  # style only: Streamlit puts it out of the page flow
    st.sidebar.html(ANNOUNCE_JS, unsafe_allow_javascript=True)
    slot = st.container(key=REGION_KEY).empty()

    def flush() -> None:
        messages = st.session_state.get(MESSAGES, [])
        slot.text(" ".join(m.strip() for m in messages if m.strip()))
        st.session_state[MESSAGES] = []  # kept when the run is cut short while writing

    return flush
