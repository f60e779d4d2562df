"""The kit: what every page draws with (Streamlit and plotly allowed).

Widgets, the page frame, the stepper, page state and share links, the presenter view and its
QR code, the theme, safe text, coloured token text, charts' text alternatives and the
engines' numbers panel.

Imported by every page room and page script. Imports the runtime, the app-wide modules at
the top of ``specdec_ui`` and the core; never a page room (tests/test_import_directions.py).
"""
