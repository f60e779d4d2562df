"""Exactly the heavy pages of the registry (the three labs) draw inside the render gate.

Checked by running each page (AppTest, through the router; Home, which runs first, is
not heavy) with the gate's semaphore replaced by one that
counts the slots asked for, so the check holds wherever the page takes its slot (in the
page file or in a shared page skeleton), not by reading the page's source.
"""

from __future__ import annotations

import threading

import pytest

from specdec_ui.registry import PAGES, available_pages
from specdec_ui.runtime import render_gate
from tests.app.conftest import open_app


class CountedSlots(threading.BoundedSemaphore):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.asked = 0

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        self.asked += 1
        return super().acquire(blocking, timeout)


def test_the_labs_are_the_heavy_pages():
    heavy = {page.title for page in PAGES if page.heavy}
    assert heavy == {"Losslessness lab", "Model pair lab", "Variants lab"}


@pytest.mark.parametrize("page", available_pages(), ids=lambda page: page.title)
def test_a_page_draws_inside_the_gate_exactly_when_it_is_heavy(monkeypatch, page):
    slots = CountedSlots(render_gate.RENDER_SLOTS)
    monkeypatch.setattr(render_gate, "_slots", slots)
    at = open_app(None if page.is_home else page.path)  # through the router, as served
    assert not at.exception
    assert (slots.asked > 0) == page.heavy, (page.title, slots.asked)
