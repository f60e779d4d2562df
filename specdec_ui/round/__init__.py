"""The "Step through a round" page's room: its sections (``view``), its state, inputs codec,
story and figures; run by ``pages/scripts/round.py``.

Imports the kit, the runtime, the app-wide modules at the top of ``specdec_ui`` and the
core. Imported by its page script only; another room imports it only where
tests/test_import_directions.py's EXCEPTIONS name the pair and say why.
"""
