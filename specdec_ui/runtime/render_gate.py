"""One heavy page drawn at a time, so that a class pressing the same button does not
freeze every other page.

Sessions are threads of one interpreter. When 30 students press "New seed" on the Model
pair lab, their shared run is ready for all of them at once and 30 page scripts start
drawing together (plotly figures, metrics: tens of milliseconds of Python each). They
take turns on the interpreter lock with everyone else, so a student on the Round page
waited as long as the whole wave (2.5 s measured, goal < 1 s). The pages marked
``heavy`` in :mod:`specdec_ui.registry` (the three labs) therefore draw their body inside
``with render_slot():``: at most ``RENDER_SLOTS`` of them draw at once and the others
wait without using the CPU, so light pages share the CPU with one heavy page, not 30.
The gate sits in the page files, not in ``app.py``'s router, so that it also holds where
a page runs on its own (``AppTest.from_file``).

A page that waits for shared work (:mod:`specdec_ui.runtime.shared_work`) gives its slot back
while it waits (:func:`released_while_waiting`: the wait hook that
``runtime.shared_work.WORK`` is built with, once per process), so a student whose run is queued
never holds up one whose run is ready. A slot not free within ``MAX_WAIT_S`` is skipped
(the page draws anyway): a stuck page can slow the others, never stop them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

RENDER_SLOTS = 1  # heavy pages drawing at once (the interpreter lock runs one anyway)
MAX_WAIT_S = 10.0

_slots = threading.BoundedSemaphore(RENDER_SLOTS)
_held = threading.local()  # .slot: True while this thread holds a slot


@contextlib.contextmanager
def render_slot() -> Iterator[None]:
    """Run the block holding one of the ``RENDER_SLOTS`` (or without, after MAX_WAIT_S)."""
    got = _slots.acquire(timeout=MAX_WAIT_S)
    _held.slot = got
    try:
        yield
    finally:
        if getattr(_held, "slot", False):
            _slots.release()
        _held.slot = False


@contextlib.contextmanager
def released_while_waiting() -> Iterator[None]:
    """Give this thread's slot back for the block (a wait for shared work), then take
    one again; a thread without a slot just runs the block."""
    if not getattr(_held, "slot", False):
        yield
        return
    _held.slot = False
    _slots.release()
    try:
        yield
    finally:
        _held.slot = _slots.acquire(timeout=MAX_WAIT_S)
