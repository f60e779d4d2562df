"""Helper processes for the CPU-heavy work that carries no student text.

Sessions are threads of one interpreter, so two heavy jobs in two threads still take
turns on its lock. A helper process has a lock of its own and runs on the other core:
the speed measurement of the Model pair lab (``"speed"``: one process, niced, so it
never competes with the sessions) and the preset Monte Carlo runs of the labs
(``"simulate"``: one process per core). Only names from fixed lists, numbers of the
shipped presets and integers (K, rounds, seed) cross to a helper, and only computed
numbers come back (pickled between this server and its own child over a pipe); a
student's typed text never does, so runs of typed p and q stay in a thread.

A helper is a fresh interpreter running ``python -m specdec_ui.helper``, not a
``multiprocessing`` child: Streamlit puts each page script in ``sys.modules["__main__"]``,
and a spawned child re-runs that module first, so it would run a page in bare mode.

The helpers start WARM_UP_DELAY_S after the server draws its first page
(:func:`warm_up`, called by ``widgets.page_setup``), in the background: not at once,
because new interpreters importing numpy slowed the first class's first page from
2.5 s to 4.1 s, and not on the first click, which then waited for them. They are kept,
about 90 MB each. If a helper cannot start or dies, :func:`run_apart` runs the job in
the calling thread instead, and a later call starts a new helper.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

POOLS = {"speed": (1, 10), "simulate": (2, 0)}  # name -> (helpers, added niceness)
WARM_UP_DELAY_S = 20.0
ROOT = Path(__file__).resolve().parent.parent


class _Helper:
    """One helper interpreter and the pipe to it (used by one caller at a time)."""

    def __init__(self, niceness: int) -> None:
        ours, theirs = Pipe()
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "specdec_ui.helper", str(theirs.fileno()), str(niceness)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL
        )
        theirs.close()
        self.conn: Connection = ours

    def call(self, fn: Callable, args: tuple, kwargs: dict) -> tuple[bool, object]:
        """(True, fn(*args, **kwargs)) computed in the helper, or (False, the exception
        it raised); EOFError / OSError here mean the helper or its pipe is gone."""
        self.conn.send((fn.__module__, fn.__qualname__, args, kwargs))
        return self.conn.recv()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(timeout=5)  # reaped, not left a zombie


class _Pool:
    """Up to ``size`` helpers; a caller takes an idle one (or starts one) and gives it back."""

    def __init__(self, size: int, niceness: int) -> None:
        self.size, self.niceness = size, niceness
        self.idle: queue.SimpleQueue[_Helper] = queue.SimpleQueue()
        self.started = 0
        self.lock = threading.Lock()

    def take(self) -> _Helper:
        """An idle helper, a new one while fewer than ``size`` run, or the next one given
        back (looking again every second: a helper that died frees a place)."""
        while True:
            with self.lock:
                if self.idle.empty() and self.started < self.size:
                    self.started += 1
                    try:
                        return _Helper(self.niceness)
                    except OSError:
                        self.started -= 1
                        raise
            try:
                return self.idle.get(timeout=1.0)
            except queue.Empty:
                continue

    def give_back(self, helper: _Helper) -> None:
        self.idle.put(helper)

    def discard(self, helper: _Helper) -> None:
        helper.close()
        with self.lock:
            self.started -= 1


_pools = {name: _Pool(*spec) for name, spec in POOLS.items()}


def run_apart(pool: str, fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` in a helper of ``pool`` (a name of :data:`POOLS`), or here
    if no helper can run it. ``fn`` must be a module-level function; errors it raises
    reach the caller as they are."""
    owner = _pools[pool]
    try:
        helper = owner.take()
    except OSError:
        return fn(*args, **kwargs)
    try:
        ok, value = helper.call(fn, args, kwargs)
    except (EOFError, OSError):  # the helper died or its pipe broke: not an error of fn
        owner.discard(helper)
        return fn(*args, **kwargs)
    owner.give_back(helper)
    if not ok:
        raise value  # fn's own error (even an OSError): the helper itself is fine
    return value


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
    for pool in _pools.values():
        helpers = []
        with contextlib.suppress(OSError):
            while pool.started < pool.size:
                helpers.append(pool.take())
        for helper in helpers:
            pool.give_back(helper)
