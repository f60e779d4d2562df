"""A yes/no setting kept in the link and the session, with a sidebar switch.

Presenter view (``present=1``) and simple mode (``simple=1``) behave alike: a link's value
is applied once (only when it differs from the last value seen, so a link that still says
``=1`` cannot switch the setting back on after the switch turned it off), the state lives
under a non-widget key of the session (it survives page switches, which drop a widget's
value and the link's parameters), and the switch writes the state back into the address
bar so that a reload keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

TRUE_WORDS = ("1", "true", "on", "yes")
FALSE_WORDS = ("0", "false", "off", "no")


def parse_yes_no(raw: str | None) -> bool | None:
    """A link value -> True/False, or None when absent or not a yes/no word."""
    if raw is None:
        return None
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


@dataclass(frozen=True)
class LinkSwitch:
    """One setting: its link ``param``, its session ``state_key`` (not a widget key), the
    sidebar toggle's ``toggle_key`` and ``seen_key`` (the last link value read)."""

    param: str
    state_key: str
    toggle_key: str
    seen_key: str

    def on(self) -> bool:
        """Whether the setting is on; a changed link value is applied once."""
        raw = st.query_params.get(self.param)
        if raw != st.session_state.get(self.seen_key):
            st.session_state[self.seen_key] = raw
            wanted = parse_yes_no(raw)
            if wanted is not None:
                st.session_state[self.state_key] = wanted
        return bool(st.session_state.get(self.state_key, False))

    def _toggled(self) -> None:
        st.session_state[self.state_key] = bool(st.session_state[self.toggle_key])

    def toggle(self, label: str, help: str) -> bool:
        """The sidebar switch; returns the state it was drawn with."""
        on = self.on()
        st.session_state[self.toggle_key] = on  # the widget's value is dropped on page switches
        st.sidebar.toggle(label, key=self.toggle_key, on_change=self._toggled, help=help)
        return on

    def link_params(self) -> dict[str, str]:
        """``{param: "1"}`` while on, else ``{}``: add it to a page's link."""
        return {self.param: "1"} if self.on() else {}

    def sync_link(self) -> None:
        """Write the state into the address bar (after the page wrote its own)."""
        on = self.on()
        if on and st.query_params.get(self.param) != "1":
            st.query_params[self.param] = "1"
        elif not on and self.param in st.query_params:
            del st.query_params[self.param]
        st.session_state[self.seen_key] = st.query_params.get(self.param)
