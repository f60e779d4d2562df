"""The Teach page's room (issue 34): ``lesson`` (the 50-minute plan, its links and each
page's numbers; no Streamlit), ``worksheet`` (the printable student sheets, answer keys and
lesson plan as standalone HTML; no Streamlit) and ``view`` (the page's sections); run by
``pages/scripts/teach.py``.

Imports the kit, the app-wide modules at the top of ``specdec_ui`` and the core. Imported
by its page script only.
"""
