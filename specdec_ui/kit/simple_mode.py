"""Simple mode: a first lesson's pages, with what it does not need folded away (issue 34).

Switched on in the sidebar or by ``simple=1`` in a link, and kept across page switches in
the session (like presenter view's ``present=1``, :mod:`specdec_ui.kit.presenter`):

- ``simple()`` reads the state (a changed ``simple`` link value once, then the toggle);
  a view wraps a section a first lesson does not need in ``if not simple(): ...``;
- ``simple_toggle()`` draws the switch in the sidebar and writes the state into the
  address bar (``sync_link``), so a reload or a copied link keeps it;
- ``link_params()`` is the ``simple=1`` a page's own link and its QR code carry: unlike
  presenter view (a screen setting) it is about what the lesson shows, so a student's phone
  opens the same simple page.

What it folds away is listed in :data:`FOLDED` (the Teach page shows the list).
"""

from __future__ import annotations

from specdec_ui.kit.link_switch import LinkSwitch

SIMPLE_PARAM = "simple"
STATE_KEY = "simple_mode"  # not a widget key: survives page switches
TOGGLE_KEY = "simple_toggle"
SEEN_KEY = "simple_link_seen"  # the last ``simple`` value read from the link
SWITCH = LinkSwitch(SIMPLE_PARAM, STATE_KEY, TOGGLE_KEY, SEEN_KEY)  # kit/link_switch.py

# What simple mode folds away, page by page (the Teach page lists it; the views say where).
FOLDED: tuple[tuple[str, str], ...] = (
    ("Model pair lab", "the guard that steps aside (K fixed) and the run as an engine logs it"),
    (
        "Serving lab",
        "the engine-log decoder and the roofline model's checks (the H200 measurement, the "
        "published results, what the model leaves out)",
    ),
    (
        "Self-test",
        "the multi-draft, tree, prompt-lookup and typical-acceptance (Medusa) questions: "
        "only the basic kinds",
    ),
)


def simple() -> bool:
    """Whether simple mode is on; a changed ``simple`` link value is applied once (so a
    link that still says ``simple=1`` cannot switch it back on after the toggle)."""
    return SWITCH.on()


def link_params() -> dict[str, str]:
    """``{"simple": "1"}`` in simple mode, else ``{}``: add it to the page's link."""
    return SWITCH.link_params()


def sync_link() -> None:
    """Write the state into the address bar (a page switch cleared the query)."""
    SWITCH.sync_link()


def simple_toggle() -> bool:
    """The sidebar switch (and the link kept in step with it); returns the state."""
    on = SWITCH.toggle(
        "🌱 Simple mode",
        help="For a first lesson: folds away the guard, engine logs, the roofline model's "
        "checks and the advanced quiz kinds. The link gets simple=1 so a reload keeps it.",
    )
    sync_link()
    return on
