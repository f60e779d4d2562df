"""specdec_ui: plotly figure builders and shared Streamlit widgets for the pages.

Figure builders (``figures*.py``) are pure functions of core results that
return ``plotly.graph_objects.Figure`` objects; they never read widgets, so
they are unit-tested without a browser. Widgets and page plumbing live in
``widgets.py`` and ``share.py``.
"""
