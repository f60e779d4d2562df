"""Compute once, share with every session; run heavy work one job at a time, in order.

Streamlit runs every visitor's script on a thread of one Python process. When 30 students
press the same button in the same second, ``st.cache_data`` starts 30 computations (it
does not wait for a computation in progress), and 30 threads that each make thousands
of tiny numpy calls hand the interpreter lock back and forth: on the 2-core development
machine about half of the server's CPU went to the kernel's lock wait / wake, and one
generation took 0.5-1.0 s instead of 0.2 s. This module removes both causes:

- **single flight**: identical requests (same ``namespace`` and ``key``) share one
  computation; callers that arrive while it runs wait for it instead of starting their own;
- **bounded heavy-work queues**: CPU-heavy jobs run in FIFO order on worker threads, in
  two lanes: ``"heavy"`` for work a student waits for (generation, Monte Carlo; 2
  workers by default, one per core of a 2-core host; ``SPECDEC_HEAVY_WORKERS`` changes it)
  and ``"background"`` for long measurements nobody should queue behind (the speed
  measurement; 1 worker, niced so that it yields the CPU). At most ``workers`` threads
  per lane do numpy work at once (not one per session); a waiting caller is told its
  position;
- **bounded results**: finished results are kept in one process-wide LRU bounded in
  entries and in bytes; an entry whose key holds text a student typed gets a time to live
  (``ttl_s``) and is dropped after it, so typed text is not kept longer than needed.

API (module-level functions use one process-wide :class:`SharedWork`)::

    value = shared_result(namespace, key, compute, heavy=True, ttl_s=None,
                          on_wait=None, lane="heavy", wait=True)

``key`` is any hashable value made of small scalars and strings (it is the identity of
the request: include every input of ``compute``). ``compute()`` takes no argument.
``heavy=True`` runs it on the worker queue (a Streamlit rerun of the waiting session does
not stop it: the result is still stored for the next rerun); ``heavy=False`` runs it on
the first caller's thread (for light work that only needs the single flight).
``on_wait(status: WaitStatus)`` is called while the caller waits, each time its text changes:
``status.position`` is the place in the queue (1 = next, 0 = running now),
``status.text`` a sentence for a spinner or ``st.status``. An exception raised by
``compute`` reaches every caller that waited for that computation and is not stored:
the next call computes again. :class:`QueueFullError` is raised when ``max_waiting``
jobs already wait in the lane. ``wait=False`` starts the computation (if it is not
stored or running) and returns ``MISSING`` at once: poll ``peek`` later (for example
from an ``st.fragment(run_every=...)``). ``peek(namespace, key)`` returns a stored
result or ``MISSING`` without computing; ``status(namespace, key)`` a
:class:`WaitStatus` while it is queued or running; ``run_heavy(fn, on_wait=...,
lane=...)`` queues work that is not shared; ``snapshot(lane)`` gives a queue's size;
``clear()`` empties the store.

Example (the Losslessness lab's Monte Carlo)::

    box = st.empty()
    result = shared_result(
        "lab.simulate", (p_text, q_text, k, rounds, seed, variant),
        lambda: simulate(...), ttl_s=TEXT_TTL_S,  # typed p and q are in the key
        on_wait=lambda s: box.info(s.text, icon="⏳"))
    box.empty()

Why threads and not a process pool: a process pool would use the second core, but each
job would have to pickle the request (the student's prompt) and the result to another
process, and every worker would load its own copy of the models (the memory goal is
700 MB for the whole server). One worker thread, with BLAS on one thread
(:func:`specdec_core.lm.blas.limit_blas_threads`), leaves the second core to Streamlit's
own work (building and sending every session's page). See docs/PERFORMANCE-load.md.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from .render_gate import released_while_waiting

T = TypeVar("T")
MISSING: Any = object()  # what peek returns for a result that is not stored
CODE_TYPES = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)
DEFAULT_HEAVY_WORKERS = 2
TEXT_TTL_S = 600.0  # keys that hold typed text live at most this long (seconds)
# The background lane starts a job once the heavy lane has been idle this long (seconds),
# or after YIELD_MAX_S at the latest (a class pressing buttons all the time).
YIELD_GRACE_S, YIELD_MAX_S = 1.0, 15.0


class QueueFullError(RuntimeError):
    """Too many heavy jobs wait already: ask the student to try again in a moment."""


@dataclasses.dataclass(frozen=True)
class WaitStatus:
    """What a waiting caller can show: its place in the queue and how long it waited."""

    position: int  # place in the queue: 1 = runs next; 0 = running now
    waiting: int  # jobs waiting in the queue in all
    sharing: int  # callers waiting for this same computation (this one included)
    elapsed_s: float

    @property
    def text(self) -> str:
        shared = f" (shared with {self.sharing - 1} others)" if self.sharing > 1 else ""
        if self.position == 0:
            return f"Running{shared}… {self.elapsed_s:.0f} s"
        return f"Queued: number {self.position} in line{shared}… {self.elapsed_s:.0f} s"


@dataclasses.dataclass
class _Entry:
    value: Any
    nbytes: int
    expires: float  # time.monotonic() deadline; inf = no time to live


class _Flight:
    """One computation in progress, shared by every caller of the same key."""

    __slots__ = ("done", "value", "error", "abandoned", "waiters", "running", "lane")

    def __init__(self, lane: str = "") -> None:
        self.lane = lane
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.abandoned = False  # the light (in-thread) leader was interrupted: retry
        self.waiters = 0
        self.running = False


def estimate_size(value: Any, _depth: int = 0, _seen: set | None = None) -> int:
    """Rough bytes held by ``value``: numpy buffers, strings, containers, dataclasses.

    Shared objects are counted once; the walk stops 8 levels down (deeper parts count
    as their ``sys.getsizeof``). Good enough to bound a cache, not an exact measure.
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) + 112
    size = sys.getsizeof(value, 64)
    if _depth >= 8 or isinstance(value, str | bytes | int | float | bool | type(None)):
        return size
    if isinstance(value, CODE_TYPES):  # modules, classes, functions: code, not data
        return size
    if isinstance(value, dict):
        items = [x for kv in value.items() for x in kv]
    elif isinstance(value, list | tuple | set | frozenset | collections.deque):
        items = list(value)
    elif dataclasses.is_dataclass(value):
        items = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif hasattr(value, "__dict__"):
        items = list(vars(value).values())
    else:
        return size
    return size + sum(estimate_size(x, _depth + 1, seen) for x in items)


class SharedWork:
    """A single-flight result store and a FIFO heavy-work queue (one per process)."""

    def __init__(
        self,
        *,
        max_entries: int = 256,
        max_bytes: int = 64 * 2**20,
        workers: int = 1,
        background_workers: int = 1,
        max_waiting: int = 512,
        poll_s: float = 0.5,
    ) -> None:
        if not (max_entries >= 1 and max_bytes >= 1 and workers >= 1 and max_waiting >= 1):
            raise ValueError("max_entries, max_bytes, workers and max_waiting must be >= 1")
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.workers, self.max_waiting, self.poll_s = workers, max_waiting, poll_s
        self._lock = threading.Lock()
        self._store: collections.OrderedDict[tuple, _Entry] = collections.OrderedDict()
        self._bytes = 0
        self._flights: dict[tuple, _Flight] = {}
        self._lanes = {
            "heavy": _Lane("heavy", workers, self._lock),
            "background": _Lane("background", background_workers, self._lock),
        }
        self._lanes["background"].yields_to = self._lanes["heavy"]
        self.computations = 0  # computations started (for tests and /metrics-like checks)

    # ------------------------------------------------------------------ store
    def peek(self, namespace: str, key: Hashable) -> Any:
        """The stored result for (namespace, key), or ``MISSING``; never computes."""
        with self._lock:
            return self._get((namespace, key))

    def _get(self, full: tuple) -> Any:
        entry = self._store.get(full)
        if entry is None:
            return MISSING
        if entry.expires <= time.monotonic():
            self._drop(full)
            return MISSING
        self._store.move_to_end(full)
        return entry.value

    def _drop(self, full: tuple) -> None:
        entry = self._store.pop(full)
        self._bytes -= entry.nbytes

    def _put(self, full: tuple, value: Any, nbytes: int, ttl_s: float | None) -> None:
        now = time.monotonic()
        for old in [k for k, e in self._store.items() if e.expires <= now]:
            self._drop(old)  # expired keys (typed text) go as soon as anyone stores
        if nbytes > self.max_bytes:
            return  # larger than the whole store: hand it out, do not keep it
        if full in self._store:
            self._drop(full)
        while self._store and (
            len(self._store) >= self.max_entries or self._bytes + nbytes > self.max_bytes
        ):
            self._drop(next(iter(self._store)))  # least recently used first
        expires = now + ttl_s if ttl_s is not None else float("inf")
        self._store[full] = _Entry(value, nbytes, expires)
        self._bytes += nbytes

    def stats(self) -> dict[str, int]:
        """Entries and estimated bytes stored, computations started."""
        with self._lock:
            return {
                "entries": len(self._store),
                "bytes": self._bytes,
                "computations": self.computations,
            }

    def clear(self) -> None:
        """Forget every stored result (computations in progress finish normally)."""
        with self._lock:
            self._store.clear()
            self._bytes = 0

    # ------------------------------------------------------------------ queue
    def snapshot(self, lane: str = "heavy") -> tuple[int, int]:
        """(jobs running, jobs waiting) in a lane's queue right now."""
        with self._lock:
            return self._lanes[lane].running, len(self._lanes[lane].jobs)

    def status(self, namespace: str, key: Hashable) -> WaitStatus | None:
        """Where the computation of (namespace, key) stands, or None when none runs."""
        with self._lock:
            flight = self._flights.get((namespace, key))
            if flight is None:
                return None
            return WaitStatus(
                self._position(flight), len(self._lanes[flight.lane].jobs), flight.waiters, 0.0
            )

    def _position(self, flight: _Flight) -> int:
        if flight.running or flight.done.is_set() or flight.lane not in self._lanes:
            return 0
        for i, (queued, _) in enumerate(self._lanes[flight.lane].jobs):
            if queued is flight:
                return i + 1
        return 0

    def _in_worker(self) -> bool:
        me = threading.current_thread()
        return any(me in lane.threads for lane in self._lanes.values())

    # ------------------------------------------------------------------ entry points
    def shared_result(
        self,
        namespace: str,
        key: Hashable,
        compute: Callable[[], T],
        *,
        heavy: bool = True,
        ttl_s: float | None = None,
        on_wait: Callable[[WaitStatus], None] | None = None,
        lane: str = "heavy",
        wait: bool = True,
    ) -> T:
        """The result of ``compute()`` for (namespace, key), computed once and shared.

        See the module docstring for the contract of each argument. ``wait=False``
        (heavy only) starts the computation if needed and returns ``MISSING`` at once
        unless the result is already stored.
        """
        full = (namespace, key)
        hash(full)  # an unhashable key fails here, in the caller, with Python's TypeError
        start = time.monotonic()
        while True:
            with self._lock:
                value = self._get(full)
                if value is not MISSING:
                    return value
                flight = self._flights.get(full)
                leader = flight is None
                if leader:
                    flight = _Flight()
                    self._flights[full] = flight
                    flight.lane = lane if heavy else ""
                    job = self._job(full, flight, compute, ttl_s)
                    if heavy:
                        self._enqueue(full, flight, job)
                    self.computations += 1
                if not wait and heavy:
                    return MISSING
                flight.waiters += 1
            try:
                if leader and not heavy:
                    job()
                self._wait(flight, start, on_wait)
            finally:
                with self._lock:
                    flight.waiters -= 1
            if flight.abandoned:
                continue  # the in-thread leader was interrupted: compute again
            if flight.error is not None:
                raise flight.error
            return flight.value

    def run_heavy(
        self,
        fn: Callable[[], T],
        *,
        on_wait: Callable[[WaitStatus], None] | None = None,
        lane: str = "heavy",
    ) -> T:
        """Run ``fn()`` on a lane's queue (FIFO) and return its result; not stored."""
        flight = _Flight(lane)
        with self._lock:

            def job() -> None:
                try:
                    flight.value = fn()
                except BaseException as err:  # noqa: BLE001 - handed to the caller
                    flight.error = err
                finally:
                    flight.running = False
                    flight.done.set()

            self._enqueue(None, flight, job)
            self.computations += 1
            flight.waiters = 1
        self._wait(flight, time.monotonic(), on_wait)
        if flight.error is not None:
            raise flight.error
        return flight.value

    def _enqueue(self, full: tuple | None, flight: _Flight, job: Callable[[], None]) -> None:
        # called with self._lock held
        lane = self._lanes[flight.lane]
        if len(lane.jobs) >= self.max_waiting:
            if full is not None:
                del self._flights[full]
            raise QueueFullError(
                f"the server is busy: {len(lane.jobs)} computations are waiting; "
                "try again in a minute."
            )
        lane.jobs.append((flight, job))
        lane.start_workers()
        lane.has_job.notify()

    def _job(self, full, flight, compute, ttl_s) -> Callable[[], None]:
        def job() -> None:
            value, error, abandoned = None, None, False
            try:
                value = compute()
            except Exception as err:  # noqa: BLE001 - handed to every waiting caller
                error = err
            except BaseException:  # a Streamlit rerun / stop of an in-thread leader
                abandoned = True
                if self._in_worker():
                    return  # keep the worker alive; the waiters retry
                raise
            finally:
                with self._lock:
                    if error is None and not abandoned:
                        nbytes = estimate_size(value)
                        self._put(full, value, nbytes, ttl_s)
                    flight.value, flight.error, flight.abandoned = value, error, abandoned
                    flight.running = False
                    self._flights.pop(full, None)
                flight.done.set()

        return job

    def _wait(self, flight: _Flight, start: float, on_wait) -> None:
        shown = None  # on_wait only when what it would show changes (fewer page deltas)
        with released_while_waiting():  # a page waiting for work lets another page draw
            while not flight.done.wait(self.poll_s):
                if on_wait is not None:
                    with self._lock:
                        status = WaitStatus(
                            self._position(flight),
                            len(self._lanes[flight.lane].jobs) if flight.lane else 0,
                            flight.waiters,
                            time.monotonic() - start,
                        )
                    if status.text != shown:
                        shown = status.text
                        on_wait(status)


class _Lane:
    """A FIFO queue of jobs and the worker threads that run them, one job each at a time."""

    def __init__(self, name: str, workers: int, lock: threading.Lock) -> None:
        self.name, self.workers = name, workers
        self.jobs: collections.deque = collections.deque()  # (flight, job) in FIFO order
        self.has_job = threading.Condition(lock)
        self.threads: list[threading.Thread] = []
        self.running = 0
        self.idle_since = time.monotonic()  # when the last job ended (or the lane began)
        self.yields_to: _Lane | None = None  # a lane whose work goes first (see _loop)

    def start_workers(self) -> None:  # called with the lock held
        self.threads = [t for t in self.threads if t.is_alive()]
        for i in range(len(self.threads), self.workers):
            name = f"specdec-{self.name}-{i}"
            thread = threading.Thread(target=self._loop, name=name, daemon=True)
            thread.start()
            self.threads.append(thread)

    def _loop(self) -> None:
        _limit_blas()
        if self.name == "background":  # long measurements yield the CPU to everything else
            _lower_priority()
        while True:
            with self.has_job:
                while not self.jobs:
                    self.has_job.wait()
                self._yield()
                flight, job = self.jobs.popleft()
                flight.running = True
                self.running += 1
            try:
                job()
            finally:
                with self.has_job:
                    self.running -= 1
                    self.idle_since = time.monotonic()

    def _yield(self) -> None:
        """(Lock held.) Wait until ``yields_to`` has been idle YIELD_GRACE_S, at most
        YIELD_MAX_S: a measurement started while a class waits for its runs would take
        the interpreter lock from them (and from the pages they are about to draw)."""
        other, start = self.yields_to, time.monotonic()
        while other is not None and time.monotonic() - start < YIELD_MAX_S:
            quiet = time.monotonic() - other.idle_since
            if not other.jobs and not other.running and quiet >= YIELD_GRACE_S:
                return
            self.has_job.wait(timeout=0.1)


def _lower_priority(niceness: int = 10) -> None:
    """Nice this thread by ``niceness`` more (Linux schedules threads by id). CPU-time
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


def _workers_from_env() -> int:
    """Heavy-lane workers: ``SPECDEC_HEAVY_WORKERS`` (1-8), else 2.

    Two, one per core of the 2-core host: on the development machine 30 different New-seed
    presses went from p95 18.3 s (1 worker) to 9.2 s, and 30 largest Monte Carlo runs from
    13.2 s to 8.1 s (docs/PERFORMANCE-load.md). Many more threads bring back the lock
    hand-off between tiny numpy calls that this queue exists to avoid.
    """
    raw = os.environ.get("SPECDEC_HEAVY_WORKERS", str(DEFAULT_HEAVY_WORKERS))
    ok = raw.isdigit() and 1 <= int(raw) <= 8
    return int(raw) if ok else DEFAULT_HEAVY_WORKERS


WORK = SharedWork(workers=_workers_from_env())


def shared_result(namespace: str, key: Hashable, compute: Callable[[], T], **options) -> T:
    """:meth:`SharedWork.shared_result` on the process-wide :data:`WORK`."""
    return WORK.shared_result(namespace, key, compute, **options)


def status(namespace: str, key: Hashable) -> WaitStatus | None:
    """:meth:`SharedWork.status` on the process-wide :data:`WORK`."""
    return WORK.status(namespace, key)


def run_heavy(fn: Callable[[], T], **options) -> T:
    """:meth:`SharedWork.run_heavy` on the process-wide :data:`WORK`."""
    return WORK.run_heavy(fn, **options)


def peek(namespace: str, key: Hashable) -> Any:
    """:meth:`SharedWork.peek` on the process-wide :data:`WORK`."""
    return WORK.peek(namespace, key)


def snapshot(lane: str = "heavy") -> tuple[int, int]:
    """(running, waiting) jobs of a lane of the process-wide :data:`WORK`."""
    return WORK.snapshot(lane)


def clear() -> None:
    """Forget every result stored by the process-wide :data:`WORK`."""
    WORK.clear()
