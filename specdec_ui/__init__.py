"""specdec_ui: the Streamlit side of the lab, in rooms ("The house" in docs/ARCHITECTURE.md).

- ``kit/``: what every page draws with (widgets, page frame, stepper, theme, safe text,
  presenter view, share links, charts' text alternatives);
- ``runtime/``: the server's machinery (result store, work queue, figure cache, render
  gate, helper interpreters), importing no Streamlit;
- one room per page, named after its script in ``pages/scripts/`` (``home``, ``round``,
  ``speedup``, ``losslessness``, ``self_test``, ``model_pairs``, ``variants``,
  ``serving``): its ``view`` (sections), and its work and figures where it has them;
- at the top, app-wide modules: ``registry`` and ``router`` (the pages), ``presets``
  (every preset and page limit), ``words`` (display words of the core's names) and
  ``page_questions`` (what each page asks its class).

Figure builders are pure functions of core results returning plotly figures (no widgets,
unit-tested without a browser). Who may import whom: tests/test_import_directions.py.
"""
