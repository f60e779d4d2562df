"""Settings for the whole suite.

Hypothesis draws its examples from a fixed seed (``derandomize``) and keeps no example
database, so a run on a clean clone (CI) tries exactly what a run here tried: a property
test fails or passes the same way every time, and a new counterexample is found by
widening a strategy, never by chance.
"""

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.load_profile("repeatable")


# --- parallel runs (pytest-xdist; pyproject's addopts says `-n auto --dist loadgroup`) ---------

MAX_WORKERS = 4  # each browser-tier worker runs its own Streamlit server and Chromium


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core, at most :data:`MAX_WORKERS`.

    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides it, ``-n N`` sets it, ``-n 0`` runs in this
    process.
    """
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads the variable itself
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_WORKERS))
