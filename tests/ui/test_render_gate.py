"""Heavy pages draw one at a time; a page waiting for shared work gives its slot back."""

from __future__ import annotations

import threading
import time

from specdec_ui import render_gate
from specdec_ui.registry import PAGES, ROOT
from specdec_ui.render_gate import released_while_waiting, render_slot


def _in_thread(body) -> threading.Thread:
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_a_second_heavy_page_waits_for_the_first_and_then_draws():
    inside, leave, order = threading.Event(), threading.Event(), []

    def first():
        with render_slot():
            order.append("first in")
            inside.set()
            leave.wait(5)
            order.append("first out")

    def second():
        with render_slot():
            order.append("second in")

    a = _in_thread(first)
    inside.wait(5)
    b = _in_thread(second)
    time.sleep(0.2)
    assert order == ["first in"]  # the second page waits (without using the CPU)
    leave.set()
    a.join(5)
    b.join(5)
    assert order == ["first in", "first out", "second in"]


def test_a_page_waiting_for_shared_work_lets_another_draw():
    waiting, done = threading.Event(), threading.Event()
    drew = []

    def waiter():
        with render_slot(), released_while_waiting():
            waiting.set()
            done.wait(5)  # as if its run were still queued

    def drawer():
        with render_slot():
            drew.append(True)

    a = _in_thread(waiter)
    waiting.wait(5)
    b = _in_thread(drawer)
    b.join(2)
    assert drew == [True]  # drew while the other waited
    done.set()
    a.join(5)
    with render_slot():  # every slot was given back
        pass


def test_a_stuck_page_only_delays_the_others(monkeypatch):
    monkeypatch.setattr(render_gate, "MAX_WAIT_S", 0.2)
    stuck, release = threading.Event(), threading.Event()

    def holder():
        with render_slot():
            stuck.set()
            release.wait(5)

    a = _in_thread(holder)
    stuck.wait(5)
    start = time.monotonic()
    with render_slot():  # gives up waiting and draws anyway
        assert 0.15 < time.monotonic() - start < 2.0
    release.set()
    a.join(5)


def test_the_labs_are_the_heavy_pages_and_exactly_those_draw_inside_the_gate():
    heavy = {page.title for page in PAGES if page.heavy}
    assert heavy == {"Losslessness lab", "Model pair lab", "Variants lab"}
    for page in PAGES:
        source = (ROOT / page.path).read_text(encoding="utf-8")
        assert ("with render_slot():" in source) == page.heavy, page.path
