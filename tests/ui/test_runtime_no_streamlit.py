"""The server's runtime imports without Streamlit (issue 26, item 4).

The store, the queue, the render gate, the helper processes, the figure cache, the shared
work and the Model pair lab's work are threads, locks and numpy: a helper process, a
benchmark or a test can use them without a Streamlit installed, and nothing of the page
machinery leaks into them. Each module is imported in a fresh interpreter in which
``streamlit`` and ``plotly`` are blocked (``sys.modules[name] = None`` makes every import of
them raise ImportError).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = (  # the runtime room, and the plain-data and pure modules it and the work use
    "runtime.result_store",
    "runtime.work_queue",
    "runtime.render_gate",
    "runtime.processes",
    "runtime.helper",
    "runtime.figure_cache",
    "runtime.shared_work",
    "model_pairs.work",
    "presets",
    "kit.share",
    "kit.text",
)
BLOCKED = ("streamlit", "plotly")


def _import_blocked(module: str) -> subprocess.CompletedProcess:
    """Import ``module`` in a new interpreter with Streamlit and plotly blocked."""
    code = (
        "import sys\n"
        f"for name in {BLOCKED!r}:\n"
        "    sys.modules[name] = None\n"
        f"import {module}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{BLOCKED!r} and sys.modules[m] is not None)\n"
        "print(loaded)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", RUNTIME)
def test_a_runtime_module_imports_with_streamlit_blocked(name):
    done = _import_blocked(f"specdec_ui.{name}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_block_would_catch_a_module_that_needs_streamlit():
    """The check can fail: a page module, which draws with Streamlit, does not import."""
    done = _import_blocked("specdec_ui.kit.widgets")
    assert done.returncode != 0
    assert "ModuleNotFoundError" in done.stderr or "ImportError" in done.stderr
