"""/Class in Streamlit's folder mode: runs the router (pages/README.md)."""

from specdec_ui.router import run_app

run_app()
