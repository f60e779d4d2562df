"""specdec_ui: the Streamlit side of the lab, in rooms ("The house" in docs/ARCHITECTURE.md).

- ``kit/``: what every page draws with (widgets, page frame, stepper, theme, safe text,
  presenter view, share links, charts' text alternatives);
- ``runtime/``: the server's machinery (result store, work queue, figure cache, render
  gate, helper interpreters), importing no Streamlit;
- one room per page, named after its script in ``pages/scripts/`` (``home``, ``round``,
  ``speedup``, ``losslessness``, ``self_test``, ``model_pairs``, ``variants``,
  ``serving``): its ``view`` (sections), and its work and figures where it has them;
- at the top, app-wide modules: ``registry`` and ``router`` (the pages), ``presets``
  (the presets and the limits several pages share), ``words`` (display words of the core's
  names) and ``page_questions`` (a question and its box; each room holds its own
  ``questions.py``, found through the registry).

Figure builders are pure functions of core results returning plotly figures (no widgets,
unit-tested without a browser). Who may import whom: tests/test_import_directions.py.
"""
