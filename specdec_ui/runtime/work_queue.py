"""Heavy work in order: FIFO lanes of jobs, each run by a few worker threads.

Streamlit runs every visitor's script on a thread of one Python process. Thirty threads
that each make thousands of tiny numpy calls hand the interpreter lock back and forth: on
the 2-core development machine about half of the server's CPU went to the kernel's lock
wait / wake, and one generation took 0.5-1.0 s instead of 0.2 s. Here at most ``workers``
threads per lane do such work at once, in the order it was asked for, and a job that waits
knows its place in the line.

Two lanes (:class:`WorkQueue`):

- ``"heavy"``: work a student waits for (a generation, a Monte Carlo run); ``workers``
  threads (the server uses 2, one per core of a 2-core host; ``SPECDEC_HEAVY_WORKERS``
  changes it, :func:`workers_from_env`);
- ``"background"``: long measurements nobody should queue behind (the speed measurement);
  ``background_workers`` threads (1), niced by 10 so that they yield the CPU, and a job
  starts only once the heavy lane has been idle ``yield_grace_s`` (or after waiting
  ``yield_max_s``, when a class presses buttons all the time).

Every worker keeps numpy's BLAS on one thread (:func:`specdec_core.lm.blas.limit_blas_threads`:
tiny matrices, no oversubscription). A lane holds at most ``max_waiting`` waiting jobs;
:meth:`WorkQueue.submit` raises :class:`QueueFullError` beyond that.

API::

    job = queue.submit(fn, lane="heavy")   # fn() runs on a worker; its result is fn's business
    queue.position(job)                     # 1 = runs next, 2, ...; 0 = running or done
    queue.waiting("heavy"), queue.snapshot("heavy")  # waiting jobs; (running, waiting)
    queue.on_worker()                       # is this thread one of the workers?

``clock`` (default ``time.monotonic``) is what the background lane's yield reads; tests pass
a clock they move by hand.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable

DEFAULT_HEAVY_WORKERS = 2
# The background lane starts a job once the heavy lane has been idle YIELD_GRACE_S, or after
# waiting YIELD_MAX_S at the latest (seconds of ``clock``).
YIELD_GRACE_S, YIELD_MAX_S = 1.0, 15.0
YIELD_POLL_S = 0.1  # how often a yielding worker looks at the heavy lane again
BACKGROUND_NICENESS = 10


class QueueFullError(RuntimeError):
    """Too many heavy jobs wait already: ask the student to try again in a moment."""


class Job:
    """One queued callable; ``running`` turns True when a worker takes it."""

    __slots__ = ("fn", "lane", "running")

    def __init__(self, fn: Callable[[], object], lane: str) -> None:
        self.fn, self.lane, self.running = fn, lane, False


class WorkQueue:
    """The heavy and the background lane of one process (see the module docstring)."""

    def __init__(
        self,
        *,
        workers: int = 1,
        background_workers: int = 1,
        max_waiting: int = 512,
        clock: Callable[[], float] = time.monotonic,
        yield_grace_s: float = YIELD_GRACE_S,
        yield_max_s: float = YIELD_MAX_S,
    ) -> None:
        if not (workers >= 1 and background_workers >= 1 and max_waiting >= 1):
            raise ValueError("workers, background_workers and max_waiting must be >= 1")
        self.max_waiting = max_waiting
        self._lock = threading.Lock()
        heavy = _Lane("heavy", workers, self._lock, clock)
        background = _Lane("background", background_workers, self._lock, clock)
        background.niceness = BACKGROUND_NICENESS
        background.yields_to, background.grace_s, background.max_s = (
            heavy,
            yield_grace_s,
            yield_max_s,
        )
        self._lanes = {"heavy": heavy, "background": background}

    def submit(self, fn: Callable[[], object], *, lane: str = "heavy") -> Job:
        """Queue ``fn`` at the end of ``lane``; :class:`QueueFullError` when it is full."""
        job = Job(fn, lane)
        with self._lock:
            queue = self._lanes[lane]
            if len(queue.jobs) >= self.max_waiting:
                raise QueueFullError(
                    f"the server is busy: {len(queue.jobs)} computations are waiting; "
                    "try again in a minute."
                )
            queue.jobs.append(job)
            queue.start_workers()
            queue.has_job.notify()
        return job

    def position(self, job: Job) -> int:
        """``job``'s place in its lane: 1 = runs next; 0 = running now or done."""
        with self._lock:
            if job.running:
                return 0
            for i, queued in enumerate(self._lanes[job.lane].jobs):
                if queued is job:
                    return i + 1
            return 0

    def waiting(self, lane: str = "heavy") -> int:
        """Jobs waiting in ``lane`` (not counting those running)."""
        with self._lock:
            return len(self._lanes[lane].jobs)

    def snapshot(self, lane: str = "heavy") -> tuple[int, int]:
        """(jobs running, jobs waiting) in ``lane`` right now."""
        with self._lock:
            return self._lanes[lane].running, len(self._lanes[lane].jobs)

    def on_worker(self) -> bool:
        """Whether the calling thread is one of this queue's workers."""
        me = threading.current_thread()
        return any(me in lane.threads for lane in self._lanes.values())


class _Lane:
    """A FIFO of jobs and the worker threads that run them, one job per worker at a time."""

    def __init__(self, name: str, workers: int, lock: threading.Lock, clock) -> None:
        self.name, self.workers, self.clock = name, workers, clock
        self.jobs: collections.deque[Job] = collections.deque()
        self.has_job = threading.Condition(lock)
        self.threads: list[threading.Thread] = []
        self.running = 0
        self.idle_since = clock()  # when the last job ended (or the lane began)
        self.niceness = 0
        self.yields_to: _Lane | None = None  # a lane whose work goes first (see _may_start)
        self.grace_s = self.max_s = 0.0

    def start_workers(self) -> None:  # called with the lock held
        self.threads = [t for t in self.threads if t.is_alive()]
        for i in range(len(self.threads), self.workers):
            name = f"specdec-{self.name}-{i}"
            thread = threading.Thread(target=self._loop, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)

    def _loop(self) -> None:
        _limit_blas()
        if self.niceness:
            lower_priority(self.niceness)
        while True:
            with self.has_job:
                job = self._take()
            try:
                job.fn()
            finally:
                with self.has_job:
                    self.running -= 1
                    self.idle_since = self.clock()

    def _take(self) -> Job:
        """(Lock held.) Wait for a job this lane may start now, and take it."""
        first_seen = None  # when this worker first saw a job it could not start yet
        while True:
            if self.jobs:
                first_seen = self.clock() if first_seen is None else first_seen
                if self._may_start(first_seen):
                    job = self.jobs.popleft()
                    job.running = True
                    self.running += 1
                    return job
            self.has_job.wait(timeout=YIELD_POLL_S if self.jobs else None)

    def _may_start(self, first_seen: float) -> bool:
        """True unless ``yields_to`` is busy or was busy less than ``grace_s`` ago (and
        this lane has waited less than ``max_s``): a measurement started while a class
        waits for its runs would take the interpreter lock from them."""
        other = self.yields_to
        if other is None:
            return True
        now = self.clock()
        if now - first_seen >= self.max_s:
            return True
        return not other.jobs and not other.running and now - other.idle_since >= self.grace_s


def lower_priority(niceness: int) -> None:
    """Nice the calling thread by ``niceness`` more (Linux schedules threads by id). CPU-time
    measurements on it are not distorted by this: a thread's CPU time counts only while
    it runs."""
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + niceness))
    except (AttributeError, OSError):
        pass


def _limit_blas() -> None:
    """Worker threads keep numpy's BLAS on one thread (tiny matrices; no oversubscription)."""
    try:
        from specdec_core.lm.blas import limit_blas_threads

        limit_blas_threads(1)
    except (ImportError, OSError):
        pass


def workers_from_env() -> int:
    """Heavy-lane workers: ``SPECDEC_HEAVY_WORKERS`` (1-8), else 2.

    Two, one per core of the 2-core host: on the development machine 30 different New-seed
    presses went from p95 18.3 s (1 worker) to 9.2 s, and 30 largest Monte Carlo runs from
    13.2 s to 8.1 s (docs/PERFORMANCE-load.md). Many more threads bring back the lock
    hand-off between tiny numpy calls that this queue exists to avoid.
    """
    raw = os.environ.get("SPECDEC_HEAVY_WORKERS", str(DEFAULT_HEAVY_WORKERS))
    ok = raw.isdigit() and 1 <= int(raw) <= 8
    return int(raw) if ok else DEFAULT_HEAVY_WORKERS
