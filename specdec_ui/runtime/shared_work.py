"""Compute once, share with every session; run heavy work in order on a few threads.

When 30 students press the same button in the same second, the server should compute once
and keep the CPU for drawing their pages. This module is the one entry point the pages use;
it joins two parts that each read on their own:

- :mod:`specdec_ui.runtime.result_store`: finished results in a bounded LRU (entries and bytes; a
  time to live for keys that hold typed text) and **single flight**: callers of a key that
  is being computed wait for that computation instead of starting their own;
- :mod:`specdec_ui.runtime.work_queue`: **FIFO lanes** on worker threads: ``"heavy"`` for work a
  student waits for (2 workers in the server's :data:`WORK`, ``SPECDEC_HEAVY_WORKERS``),
  ``"background"`` (1 niced worker that yields to the heavy lane) for the speed measurement.

Why not ``st.cache_data``? Streamlit 1.67's caches do hold a per-key lock
(``streamlit/runtime/caching/cache_utils.py``, ``_handle_cache_miss``): a second caller of
the same key waits for the first and then reads its result, and ``max_entries``, ``ttl``
and ``max_size_bytes`` bound the store. What they do not do, and this module does: the
computation runs on the first caller's own script thread, so thirty *different* requests
are thirty computations in thirty threads at once, with no bound, no order and no place in
line to show (:class:`WaitStatus`); an exception is not handed to the callers that waited:
each of them, in turn, takes the lock and computes again; and a computation cannot be
started without waiting for it (``wait=False``) or asked about while it runs (``status``).

API (module-level functions use one process-wide :class:`SharedWork`, :data:`WORK`)::

    value = shared_result(namespace, key, compute, heavy=True, ttl_s=None,
                          on_wait=None, lane="heavy", wait=True)

``key`` is any hashable value made of small scalars and strings (it is the identity of
the request: include every input of ``compute``). ``compute()`` takes no argument.
``heavy=True`` runs it on the lane's queue (a Streamlit rerun of the waiting session does
not stop it: the result is still stored for the next rerun); ``heavy=False`` runs it on
the first caller's thread (for light work that only needs the single flight).
``on_wait(status: WaitStatus)`` is called while the caller waits, each time its text changes:
``status.position`` is the place in the queue (1 = next, 0 = running now),
``status.text`` a sentence for a spinner or ``st.status``. An exception raised by
``compute`` reaches every caller that waited for that computation and is not stored:
the next call computes again. :class:`QueueFullError` is raised when ``max_waiting``
jobs already wait in the lane. ``wait=False`` starts the computation (if it is not
stored or running) and returns ``MISSING`` at once: poll ``peek`` later (for example
from an ``st.fragment(run_every=...)``); an error of such a computation reaches only the
callers that waited for it. ``peek(namespace, key)`` returns a stored result or
``MISSING`` without computing; ``status(namespace, key)`` a :class:`WaitStatus` while it
is queued or running; ``run_heavy(fn, on_wait=..., lane=...)`` queues work that is not
shared; ``snapshot(lane)`` gives a queue's (running, waiting); ``clear()`` empties the store.

Example (the Losslessness lab's Monte Carlo)::

    box = st.empty()
    result = shared_result(
        "lab.simulate", (p_text, q_text, k, rounds, seed, variant),
        lambda: simulate(...), ttl_s=TEXT_TTL_S,  # typed p and q are in the key
        on_wait=lambda s: box.info(s.text, icon="⏳"))
    box.empty()

**The wait hook.** A caller that waits runs inside ``wait_hook()`` (a context-manager
factory; a :class:`SharedWork` of its own does nothing by default). The process-wide
:data:`WORK` is built once, at import, with
:func:`specdec_ui.runtime.render_gate.released_while_waiting`, so a page waiting for shared work
gives its render slot back; no page run installs it again. The render gate is runtime
too (threads and a semaphore): this module imports no page-drawing code and no Streamlit
(``tests/ui/test_runtime_no_streamlit.py``).

**Never from a worker.** A heavy computation that waits (``heavy=True, wait=True``) or
:meth:`SharedWork.run_heavy`, called from one of the queue's own worker threads, raises
:class:`WorkerWaitError` at once: it would wait for a job queued behind the worker that
waits, and with every worker waiting so, for ever. Work already on a worker computes
what it needs there (``heavy=False``: single flight, on its own thread).

The work stays in threads of the server process: a process pool would have to pickle each
request (a student's prompt) and result to another process, and each worker would load its
own copy of the models (the memory goal is 700 MB for the whole server). Only jobs that
carry no typed text go to helper processes (:mod:`specdec_ui.runtime.processes`). See
docs/PERFORMANCE-load.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from specdec_ui.runtime.render_gate import released_while_waiting
from specdec_ui.runtime.result_store import MISSING, TEXT_TTL_S, Flight, ResultStore, estimate_size
from specdec_ui.runtime.work_queue import QueueFullError, WorkQueue, workers_from_env

__all__ = [
    "MISSING",
    "TEXT_TTL_S",
    "QueueFullError",
    "SharedWork",
    "WaitStatus",
    "WorkerWaitError",
    "clear",
    "estimate_size",
    "peek",
    "run_heavy",
    "shared_result",
    "snapshot",
    "status",
]

T = TypeVar("T")
WaitHook = Callable[[], AbstractContextManager]


class WorkerWaitError(RuntimeError):
    """Heavy work that would wait was asked for from a worker thread of the same queue."""


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


class SharedWork:
    """A :class:`ResultStore` and a :class:`WorkQueue` used together (one per process)."""

    def __init__(
        self,
        *,
        max_entries: int = 256,
        max_bytes: int = 64 * 2**20,
        workers: int = 1,
        background_workers: int = 1,
        max_waiting: int = 512,
        poll_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        wait_hook: WaitHook = contextlib.nullcontext,
    ) -> None:
        self.store = ResultStore(max_entries=max_entries, max_bytes=max_bytes, clock=clock)
        self.queue = WorkQueue(
            workers=workers,
            background_workers=background_workers,
            max_waiting=max_waiting,
            clock=clock,
        )
        self.poll_s, self.clock, self.wait_hook = poll_s, clock, wait_hook
        self._count_lock = threading.Lock()
        self._not_shared = 0  # run_heavy jobs started

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

        See the module docstring for the contract of each argument.
        """
        full = (namespace, key)
        hash(full)  # an unhashable key fails here, in the caller, with Python's TypeError
        if heavy and wait:
            self._refuse_on_worker(f"shared_result({namespace!r}, ...)")
        start = self.clock()
        waits = wait or not heavy  # light work always runs in (and waits on) a caller
        while True:
            value, flight, leader = self.store.join(full, wait=waits)
            if value is not MISSING:
                return value
            if leader and heavy:
                self._submit(full, flight, compute, ttl_s, lane=lane, counted=waits)
            if not waits:
                return MISSING
            try:
                if leader and not heavy:
                    self._compute(full, flight, compute, ttl_s)  # here, on this thread
                self._wait(flight, start, on_wait)
            finally:
                self.store.leave(flight)
            if flight.abandoned:
                continue  # the in-thread leader was interrupted: compute again
            if flight.error is not None:
                raise flight.error
            return flight.value

    def _submit(self, full, flight: Flight, compute, ttl_s, *, lane: str, counted: bool) -> None:
        """Queue the leader's computation on ``lane``; a full lane ends the flight with
        :class:`QueueFullError` (a caller that joined it meanwhile gets the error too)."""
        try:
            flight.job = self.queue.submit(
                lambda: self._compute(full, flight, compute, ttl_s), lane=lane
            )
        except QueueFullError as err:
            self.store.finish(full, flight, error=err)
            if counted:
                self.store.leave(flight)
            raise

    def _compute(self, full, flight: Flight, compute, ttl_s) -> None:
        try:
            value = compute()
        except Exception as err:  # noqa: BLE001 - handed to every waiting caller
            self.store.finish(full, flight, error=err)
        except BaseException:  # a Streamlit rerun / stop of an in-thread leader
            self.store.finish(full, flight, abandoned=True)
            if not self.queue.on_worker():
                raise  # keep a worker alive; in a script thread, let the rerun go on
        else:
            self.store.finish(full, flight, value=value, ttl_s=ttl_s)

    def run_heavy(
        self,
        fn: Callable[[], T],
        *,
        on_wait: Callable[[WaitStatus], None] | None = None,
        lane: str = "heavy",
    ) -> T:
        """Run ``fn()`` on a lane's queue (FIFO) and return its result; not stored."""
        self._refuse_on_worker("run_heavy(...)")
        flight = Flight()

        def job() -> None:
            try:
                flight.value = fn()
            except BaseException as err:  # noqa: BLE001 - handed to the caller
                flight.error = err
            finally:
                flight.done.set()

        flight.waiters = 1
        flight.job = self.queue.submit(job, lane=lane)
        with self._count_lock:
            self._not_shared += 1
        self._wait(flight, self.clock(), on_wait)
        if flight.error is not None:
            raise flight.error
        return flight.value

    def _refuse_on_worker(self, call: str) -> None:
        """:class:`WorkerWaitError` when the calling thread is one of the queue's workers."""
        if self.queue.on_worker():
            raise WorkerWaitError(
                f"{call} with heavy=True was called from a worker thread of the work queue: "
                "it would wait for a job queued behind this worker (a deadlock once every "
                "worker waits so). Compute it here with heavy=False, or start it with "
                "wait=False."
            )

    def _wait(self, flight: Flight, start: float, on_wait) -> None:
        shown = None  # on_wait only when what it would show changes (fewer page deltas)
        with self.wait_hook():  # the UI's hook: a waiting page lets another page draw
            while not flight.done.wait(self.poll_s):
                if on_wait is not None:
                    status = self._status(flight, self.clock() - start)
                    if status.text != shown:
                        shown = status.text
                        on_wait(status)

    def _status(self, flight: Flight, elapsed_s: float) -> WaitStatus:
        job = flight.job
        if job is None:  # computed on a caller's thread
            return WaitStatus(0, 0, flight.waiters, elapsed_s)
        return WaitStatus(
            self.queue.position(job), self.queue.waiting(job.lane), flight.waiters, elapsed_s
        )

    def peek(self, namespace: str, key: Hashable) -> Any:
        """The stored result for (namespace, key), or ``MISSING``; never computes."""
        return self.store.get((namespace, key))

    def status(self, namespace: str, key: Hashable) -> WaitStatus | None:
        """Where the computation of (namespace, key) stands, or None when none runs."""
        flight = self.store.flight((namespace, key))
        return None if flight is None else self._status(flight, 0.0)

    def snapshot(self, lane: str = "heavy") -> tuple[int, int]:
        """(jobs running, jobs waiting) in a lane's queue right now."""
        return self.queue.snapshot(lane)

    def stats(self) -> dict[str, int]:
        """Entries and estimated bytes stored, computations started (shared or not)."""
        stats = self.store.stats()
        stats["computations"] += self._not_shared
        return stats

    def clear(self) -> None:
        """Forget every stored result (computations in progress finish normally)."""
        self.store.clear()


# The process's one store and queue; its waits give a heavy page's render slot back
# (installed here, once: no page run installs it again).
WORK = SharedWork(workers=workers_from_env(), wait_hook=released_while_waiting)


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
