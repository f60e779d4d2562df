"""The runtime: the server's machinery, shared by every session; imports no Streamlit.

The result store (single flight, bounded), the FIFO work queue, the façade over both
(``shared_work``), the figure cache, the render gate and the helper interpreters.

Imported by the kit and the page rooms. Imports the core and the app-wide data at the top of
``specdec_ui``; never Streamlit, the kit nor a page room (tests/test_import_directions.py
checks it, and that importing it loads no Streamlit).
"""
