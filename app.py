"""Speculative Decoding Lab: the entry point (`streamlit run app.py`), a router over the pages.

The pages are scripts in ``pages/scripts/``, registered once in :mod:`specdec_ui.registry`;
:func:`specdec_ui.router.run_app` turns them into an ``st.navigation`` router.
"""

from specdec_ui.router import run_app

run_app()
