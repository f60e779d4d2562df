"""The one figure cache: a figure built once per server for its inputs, shared read-only.

Every page that draws a figure whose inputs many students share (a preset, the default
run, the same slider positions) asks :func:`shared_figure` for it. The figure is built on
the first caller's thread and kept in the process-wide result store of
:mod:`specdec_ui.runtime.shared_work` (bounded in entries and bytes; single flight, so 30
students asking at once wait for one build). ``st.plotly_chart`` serialises a copy, so
no session can change what another sees, and a figure shown to students holds still from
visit to visit. A key that holds text a student typed (labels, p and q) is ``typed``: it
expires after ``runtime.shared_work.TEXT_TTL_S``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from specdec_ui.runtime.shared_work import TEXT_TTL_S, shared_result

Figure = TypeVar("Figure")


def shared_figure(
    namespace: str, key: Hashable, build: Callable[[], Figure], *, typed: bool = False
) -> Figure:
    """``build()`` once per (``namespace``, ``key``) and server; the same object after.

    ``key`` is made of small scalars, strings and tuples: every input of ``build``.
    """
    return shared_result(
        f"figure.{namespace}", key, build, heavy=False, ttl_s=TEXT_TTL_S if typed else None
    )
