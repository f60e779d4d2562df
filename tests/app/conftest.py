"""AppTest helpers: open a page file or the router (app.py), with query parameters, and read
its charts. A page file runs on its own (its ``page_setup(__file__)`` needs no router)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def open_page(path: str, query: dict[str, str] | None = None, *, run: bool = True) -> AppTest:
    """AppTest of ``path`` (relative to the repo root), run once unless ``run=False``."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=30)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    if run:
        at.run()
    return at


def jump_slider(at: AppTest):
    """The Model pair lab's jump slider in step mode (its own key, not the stepper's:
    ``specdec_ui.model_pairs.rounds.JUMP``)."""
    from specdec_ui.model_pairs.rounds import JUMP

    return at.slider(key=JUMP)


def open_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    """AppTest of the router ``app.py`` opened at ``page`` (a page script; None = Home).

    The router runs once at the root address first, so that AppTest knows the pages
    ``st.navigation`` registered and finds ``page`` among them by its file (the
    browser tests open the pages by their addresses).
    """
    at = open_page("app.py", query)
    if page is not None:
        at.switch_page(page)
        at.run()
    return at


def plain_arrays(node):
    """``node`` (figure JSON) with plotly's typed arrays decoded: plotly writes a numpy
    array as ``{"dtype": "f8", "bdata": <base64>, "shape": "3, 4"}``; this gives it back as
    (nested) lists, as a plain list would read."""
    if isinstance(node, dict):
        if "bdata" in node and "dtype" in node:
            values = np.frombuffer(base64.b64decode(node["bdata"]), dtype=node["dtype"])
            shape = tuple(int(n) for n in str(node.get("shape", "-1")).split(","))
            return values.reshape(shape).tolist()
        return {key: plain_arrays(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain_arrays(value) for value in node]
    return node


def figures(at: AppTest) -> list[dict]:
    """The plotly figures a run drew, as figure JSON dicts (data + layout), their typed
    arrays decoded into lists (:func:`plain_arrays`)."""
    return [plain_arrays(json.loads(el.proto.spec)) for el in at.get("plotly_chart")]


@pytest.fixture
def page():
    return open_page
