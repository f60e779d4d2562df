"""specdec_ui.runtime.shared_work (with result_store and work_queue): single flight, bounds,
errors, time to live, FIFO lanes, the background lane's yield, the wait hook.

Every wait here is for an event or a state (tests/ui/waiting.py); times to live and the
yield grace run on a :class:`FakeClock` the test moves by hand.
"""

from __future__ import annotations

import ast
import contextlib
import threading
from pathlib import Path

import numpy as np
import pytest

from specdec_ui.runtime.shared_work import (
    MISSING,
    QueueFullError,
    SharedWork,
    WaitStatus,
    estimate_size,
)
from specdec_ui.runtime.work_queue import YIELD_GRACE_S, YIELD_MAX_S
from tests.ui.waiting import HANG_S, FakeClock, run_threads, wait_for, wait_until


def sharing(work: SharedWork, namespace: str, key) -> int:
    """Callers waiting for the computation of (namespace, key) now (0 when none runs)."""
    status = work.status(namespace, key)
    return 0 if status is None else status.sharing


@pytest.mark.parametrize("heavy", [True, False])
def test_thirty_identical_concurrent_requests_compute_once(heavy):
    work = SharedWork(poll_s=0.01)
    calls = []

    def compute():
        calls.append(1)
        wait_until(lambda: sharing(work, "ns", ("k", 3)) == 30, "all 30 callers to wait")
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
    clock = FakeClock()
    work = SharedWork(poll_s=0.01, clock=clock)
    work.shared_result("ns", ("typed prompt",), lambda: "out", ttl_s=600.0)
    work.shared_result("ns", "kept", lambda: "kept")
    clock.advance(599.9)
    assert work.peek("ns", ("typed prompt",)) == "out"
    clock.advance(0.1)
    assert work.peek("ns", ("typed prompt",)) is MISSING
    work.shared_result("ns", "other", lambda: 1)  # a store also sweeps expired keys
    assert work.peek("ns", "kept") == "kept" and work.stats()["entries"] == 2


def test_an_error_reaches_every_waiter_and_is_not_stored():
    work = SharedWork(poll_s=0.01)
    calls = []

    def failing():
        calls.append(1)
        wait_until(lambda: sharing(work, "ns", "k") == 10, "all 10 callers to wait")
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
        wait_until(lambda: sharing(work, "ns", "k") == 2, "the second caller to wait")
        raise Rerun

    def leader():
        with pytest.raises(Rerun):
            work.shared_result("ns", "k", interrupted, heavy=False)

    thread = threading.Thread(target=leader)
    thread.start()
    wait_for(started, "the leader to start")
    value = work.shared_result("ns", "k", lambda: calls.append("waiter") or 7, heavy=False)
    thread.join(30)
    assert value == 7 and calls == ["leader", "waiter"]


def test_heavy_queue_runs_in_fifo_order_and_reports_positions():
    work = SharedWork(workers=1, poll_s=0.01)
    gate, a_runs, order, seen = threading.Event(), threading.Event(), [], {}

    def first():
        a_runs.set()
        gate.wait(HANG_S)
        order.append("A")

    blocker = threading.Thread(target=lambda: work.run_heavy(first))
    blocker.start()
    wait_for(a_runs, "A to run")
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
        wait_until(lambda: work.snapshot()[1] == len(threads), f"{name} to be queued")
    wait_until(lambda: len(seen) == 3, "B, C and D to be told their places")
    gate.set()
    for t in [blocker, *threads]:
        t.join(HANG_S)
    assert order == ["A", "B", "C", "D"]
    assert [seen[n].position for n in "BCD"] == [1, 2, 3]
    assert seen["D"].text.startswith("Queued: number 3 in line")
    assert work.snapshot() == (0, 0)


def test_a_full_queue_refuses_new_work_with_a_clear_error():
    work = SharedWork(workers=1, max_waiting=1, poll_s=0.01)
    gate, runs = threading.Event(), threading.Event()
    running = threading.Thread(target=lambda: work.run_heavy(lambda: runs.set() or gate.wait(30)))
    running.start()
    wait_for(runs, "the first job to run")
    waiting = threading.Thread(target=lambda: work.run_heavy(lambda: None))
    waiting.start()
    wait_until(lambda: work.snapshot() == (1, 1), "the second job to be queued")
    with pytest.raises(QueueFullError, match="busy"):
        work.shared_result("ns", "k", lambda: 1)
    assert work.status("ns", "k") is None  # not left "in flight"
    gate.set()
    running.join(HANG_S)
    waiting.join(HANG_S)
    assert work.shared_result("ns", "k", lambda: 1) == 1


def test_estimate_size_counts_numpy_buffers_and_nested_containers_once():
    arr = np.zeros(1_000)
    assert estimate_size(arr) >= 8_000
    assert estimate_size([arr, arr]) < 2 * 8_000  # shared buffer counted once
    assert estimate_size({"a": "x" * 10_000}) >= 10_000


def test_background_lane_does_not_hold_up_the_heavy_lane_and_wait_false_returns_at_once():
    clock = FakeClock()
    work = SharedWork(poll_s=0.01, clock=clock)
    clock.advance(YIELD_GRACE_S)  # the heavy lane has been idle long enough
    gate, measuring = threading.Event(), threading.Event()
    started = work.shared_result(
        "speed",
        "k",
        lambda: measuring.set() or gate.wait(HANG_S) and "measured",
        lane="background",
        wait=False,
    )
    assert started is MISSING
    wait_for(measuring, "the measurement to start")
    status = work.status("speed", "k")
    assert status is not None and status.position == 0
    assert work.shared_result("gen", 1, lambda: "text") == "text"  # not behind the measurement
    assert work.peek("speed", "k") is MISSING
    gate.set()
    assert work.shared_result("speed", "k", lambda: "again", lane="background") == "measured"
    assert work.status("speed", "k") is None and work.stats()["computations"] == 2


def test_background_work_runs_niced_and_heavy_work_does_not():
    import os

    clock = FakeClock()
    work = SharedWork(poll_s=0.01, clock=clock)
    clock.advance(YIELD_GRACE_S)

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


def _busy_heavy_lane(work: SharedWork) -> tuple[threading.Thread, threading.Event]:
    """A heavy job that runs until the returned event is set."""
    gate, runs = threading.Event(), threading.Event()
    runner = threading.Thread(
        target=lambda: work.shared_result("gen", 1, lambda: runs.set() or gate.wait(HANG_S))
    )
    runner.start()
    wait_for(runs, "the heavy job to run")
    return runner, gate


BACKGROUND_WORKER = "specdec-background-0"


def test_background_work_waits_until_the_heavy_lane_has_been_idle():
    """A measurement does not start while a class waits for runs (it would take the
    interpreter lock from them); it starts once the heavy lane has been quiet
    YIELD_GRACE_S."""
    clock = FakeClock()
    work = SharedWork(workers=1, poll_s=0.01, clock=clock)
    runner, gate = _busy_heavy_lane(work)
    measured = threading.Event()
    work.shared_result("speed", "k", measured.set, lane="background", wait=False)
    clock.wait_for_reads(BACKGROUND_WORKER, 4, unless=measured)  # looked twice
    assert not measured.is_set()  # the heavy lane is busy: the measurement waits
    gate.set()
    runner.join(HANG_S)
    wait_until(lambda: work.snapshot("heavy") == (0, 0), "the heavy lane to go idle")
    clock.advance(YIELD_GRACE_S - 0.01)
    clock.wait_for_reads(BACKGROUND_WORKER, 4, unless=measured)
    assert not measured.is_set()  # idle, but not yet for YIELD_GRACE_S
    clock.advance(0.01)
    wait_for(measured, "the measurement to start after YIELD_GRACE_S of quiet")


def test_background_work_starts_after_yield_max_even_if_the_heavy_lane_stays_busy():
    """A class pressing buttons all the time holds a measurement up YIELD_MAX_S at most."""
    clock = FakeClock()
    work = SharedWork(workers=1, poll_s=0.01, clock=clock)
    runner, gate = _busy_heavy_lane(work)
    measured = threading.Event()
    work.shared_result("speed", "k", measured.set, lane="background", wait=False)
    clock.wait_for_reads(BACKGROUND_WORKER, 4, unless=measured)  # it has seen the job
    clock.advance(YIELD_MAX_S - 0.01)
    clock.wait_for_reads(BACKGROUND_WORKER, 4, unless=measured)
    assert not measured.is_set()
    clock.advance(0.01)
    wait_for(measured, "the measurement to start after YIELD_MAX_S")
    assert work.snapshot("heavy") == (1, 0)  # while the heavy job still runs
    gate.set()
    runner.join(HANG_S)


def test_every_wait_runs_inside_the_wait_hook():
    """The UI's hook (render_gate.released_while_waiting in the app) wraps each wait; a
    stored result is handed out without one."""
    events = []

    @contextlib.contextmanager
    def hook():
        events.append("in")
        yield
        events.append("out")

    work = SharedWork(poll_s=0.01, wait_hook=hook)
    assert work.shared_result("ns", 1, lambda: events.append("compute") or 7) == 7
    assert events == ["in", "compute", "out"]  # a heavy job runs while the caller waits
    assert work.shared_result("ns", 1, lambda: 8) == 7
    assert events == ["in", "compute", "out"]


def _imports(path: Path) -> set[str]:
    """Every module (and name) a file imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {node.module or ""} | {alias.name for alias in node.names}
    return names


def _module_file(name: str) -> Path:
    """A specdec_ui module's file by its name, at the top of the package or in a room."""
    (path,) = (Path(__file__).resolve().parents[2] / "specdec_ui").rglob(f"{name}.py")
    return path


def test_the_runtime_does_not_import_page_drawing_code():
    assert "presenter" in _imports(_module_file("widgets"))  # the check sees a real import
    for name in ("shared_work", "result_store", "work_queue", "render_gate", "processes", "helper"):
        found = {n for n in _imports(_module_file(name)) if n.split(".")[-1] in PAGE_CODE}
        found |= {n for n in _imports(_module_file(name)) if n.startswith("streamlit")}
        assert not found, f"{name}.py imports {found}"


PAGE_CODE = {"widgets", "presenter", "page_state", "router", "page_frame"}


def test_the_process_wide_work_waits_inside_the_render_gate_installed_once():
    """WORK is built with the render gate's hook; no page code installs it (again)."""
    from specdec_ui.runtime import render_gate, shared_work

    assert shared_work.WORK.wait_hook is render_gate.released_while_waiting
    assert not hasattr(shared_work, "set_wait_hook")
    ui = Path(__file__).resolve().parents[2] / "specdec_ui"
    for path in ui.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "wait_hook =" not in text or path == Path(shared_work.__file__), path


@pytest.mark.parametrize("call", ["shared", "run_heavy"])
def test_heavy_work_asked_for_from_a_worker_raises_at_once(call):
    """A worker that waited for a job queued behind itself would wait for ever (with one
    worker: at once). It raises WorkerWaitError instead; light work still runs there."""
    work = SharedWork(workers=1, poll_s=0.01)

    def inner():
        if call == "shared":
            return work.shared_result("ns", "inner", lambda: 1)
        return work.run_heavy(lambda: 1)

    def outer():
        with pytest.raises(RuntimeError, match="worker thread") as caught:
            inner()
        light = work.shared_result("ns", "light", lambda: 2, heavy=False)
        started = work.shared_result("ns", "later", lambda: 3, wait=False)
        return type(caught.value).__name__, light, started

    name, light, started = work.run_heavy(outer)
    assert (name, light, started) == ("WorkerWaitError", 2, MISSING)
    wait_until(lambda: work.peek("ns", "later") == 3, "the job started with wait=False")
