"""One polite live region for the whole app: every action is said (WCAG 4.1.3, issue 33).

A screen reader hears what an action changed without hunting for it: the page's title after
a page change, the step after Next on the round page, the speedup after a slider moves, the
verdict after a simulation, the verdict on a self-test answer. The words are one keyed
container (``st.container(key="announce")``, class ``st-key-announce``) at the end of
every page, drawn by :func:`specdec_ui.kit.page_frame.page_frame`; its text is plain text
(``st.text``): no user text ever reaches HTML. Two static
module constants make the region: ``ANNOUNCE_CSS`` hides the container, and ``ANNOUNCE_JS``
copies its text into one ``role="status"`` / ``aria-live="polite"`` element
(``#specdec-announce``, visually hidden, read by a screen reader) that the script puts in
the page once per browser tab: it exists before its text changes (a live region only
announces changes), also across page changes, where Streamlit draws its containers anew.

A page says what changed with :func:`announce` (any time during its run, callbacks
included) or :func:`announce_change` (only when the thing it is about changed since the
last run that said it); :func:`live_region` adds the region and returns the function that
writes this run's messages at the end of the run. The same words twice in a row (the same
wrong answer checked twice) change no text, so a screen reader hears them once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import streamlit as st

REGION_KEY = "announce"  # the container's key: class "st-key-announce" in the page
MESSAGES = "announce__messages"  # session key: this run's messages, in order
SEEN = "announce__seen"  # session key: topic -> the state last announced for it

# The keyed container is only the source of the words: not shown, not read. A module
# constant: no run-time text.
ANNOUNCE_CSS = """<style>
.st-key-announce { display: none !important; }
</style>"""

# Static script (runs once per browser tab). It puts one polite status region at the end of
# the page's body, outside the nodes Streamlit redraws (Streamlit replaces its containers on a
# page change, and a region that appears with its text already in it is not announced), and
# copies the keyed container's text into it whenever that text changes. Visually hidden (the
# usual "sr-only" rules), still read by a screen reader. A module constant.
ANNOUNCE_JS = """<script>
(() => {
  if (window.__specdecAnnounce) { return; }
  window.__specdecAnnounce = true;
  const region = () => {
    let live = document.getElementById("specdec-announce");
    if (!live) {
      live = document.createElement("div");
      live.id = "specdec-announce";
      live.setAttribute("role", "status");
      live.setAttribute("aria-live", "polite");
      live.setAttribute("aria-atomic", "true");
      live.style.cssText = "position:absolute;width:1px;height:1px;margin:-1px;padding:0;"
        + "border:0;overflow:hidden;clip:rect(0 0 0 0);clip-path:inset(50%);white-space:nowrap;";
      document.body.appendChild(live);
    }
    return live;
  };
  let said = null;
  const copy = () => {
    const live = region();
    const source = document.querySelector(".st-key-announce");
    const text = source ? source.textContent.trim() : said;
    if (text !== null && text !== said) {
      said = text;
      live.textContent = text;
    }
  };
  region();
  new MutationObserver(copy).observe(document.body,
    { childList: true, subtree: true, characterData: true });
  copy();
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
    """Add the region's style and script; return the function that writes this run's
    messages into the keyed container, at the end of the page (called once, at the end of
    the run, also when the page stops early). At the end: the page's own elements keep
    their places (a test that reads a page's first text finds the page's, not this)."""
    st.html(ANNOUNCE_CSS)  # style only: Streamlit puts it out of the page flow
    st.sidebar.html(ANNOUNCE_JS, unsafe_allow_javascript=True)

    def flush() -> None:
        messages = st.session_state.get(MESSAGES, [])
        with st.container(key=REGION_KEY):
            st.text(" ".join(m.strip() for m in messages if m.strip()))
        st.session_state[MESSAGES] = []  # kept when the run is cut short while writing

    return flush
