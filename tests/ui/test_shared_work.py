"""specdec_ui.shared_work: single flight, bounds, errors, time to live, FIFO queue."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from specdec_ui import shared_work
from specdec_ui.shared_work import (
    MISSING,
    QueueFullError,
    SharedWork,
    WaitStatus,
    estimate_size,
)


def run_threads(n: int, target) -> list:
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
        t.join(30)
    return out


@pytest.mark.parametrize("heavy", [True, False])
def test_thirty_identical_concurrent_requests_compute_once(heavy):
    work = SharedWork(poll_s=0.01)
    calls = []

    def compute():
        calls.append(1)
        time.sleep(0.2)  # long enough that all 30 callers arrive while it runs
        return np.arange(5)

    out = run_threads(30, lambda i: work.shared_result("ns", ("k", 3), compute, heavy=heavy))
    assert len(calls) == 1 and work.stats()["computations"] == 1
    assert all(o is out[0] for o in out)  # one shared result object
    assert work.shared_result("ns", ("k", 3), compute) is out[0]  # later: from the store
    assert len(calls) == 1


def test_different_keys_and_namespaces_compute_separately():
    work = SharedWork(poll_s=0.01)
    a = work.shared_result("a", 1, lambda: "a1")
    b = work.shared_result("b", 1, lambda: "b1")
    c = work.shared_result("a", 2, lambda: "a2")
    assert (a, b, c) == ("a1", "b1", "a2") and work.stats()["computations"] == 3


def test_store_is_bounded_in_entries_least_recently_used_first():
    work = SharedWork(max_entries=3, poll_s=0.01)
    for i in range(3):
        work.shared_result("ns", i, lambda i=i: i, heavy=False)
    work.peek("ns", 0)  # 0 becomes the most recently used
    work.shared_result("ns", 3, lambda: 3, heavy=False)
    assert work.stats()["entries"] == 3
    assert work.peek("ns", 1) is MISSING  # the least recently used went
    assert [work.peek("ns", i) for i in (0, 2, 3)] == [0, 2, 3]


def test_store_is_bounded_in_bytes_and_never_keeps_an_oversized_result():
    work = SharedWork(max_bytes=25_000, poll_s=0.01)
    for i in range(5):
        work.shared_result("ns", i, lambda: np.zeros(1_000), heavy=False)  # ~8 KB each
    stats = work.stats()
    assert stats["entries"] == 3 and stats["bytes"] <= 25_000
    big = work.shared_result("ns", "big", lambda: np.zeros(10_000), heavy=False)
    assert big.shape == (10_000,) and work.peek("ns", "big") is MISSING
    assert work.stats()["entries"] == 3


def test_typed_text_keys_expire_after_their_time_to_live():
    work = SharedWork(poll_s=0.01)
    work.shared_result("ns", ("typed prompt",), lambda: "out", ttl_s=0.05)
    work.shared_result("ns", "kept", lambda: "kept")
    assert work.peek("ns", ("typed prompt",)) == "out"
    time.sleep(0.1)
    assert work.peek("ns", ("typed prompt",)) is MISSING
    work.shared_result("ns", "other", lambda: 1)  # a store also sweeps expired keys
    assert work.peek("ns", "kept") == "kept" and work.stats()["entries"] == 2


def test_an_error_reaches_every_waiter_and_is_not_stored():
    work = SharedWork(poll_s=0.01)
    calls = []

    def failing():
        calls.append(1)
        time.sleep(0.1)
        raise ValueError("bad request")

    out = run_threads(10, lambda i: work.shared_result("ns", "k", failing))
    assert len(calls) == 1
    assert all(isinstance(o, ValueError) and str(o) == "bad request" for o in out)
    assert work.peek("ns", "k") is MISSING
    assert work.shared_result("ns", "k", lambda: "fixed") == "fixed"  # computed again


def test_an_interrupted_in_thread_leader_lets_a_waiter_compute():
    class Rerun(BaseException):  # what Streamlit raises in a script thread on a rerun
        pass

    work = SharedWork(poll_s=0.01)
    started, calls = threading.Event(), []

    def interrupted():
        calls.append("leader")
        started.set()
        time.sleep(0.05)
        raise Rerun

    def leader():
        with pytest.raises(Rerun):
            work.shared_result("ns", "k", interrupted, heavy=False)

    thread = threading.Thread(target=leader)
    thread.start()
    started.wait(5)
    value = work.shared_result("ns", "k", lambda: calls.append("waiter") or 7, heavy=False)
    thread.join(5)
    assert value == 7 and calls == ["leader", "waiter"]


def test_heavy_queue_runs_in_fifo_order_and_reports_positions():
    work = SharedWork(workers=1, poll_s=0.01)
    gate, order, seen = threading.Event(), [], {}

    def first():
        gate.wait(10)
        order.append("A")

    blocker = threading.Thread(target=lambda: work.run_heavy(first))
    blocker.start()
    while work.snapshot() != (1, 0):  # A runs
        time.sleep(0.005)
    threads = []
    for name in "BCD":

        def job(name=name):
            order.append(name)

        def note(status: WaitStatus, name=name):
            seen.setdefault(name, status)

        threads.append(
            threading.Thread(target=work.run_heavy, args=(job,), kwargs={"on_wait": note})
        )
        threads[-1].start()
        while work.snapshot()[1] < len(threads):  # queued in this order
            time.sleep(0.005)
    while len(seen) < 3:
        time.sleep(0.005)
    gate.set()
    for t in [blocker, *threads]:
        t.join(10)
    assert order == ["A", "B", "C", "D"]
    assert [seen[n].position for n in "BCD"] == [1, 2, 3]
    assert seen["D"].text.startswith("Queued: number 3 in line")
    assert work.snapshot() == (0, 0)


def test_a_full_queue_refuses_new_work_with_a_clear_error():
    work = SharedWork(workers=1, max_waiting=1, poll_s=0.01)
    gate = threading.Event()
    running = threading.Thread(target=lambda: work.run_heavy(lambda: gate.wait(10)))
    running.start()
    while work.snapshot() != (1, 0):
        time.sleep(0.005)
    waiting = threading.Thread(target=lambda: work.run_heavy(lambda: None))
    waiting.start()
    while work.snapshot()[1] < 1:
        time.sleep(0.005)
    with pytest.raises(QueueFullError, match="busy"):
        work.shared_result("ns", "k", lambda: 1)
    gate.set()
    running.join(10)
    waiting.join(10)
    assert work.shared_result("ns", "k", lambda: 1) == 1  # not stuck as "in flight"


def test_estimate_size_counts_numpy_buffers_and_nested_containers_once():
    arr = np.zeros(1_000)
    assert estimate_size(arr) >= 8_000
    assert estimate_size([arr, arr]) < 2 * 8_000  # shared buffer counted once
    assert estimate_size({"a": "x" * 10_000}) >= 10_000


def test_background_lane_does_not_hold_up_the_heavy_lane_and_wait_false_returns_at_once():
    work = SharedWork(poll_s=0.01)
    gate = threading.Event()
    started = work.shared_result(
        "speed", "k", lambda: gate.wait(10) and "measured", lane="background", wait=False
    )
    assert started is MISSING
    while work.snapshot("background") != (1, 0):
        time.sleep(0.005)
    status = work.status("speed", "k")
    assert status is not None and status.position == 0
    assert work.shared_result("gen", 1, lambda: "text") == "text"  # not behind the measurement
    assert work.peek("speed", "k") is MISSING
    gate.set()
    assert work.shared_result("speed", "k", lambda: "again", lane="background") == "measured"
    assert work.status("speed", "k") is None and work.stats()["computations"] == 2


def test_background_work_runs_niced_and_heavy_work_does_not():
    import os

    work = SharedWork(poll_s=0.01)

    def niceness():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = niceness()
    assert work.shared_result("n", "bg", niceness, lane="background") == min(19, base + 10)
    assert work.shared_result("n", "heavy", niceness) == base


def test_estimate_size_does_not_walk_into_code():
    # A value that refers to a module or a function counts them as one small object: the
    # walk must not wander through numpy's (or torch's) whole namespace.
    assert estimate_size({"module": np, "function": estimate_size, "class": SharedWork}) < 10_000
    assert estimate_size({"a": np.zeros(1000)}) >= 8_000


def test_background_work_waits_until_the_heavy_lane_has_been_idle(monkeypatch):
    """A measurement does not start while a class waits for runs (it would take the
    interpreter lock from them); it starts once the heavy lane has been quiet a while."""
    monkeypatch.setattr(shared_work, "YIELD_GRACE_S", 0.3)
    work = SharedWork(workers=1, poll_s=0.01)
    gate, started = threading.Event(), []
    runner = threading.Thread(target=lambda: work.shared_result("gen", 1, lambda: gate.wait(10)))
    runner.start()
    while work.snapshot("heavy") != (1, 0):
        time.sleep(0.005)
    work.shared_result(
        "speed", "k", lambda: started.append(time.monotonic()), lane="background", wait=False
    )
    time.sleep(0.5)
    assert started == []  # the heavy lane is busy: the measurement waits
    gate.set()
    runner.join()
    released = time.monotonic()
    assert work.shared_result("speed", "k", lambda: None, lane="background") is None
    assert len(started) == 1 and 0.25 <= started[0] - released < 2.0
