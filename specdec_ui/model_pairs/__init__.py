"""The Model pair lab page's room: its sections (``view``: settings, text, counts; ``rounds``:
step mode; ``guard``: Steps aside; ``speed``: the measured speedup), their words without
numbers and the pairs' descriptions (``words``), its shared work (runs, counts, speed) and
its figures; run by ``pages/scripts/model_pairs.py``.

Imports the kit, the runtime, the app-wide modules at the top of ``specdec_ui`` and the
core. Imported by its page script only; another room imports it only where
tests/test_import_directions.py's EXCEPTIONS name the pair and say why.
"""
