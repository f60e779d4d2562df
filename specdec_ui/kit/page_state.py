"""One page's state: link -> session -> preset or custom -> link warning -> share link.

Every page that keeps its state in a shareable link uses one :class:`PageState`
(so the rules below hold everywhere):

    page = PageState("speed", DEFAULTS)          # widget keys are "speed_<name>"
    if (link := page.first_visit()) is not None:  # once per session: a LinkReader
        page.start({"alpha": link.get("alpha", parse_alpha, 0.7), ...}, link.problems)
    page.restore()                                # every run, before the widgets
    st.slider(..., key=page.key("alpha"), on_change=page.to_custom())
    page.preset_select("Preset", [*PRESETS, "custom"], PRESETS, values_of)
    values = page.keep()                          # after the widgets: survives page switches
    page.warn_link()                              # the link's problems, shown once
    page.share({"alpha": ..., "k": ...})          # query params + the link on screen

- ``first_visit`` returns a :class:`~specdec_ui.kit.share.LinkReader` over the query
  parameters on the session's first run of the page, else None. ``start``
  records the values read from it (names without the prefix) and its problems.
- ``restore`` gives each widget its kept value back: Streamlit forgets a
  widget's value when it is not drawn (another page, a hidden custom input);
  writing it back before the widget exists keeps it.
- ``keep`` copies the widgets' values into the kept state and returns them.
- ``preset_select`` draws the preset picker (presets and Custom); ``apply_preset`` /
  ``to_custom`` build the ``on_change`` callbacks of a picker and of the inputs a preset sets.
- ``warn_link`` shows the link's problems (plus any the page adds) once, as
  a warning; bad values already fell back to their defaults.
- ``share`` writes the query parameters (only when they changed) and shows
  the link, warning when a value is too long for a link to reopen.

Session keys: ``<prefix>__state`` (kept values) and ``<prefix>__link_problems``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import streamlit as st

from specdec_ui.kit import presenter, simple_mode
from specdec_ui.kit.share import MAX_PARAM_LENGTH, LinkReader, share_query

SHARE_CAPTION = "Share this page: add this to the app's address (the address bar already has it)."


class PageState:
    """The link and session state of one page; widget keys are ``f"{prefix}_{name}"``."""

    def __init__(self, prefix: str, defaults: Mapping[str, object]):
        self.prefix = prefix
        self.defaults = dict(defaults)
        self._state_key = f"{prefix}__state"
        self._problems_key = f"{prefix}__link_problems"

    def key(self, name: str) -> str:
        """The widget key of ``name``."""
        return f"{self.prefix}_{name}"

    def first_visit(self) -> LinkReader | None:
        """A reader of the link on the session's first run of this page, else None."""
        if self._state_key in st.session_state:
            return None
        return LinkReader(st.query_params.to_dict())

    def start(self, values: Mapping[str, object], problems: Iterable[str] = ()) -> None:
        """Record the values a link gave (missing names take their defaults) and its problems."""
        st.session_state[self._state_key] = {**self.defaults, **values}
        st.session_state[self._problems_key] = list(problems)

    @property
    def kept(self) -> dict[str, object]:
        """The kept values (the link's, then the last ones the widgets had)."""
        return st.session_state.setdefault(self._state_key, dict(self.defaults))

    def restore(self) -> None:
        """Before the widgets: every widget takes its current or kept value."""
        ss = st.session_state
        for name, value in self.kept.items():
            key = self.key(name)
            ss[key] = ss[key] if key in ss else value

    def keep(self) -> dict[str, object]:
        """After the widgets: copy their values into the kept state; returns the kept values."""
        ss = st.session_state
        kept = self.kept
        for name in kept:
            if self.key(name) in ss:
                kept[name] = ss[self.key(name)]
        return dict(kept)

    def set_values(self, values: Mapping[str, object]) -> None:
        """Write widget values (in a callback, or before the widgets exist)."""
        for name, value in values.items():
            st.session_state[self.key(name)] = value

    def apply_preset(
        self, values_of: Callable[[str], Mapping[str, object] | None], name: str = "preset"
    ) -> Callable[[], None]:
        """``on_change`` of the preset picker ``name``: copy the chosen preset's values."""

        def callback() -> None:
            values = values_of(st.session_state[self.key(name)])
            if values is not None:
                self.set_values(values)

        return callback

    def preset_select(
        self,
        label: str,
        options: list[str],
        presets: Mapping[str, object],
        values_of: Callable[[str], Mapping[str, object] | None],
        *,
        custom: str = "custom",
        custom_label: str = "Custom (your own numbers)",
        name: str = "preset",
    ) -> str:
        """The preset picker over ``options``: keys of ``presets`` (objects with a ``label``)
        and ``custom``. Choosing a preset copies ``values_of(key)`` into the widgets.
        """
        return st.selectbox(
            label,
            options,
            key=self.key(name),
            on_change=self.apply_preset(values_of, name),
            format_func=lambda k: custom_label if k == custom else presets[k].label,
        )

    def to_custom(self, custom: str = "custom", name: str = "preset") -> Callable[[], None]:
        """``on_change`` of an input a preset sets: the picker ``name`` now says ``custom``."""
        return lambda: self.set_values({name: custom})

    def warn_link(self, extra: Iterable[str] = (), box=None) -> None:
        """Show the link's problems (once) and ``extra`` ones as one warning in ``box``."""
        reader = LinkReader({})
        reader.problems = [*st.session_state.pop(self._problems_key, []), *extra]
        if message := reader.message():
            (box or st).warning(message, icon="🔗")

    def share(self, params: Mapping[str, object], caption: str = SHARE_CAPTION) -> dict[str, str]:
        """Put ``params`` in the address bar and on screen; returns them as strings."""
        text = {name: str(value) for name, value in params.items() if value is not None}
        text.update(simple_mode.link_params())  # simple=1: phones open the simple page too
        address = {**text, **presenter.link_params()}  # present=1 keeps the projector view
        if st.query_params.to_dict() != address:
            st.query_params.from_dict(address)
        st.caption(caption)
        link = presenter.share_link(text)  # the full address, once the browser told it
        if link:
            presenter.share_panel(link)
        else:
            st.code(share_query(text), language=None, wrap_lines=True)
        too_long = [name for name, value in text.items() if len(value) > MAX_PARAM_LENGTH]
        if too_long:
            st.warning(
                f"This link's {', '.join(too_long)} is longer than {MAX_PARAM_LENGTH:,} "
                "characters, so the link cannot reopen it; shorten it.",
                icon="🔗",
            )
        return text
