"""Speculative Decoding Lab: the entry point (`streamlit run app.py`), a router over the pages.

Every page is a file in ``pages/``, registered once in :mod:`specdec_ui.registry`
(title, icon, address); the Home page is the default, so the sidebar says Home
and the app's root address opens it. Pages whose file does not exist yet are skipped.
A page opened by its own link as a fresh server's first request also ends up here:
``specdec_ui.widgets.page_setup`` turns off Streamlit's old ``pages/`` mode and reruns.
"""

import streamlit as st

from specdec_ui.registry import available_pages

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
