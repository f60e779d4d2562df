"""Waiting in thread tests on events, never on how long something took.

- :func:`wait_until`: poll a condition on shared state until it holds; its timeout only
  guards against a hang (a test that reaches it has failed);
- :class:`FakeClock`: a clock that moves only when the test moves it, and that counts who
  read it (so a test can wait until a worker has looked at the time again);
- :func:`run_threads`: start ``n`` threads at once and collect what they returned.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable

HANG_S = 30.0  # a guard against a hang; a correct run never comes near it


def wait_until(condition: Callable[[], object], what: str, timeout_s: float = HANG_S) -> None:
    """Return once ``condition()`` is true; fail the test if it is not within the guard."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting ({timeout_s:.0f} s) for: {what}")
        time.sleep(0.002)  # a poll interval: the outcome is decided by condition()


def wait_for(event: threading.Event, what: str, timeout_s: float = HANG_S) -> None:
    """``event.wait`` that fails the test when the guard runs out."""
    if not event.wait(timeout_s):
        raise AssertionError(f"gave up waiting ({timeout_s:.0f} s) for: {what}")


class FakeClock:
    """``clock()`` returns a time the test sets with :meth:`advance`; reads are counted per
    thread name."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._lock = threading.Lock()
        self.reads: collections.Counter[str] = collections.Counter()

    def __call__(self) -> float:
        with self._lock:
            self.reads[threading.current_thread().name] += 1
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds

    def wait_for_reads(
        self, thread_name: str, n: int, unless: threading.Event | None = None
    ) -> None:
        """Wait until ``thread_name`` has read the clock ``n`` more times than now: it has
        looked again (with the state the test set before calling this). Returns early
        when ``unless`` is set (the thing the test expects not to happen yet happened)."""
        with self._lock:
            target = self.reads[thread_name] + n
        wait_until(
            lambda: self.reads[thread_name] >= target or (unless is not None and unless.is_set()),
            f"{n} reads by {thread_name}",
        )


def run_threads(n: int, target: Callable[[int], object]) -> list:
    """Start ``n`` threads at once on ``target(i)``; their results (or exceptions)."""
    out: list = [None] * n
    barrier = threading.Barrier(n)

    def body(i: int) -> None:
        barrier.wait()
        try:
            out[i] = target(i)
        except Exception as err:  # noqa: BLE001 - collected for the assertions
            out[i] = err

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_S)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return out
