"""Heavy pages draw one at a time; a page waiting for shared work gives its slot back.
(Which pages draw inside the gate: tests/app/test_render_gate_pages.py.)

The gate's semaphore is replaced by one that reports when a caller finds no free slot, so
each test decides on that event, not on how long a thread took.
"""

from __future__ import annotations

import threading

import pytest

from specdec_ui.runtime import render_gate
from specdec_ui.runtime.render_gate import released_while_waiting, render_slot
from specdec_ui.runtime.shared_work import SharedWork
from tests.ui.waiting import HANG_S, wait_for


class WatchedSlots(threading.BoundedSemaphore):
    """The gate's semaphore, with an event set whenever a caller has to wait for a slot."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.someone_waits = threading.Event()

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if super().acquire(blocking=False):
            return True
        self.someone_waits.set()
        return super().acquire(blocking, timeout) if blocking else False


@pytest.fixture
def slots(monkeypatch) -> WatchedSlots:
    watched = WatchedSlots(render_gate.RENDER_SLOTS)
    monkeypatch.setattr(render_gate, "_slots", watched)
    return watched


def _in_thread(body) -> threading.Thread:
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_a_second_heavy_page_waits_for_the_first_and_then_draws(slots):
    inside, leave, order = threading.Event(), threading.Event(), []

    def first():
        with render_slot():
            order.append("first in")
            inside.set()
            leave.wait(HANG_S)
            order.append("first out")

    def second():
        with render_slot():
            order.append("second in")

    a = _in_thread(first)
    wait_for(inside, "the first page to draw")
    b = _in_thread(second)
    wait_for(slots.someone_waits, "the second page to find no free slot")
    assert order == ["first in"]  # the second page waits (without using the CPU)
    leave.set()
    a.join(HANG_S)
    b.join(HANG_S)
    assert order == ["first in", "first out", "second in"]


def test_a_page_waiting_for_shared_work_lets_another_draw(slots):
    waiting, done = threading.Event(), threading.Event()

    def waiter():
        with render_slot(), released_while_waiting():
            waiting.set()
            done.wait(HANG_S)  # as if its run were still queued

    a = _in_thread(waiter)
    wait_for(waiting, "the first page to wait for its run")
    with render_slot():  # another page draws at once
        pass
    assert not slots.someone_waits.is_set()
    done.set()
    a.join(HANG_S)
    with render_slot():  # every slot was given back
        pass
    assert not slots.someone_waits.is_set()


def test_shared_work_with_the_gates_hook_gives_the_slot_back_while_it_waits(monkeypatch, slots):
    """What widgets.page_setup installs: a page whose run is queued does not hold the gate."""
    monkeypatch.setattr(render_gate, "MAX_WAIT_S", 2 * HANG_S)  # no drawing without a slot
    work = SharedWork(workers=1, poll_s=0.01, wait_hook=released_while_waiting)
    running, finish, drew, got = threading.Event(), threading.Event(), threading.Event(), []

    def page():
        with render_slot():
            work.shared_result("gen", 1, lambda: running.set() or finish.wait(HANG_S))

    def other_page():
        with render_slot():
            got.append(render_gate._held.slot)  # True: it holds a slot
            drew.set()

    a = _in_thread(page)
    wait_for(running, "the page's run to start")
    b = _in_thread(other_page)
    wait_for(drew, "another page to draw while the run goes on")
    assert got == [True] and not finish.is_set()
    finish.set()
    a.join(HANG_S)
    b.join(HANG_S)


def test_a_stuck_page_only_delays_the_others(monkeypatch, slots):
    monkeypatch.setattr(render_gate, "MAX_WAIT_S", 0.01)
    stuck, release = threading.Event(), threading.Event()

    def holder():
        with render_slot():
            stuck.set()
            release.wait(HANG_S)

    a = _in_thread(holder)
    wait_for(stuck, "the stuck page to hold the slot")
    with render_slot():  # gives up waiting and draws anyway
        assert slots.someone_waits.is_set() and not release.is_set()
    release.set()
    a.join(HANG_S)
    with render_slot():  # the page that drew without a slot gave none back twice
        pass
