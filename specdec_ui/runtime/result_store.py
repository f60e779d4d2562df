"""Finished results, kept once per process, and the computations in progress (single flight).

:class:`ResultStore` maps a full key ``(namespace, key)`` to

- a stored result: a least-recently-used store bounded in entries (``max_entries``) and in
  estimated bytes (``max_bytes``, :func:`estimate_size`); a result larger than the whole
  store is handed out and not kept. An entry may have a time to live (``ttl_s``): keys that
  hold text a student typed get :data:`TEXT_TTL_S`, so typed text is not kept longer than
  needed. Expired entries go when they are read and whenever anything is stored;
- or a :class:`Flight`: the one computation in progress for that key. The first caller
  (the leader) starts it; callers that arrive while it runs join it and wait on
  ``flight.done`` instead of starting their own.

The store does not compute anything itself: :mod:`specdec_ui.runtime.shared_work` runs the
computation (on the caller's thread or on :mod:`specdec_ui.runtime.work_queue`) and reports its end
with :meth:`ResultStore.finish`, which sizes the value *before* taking the lock that every
lookup and status call needs.

API::

    value, flight, leader = store.join(full, wait=True)  # stored value, or the flight
    store.finish(full, flight, value=v, ttl_s=None)       # or error=err / abandoned=True
    store.leave(flight)                                   # a waiter stops waiting
    store.get(full), store.flight(full), store.stats(), store.clear()

``clock`` (default ``time.monotonic``) is what the times to live are measured with; tests
pass a clock they move by hand.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import threading
import time
import types
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

MISSING: Any = object()  # what a lookup returns for a result that is not stored
TEXT_TTL_S = 600.0  # keys that hold typed text live at most this long (seconds)
CODE_TYPES = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
)
FullKey = tuple[str, Hashable]  # (namespace, key)


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


class Flight:
    """One computation in progress, shared by every caller of the same key.

    ``done`` is set once ``value``/``error`` hold its outcome; ``abandoned`` means the
    leader computing on its own thread was interrupted (a Streamlit rerun): the waiters
    try again. ``job`` is the queue's handle while it runs on a worker (None on the
    caller's thread), for the waiters' place in the line.
    """

    __slots__ = ("done", "value", "error", "abandoned", "waiters", "job")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.waiters = 0  # callers waiting for it now (the leader included)
        self.job: Any = None


@dataclasses.dataclass
class _Entry:
    value: Any
    nbytes: int
    expires: float  # clock() deadline; inf = no time to live


class ResultStore:
    """Stored results (bounded LRU with times to live) and flights, behind one lock."""

    def __init__(
        self,
        *,
        max_entries: int = 256,
        max_bytes: int = 64 * 2**20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (max_entries >= 1 and max_bytes >= 1):
            raise ValueError("max_entries and max_bytes must be >= 1")
        self.max_entries, self.max_bytes, self.clock = max_entries, max_bytes, clock
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[FullKey, _Entry] = collections.OrderedDict()
        self._bytes = 0
        self._flights: dict[FullKey, Flight] = {}
        self.started = 0  # flights started (computations), for tests and stats

    def get(self, full: FullKey) -> Any:
        """The stored result, or ``MISSING``; never computes."""
        with self._lock:
            return self._get(full)

    def flight(self, full: FullKey) -> Flight | None:
        """The computation in progress for ``full``, or None."""
        with self._lock:
            return self._flights.get(full)

    def join(self, full: FullKey, *, wait: bool = True) -> tuple[Any, Flight | None, bool]:
        """``(value, None, False)`` when stored; else ``(MISSING, flight, leader)``:
        ``leader`` is True for the caller that has just created the flight and must start
        the computation. ``wait``: count the caller among the waiters (then it must call
        :meth:`leave` when it stops waiting)."""
        with self._lock:
            value = self._get(full)
            if value is not MISSING:
                return value, None, False
            flight = self._flights.get(full)
            leader = flight is None
            if leader:
                flight = self._flights[full] = Flight()
                self.started += 1
            if wait:
                flight.waiters += 1
            return MISSING, flight, leader

    def leave(self, flight: Flight) -> None:
        """A caller stops waiting for ``flight`` (it has ended, or the caller gave up)."""
        with self._lock:
            flight.waiters -= 1

    def finish(
        self,
        full: FullKey,
        flight: Flight,
        *,
        value: Any = None,
        error: BaseException | None = None,
        abandoned: bool = False,
        ttl_s: float | None = None,
    ) -> None:
        """End ``flight``: store ``value`` (unless it failed or was abandoned), hand the
        outcome to its waiters, and let the next caller start afresh."""
        keep = error is None and not abandoned
        nbytes = estimate_size(value) if keep else 0  # outside the lock: it walks the value
        with self._lock:
            if keep:
                self._put(full, value, nbytes, ttl_s)
            flight.value, flight.error, flight.abandoned = value, error, abandoned
            if self._flights.get(full) is flight:
                del self._flights[full]
        flight.done.set()

    def stats(self) -> dict[str, int]:
        """Entries and estimated bytes stored, computations started."""
        with self._lock:
            return {
                "entries": len(self._entries),
                "bytes": self._bytes,
                "computations": self.started,
            }

    def clear(self) -> None:
        """Forget every stored result (computations in progress finish normally)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    # ---------------------------------------------------------------- with the lock held
    def _get(self, full: FullKey) -> Any:
        entry = self._entries.get(full)
        if entry is None:
            return MISSING
        if entry.expires <= self.clock():
            self._drop(full)
            return MISSING
        self._entries.move_to_end(full)
        return entry.value

    def _drop(self, full: FullKey) -> None:
        entry = self._entries.pop(full)
        self._bytes -= entry.nbytes

    def _put(self, full: FullKey, value: Any, nbytes: int, ttl_s: float | None) -> None:
        now = self.clock()
        for old in [k for k, e in self._entries.items() if e.expires <= now]:
            self._drop(old)  # expired keys (typed text) go as soon as anyone stores
        if nbytes > self.max_bytes:
            return  # larger than the whole store: hand it out, do not keep it
        if full in self._entries:
            self._drop(full)
        while self._entries and (
            len(self._entries) >= self.max_entries or self._bytes + nbytes > self.max_bytes
        ):
            self._drop(next(iter(self._entries)))  # least recently used first
        expires = now + ttl_s if ttl_s is not None else float("inf")
        self._entries[full] = _Entry(value, nbytes, expires)
        self._bytes += nbytes
