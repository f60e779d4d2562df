"""Helper processes for the CPU-heavy work that carries no student text.

Sessions are threads of one interpreter, so two heavy jobs in two threads still take
turns on its lock. A helper process has a lock of its own and runs on the other core:
the speed measurement of the Model pair lab (``"speed"``: one process, niced, so it
never competes with the sessions) and the preset Monte Carlo runs of the labs
(``"simulate"``: one process per core). Only names from fixed lists, numbers of the
shipped presets and integers (K, rounds, seed) cross to a helper, and only computed
numbers come back (pickled by the standard library between this server and its own
child); a student's typed text never does, so runs of typed p and q stay in a thread.

The pools start WARM_UP_DELAY_S after the server draws its first page (:func:`warm_up`,
called by ``widgets.page_setup``), in the background: not at once, because three new
interpreters importing numpy slowed the first class's first page from 2.5 s to 4.1 s,
and not on the first click, which then waited for them. ("spawn": a fresh interpreter,
never a fork of a threaded server.) They are kept, about 95 MB each. If a helper cannot
start or dies, :func:`run_apart` runs the job in the calling thread instead, and the next
call starts a new pool.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")

POOLS = {"speed": (1, 10), "simulate": (2, 0)}  # name -> (processes, added niceness)
WARM_UP_DELAY_S = 20.0

_pools: dict[str, ProcessPoolExecutor] = {}
_lock = threading.Lock()


def _started(niceness: int) -> None:
    """In a helper: one BLAS thread (no oversubscription) and the pool's niceness."""
    from specdec_core.lm.blas import limit_blas_threads

    with contextlib.suppress(OSError):
        limit_blas_threads(1)
    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)


def _pool(name: str) -> ProcessPoolExecutor:
    with _lock:
        if name not in _pools:
            processes, niceness = POOLS[name]
            _pools[name] = ProcessPoolExecutor(
                max_workers=processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_started,
                initargs=(niceness,),
            )
        return _pools[name]


def _nothing() -> None:
    """A job that only makes a helper start (and import this module's dependencies)."""


_warmed = threading.Event()


def warm_up(delay_s: float | None = None) -> None:
    """Start every pool's helpers ``delay_s`` (default WARM_UP_DELAY_S) from now, in the
    background, once per server; returns at once."""
    if _warmed.is_set():
        return
    _warmed.set()
    timer = threading.Timer(WARM_UP_DELAY_S if delay_s is None else delay_s, _start_all)
    timer.daemon = True  # never holds up the server's (or a test run's) exit
    timer.start()


def _start_all() -> None:
    with contextlib.suppress(OSError, RuntimeError):
        for name, (processes, _) in POOLS.items():
            pool = _pool(name)
            for _ in range(processes):
                pool.submit(_nothing)


def run_apart(pool: str, fn: Callable[..., T], *args) -> T:
    """``fn(*args)`` in a helper of ``pool`` (a name of :data:`POOLS`), or here if none
    can run it. ``fn`` must be a module-level function; errors it raises reach the
    caller as they are."""
    try:
        future = _pool(pool).submit(fn, *args)
    except (BrokenProcessPool, OSError, RuntimeError):
        return _restart_and_run_here(pool, fn, args)
    try:
        return future.result()
    except (BrokenProcessPool, OSError):  # the helper died (not an error of fn)
        return _restart_and_run_here(pool, fn, args)


def _restart_and_run_here(pool: str, fn: Callable[..., T], args: tuple) -> T:
    with _lock:
        broken = _pools.pop(pool, None)
    if broken is not None:
        broken.shutdown(wait=False, cancel_futures=True)
    return fn(*args)
