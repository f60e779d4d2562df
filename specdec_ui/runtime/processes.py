"""Helper processes for the CPU-heavy work that carries no student text.

Sessions are threads of one interpreter, so two heavy jobs in two threads still take
turns on its lock. A helper process has a lock of its own and runs on the other core:
the speed measurement of the Model pair lab (``"speed"``: one process, niced, so it
never competes with the sessions) and the preset Monte Carlo runs of the labs
(``"simulate"``: one process per core). Only names from fixed lists, numbers of the
shipped presets and integers (K, rounds, seed) cross to a helper, and only computed
numbers come back (pickled between this server and its own child over a pipe); a
student's typed text never does, so runs of typed p and q stay in a thread. A helper
runs only the functions of :data:`specdec_ui.runtime.helper.PRODUCTION_JOBS`.

A helper is a fresh interpreter running ``python -m specdec_ui.runtime.helper``, not a
``multiprocessing`` child: Streamlit puts each page script in ``sys.modules["__main__"]``,
and a spawned child re-runs that module first, so it would run a page in bare mode.

The helpers start WARM_UP_DELAY_S after the server draws its first page
(:func:`warm_up`, called by ``kit.widgets.page_setup``), in the background: not at once,
because new interpreters importing numpy slowed the first class's first page from
2.5 s to 4.1 s, and not on the first click, which then waited for them. They are kept,
about 90 MB each. If a helper cannot start or dies, :func:`run_apart` runs the job in
the calling thread instead, and a later call starts a new helper.

Every call has its pool's time limit (:attr:`PoolSpec.timeout_s`): a helper that has not
answered by then is killed and replaced, and :func:`run_apart` raises
:class:`HelperTimeoutError`, whose message is written for the student (a page catches it
where it catches :class:`specdec_ui.runtime.work_queue.QueueFullError` and shows it the same way).
The limits are wide: measured on the 2-core development machine (load average about 2), a
fresh helper's first call (start, imports, model loading and the job) took at most 3.5 s
for a speed measurement (K = 8 for five pairs, K = 1 for two, T = 0 and 2) and 0.6 s for
the largest preset Monte Carlo (500,000 rounds, K = 8, every lab preset and variant;
0.04-0.11 s once warm).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import TypeVar

from specdec_ui.runtime.helper import PRODUCTION_JOBS, job_name

T = TypeVar("T")
WARM_UP_DELAY_S = 20.0
ROOT = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class PoolSpec:
    """A pool of helpers: how many, how niced, how long one call may take, and the words
    of :class:`HelperTimeoutError` for it."""

    helpers: int
    niceness: int
    timeout_s: float
    job: str  # what the student asked for, e.g. "simulation"
    retry: str  # when it is tried again, e.g. "when you press Run again"


POOLS = {
    # about 35 x the slowest measurement seen (3.5 s, a fresh helper), for a niced helper
    # on a server busy with a class
    "speed": PoolSpec(1, 10, 120.0, "speed measurement", "when you open this page again"),
    # about 100 x the largest preset run with a fresh helper (0.6 s)
    "simulate": PoolSpec(2, 0, 60.0, "simulation", "when you press “Run simulation” again"),
}


class HelperTimeoutError(RuntimeError):
    """A helper did not answer within its pool's ``timeout_s``; it was killed (a new one
    starts on the next call). ``str(err)`` is a sentence for the student, e.g. "The
    simulation did not finish in 60 s; the server is very busy. It will be tried again
    when you press “Run simulation” again." ``job`` and ``timeout_s`` are attributes."""

    def __init__(self, spec: PoolSpec) -> None:
        self.job, self.timeout_s = spec.job, spec.timeout_s
        super().__init__(
            f"The {spec.job} did not finish in {spec.timeout_s:g} s; the server is very "
            f"busy. It will be tried again {spec.retry}."
        )


class _Helper:
    """One helper interpreter and the pipe to it (used by one caller at a time)."""

    def __init__(self, niceness: int, extra_jobs: Iterable[str] = ()) -> None:
        ours, theirs = Pipe()
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        command = [
            sys.executable,
            "-m",
            "specdec_ui.runtime.helper",
            str(theirs.fileno()),
            str(niceness),
        ]
        self.process = subprocess.Popen(
            [*command, *sorted(extra_jobs)],
            cwd=ROOT,
            env=env,
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.conn: Connection = ours

    def call(
        self, fn: Callable, args: tuple, kwargs: dict, timeout_s: float
    ) -> tuple[bool, object]:
        """(True, fn(*args, **kwargs)) computed in the helper, or (False, the exception
        it raised). ``TimeoutError``: no answer within ``timeout_s`` (close this helper: a
        late answer would be read by the next call); EOFError / OSError: the helper or
        its pipe is gone."""
        self.conn.send((fn.__module__, fn.__qualname__, args, kwargs))
        if not self.conn.poll(timeout_s):
            raise TimeoutError(f"no answer from the helper in {timeout_s} s")
        return self.conn.recv()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(timeout=5)  # reaped, not left a zombie


class _Pool:
    """Up to ``spec.helpers`` helpers; a caller takes an idle one (or starts one) and
    gives it back. ``extra_jobs``: functions its helpers may run besides
    :data:`~specdec_ui.runtime.helper.PRODUCTION_JOBS` (tests only: the server's pools have
    none)."""

    def __init__(self, spec: PoolSpec, extra_jobs: Iterable[str] = ()) -> None:
        self.spec, self.size, self.timeout_s = spec, spec.helpers, spec.timeout_s
        self.extra_jobs = frozenset(extra_jobs)
        self.jobs = PRODUCTION_JOBS | self.extra_jobs
        self.idle: list[_Helper] = []
        self.started = 0
        self.waiting = 0  # callers waiting for a busy helper
        self.changed = threading.Condition()

    def take(self) -> _Helper:
        """An idle helper, a new one while fewer than ``size`` run, or the next one given
        back or discarded (a helper that died frees a place)."""
        with self.changed:
            self.waiting += 1
            while not self.idle and self.started >= self.size:
                self.changed.wait()
            self.waiting -= 1
            if self.idle:
                return self.idle.pop()
            self.started += 1
        try:
            return _Helper(self.spec.niceness, self.extra_jobs)
        except OSError:
            self._forget()
            raise

    def give_back(self, helper: _Helper) -> None:
        with self.changed:
            self.idle.append(helper)
            self.changed.notify()

    def discard(self, helper: _Helper) -> None:
        helper.close()
        self._forget()

    def _forget(self) -> None:
        with self.changed:
            self.started -= 1
            self.changed.notify()


_pools = {name: _Pool(spec) for name, spec in POOLS.items()}


def run_apart(pool: str, fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)`` in a helper of ``pool`` (a name of :data:`POOLS`), or here
    if no helper can run it. ``fn`` must be one of the pool's jobs (else PermissionError);
    errors it raises reach the caller as they are. :class:`HelperTimeoutError` when the
    helper does not answer within the pool's ``timeout_s``."""
    owner = _pools[pool]
    if job_name(fn) not in owner.jobs:
        raise PermissionError(f"{job_name(fn)} is not a job of the {pool!r} helpers")
    try:
        helper = owner.take()
    except OSError:
        return fn(*args, **kwargs)
    try:
        ok, value = helper.call(fn, args, kwargs, owner.timeout_s)
    except TimeoutError:  # before OSError, its base class: the helper hangs or is starved
        owner.discard(helper)
        raise HelperTimeoutError(owner.spec) from None
    except (EOFError, OSError):  # the helper died or its pipe broke: not an error of fn
        owner.discard(helper)
        return fn(*args, **kwargs)
    owner.give_back(helper)
    if not ok:
        raise value  # fn's own error (even an OSError): the helper itself is fine
    return value


_warmed = threading.Event()


def warm_up(delay_s: float | None = None) -> threading.Timer | None:
    """Start every pool's helpers ``delay_s`` (default WARM_UP_DELAY_S) from now, in the
    background, once per server; returns at once: the timer, or None when an earlier
    call started it."""
    if _warmed.is_set():
        return None
    _warmed.set()
    timer = threading.Timer(WARM_UP_DELAY_S if delay_s is None else delay_s, _start_all)
    timer.daemon = True  # never holds up the server's (or a test run's) exit
    timer.start()
    return timer


def _start_all() -> None:
    for pool in _pools.values():
        helpers = []
        with contextlib.suppress(OSError):
            while pool.started < pool.size:
                helpers.append(pool.take())
        for helper in helpers:
            pool.give_back(helper)
