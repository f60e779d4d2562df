"""The app's router: one ``st.navigation`` over the page registry, run by ``app.py``.

Every page is a script in ``pages/scripts/`` registered once in :mod:`specdec_ui.registry`
(title, icon, address); the Home page is the default, so the sidebar says Home and the
app's root address opens it. Pages whose file does not exist yet are skipped.

Streamlit 1.67 starts a server whose ``app.py`` has a ``pages/`` folder beside it in its
old folder mode, until some session calls ``st.navigation``: a page opened by its own link
as a fresh server's first request (a teacher's QR code after a reboot) is then looked up
among the top-level files of ``pages/``. So ``pages/`` holds one small file per address,
named like it (``pages/Self_test.py``), that runs this same router: the folder mode finds
the file, the router inside it registers the real pages under the same address, and the
request gets the right page, the router's sidebar and no "Page not found" dialog, with
Streamlit's public API only (``pages/README.md``).
"""

from __future__ import annotations

import streamlit as st

from specdec_ui.registry import available_pages


def run_app() -> None:
    """Register every available page with ``st.navigation`` and run the one asked for."""
    router = st.navigation(
        [
            st.Page(
                page.path,
                title=page.title,
                icon=page.icon,
                url_path=page.url_path or None,
                default=page.is_home,
            )
            for page in available_pages()
        ]
    )
    router.run()
