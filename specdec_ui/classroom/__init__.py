"""The Class page's room: a class session (issue 34): its sections (``view``), its questions
and experiments (``asking``, no Streamlit) and its figures; run by
``pages/scripts/classroom.py``.

Imports the kit, the runtime (the class store, :mod:`specdec_ui.runtime.classroom`), the
app-wide modules at the top of ``specdec_ui`` and the core. Imported by its page script only;
another room imports it only where tests/test_import_directions.py's EXCEPTIONS name the pair
and say why.
"""
