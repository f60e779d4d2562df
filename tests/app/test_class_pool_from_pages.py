"""The class as a Monte Carlo from the lab pages (issue 34 item 3): a phone that joined a class
on the Class page adds 20 rounds of the teacher's experiment to the class's pool from the
Losslessness lab and the Step-through-a-round page. Each phone is the router (app.py) in its
own AppTest session; a page switch drops the link's parameters, as a browser's does."""

from __future__ import annotations

import time

import numpy as np

from specdec_ui.classroom import asking
from specdec_ui.classroom.pool_panel import NO_EXPERIMENT
from specdec_ui.runtime.classroom import store
from tests.app.conftest import open_app, open_page
from tests.app.test_page_class import open_experiment, start_teacher, texts

CLASS = "pages/scripts/classroom.py"
LAB = "pages/scripts/losslessness.py"
ROUND = "pages/scripts/round.py"
RUN = "class_pool_run"


def switch(at, page: str):
    """Go to ``page`` as the sidebar does: the address loses its query parameters."""
    at.query_params.clear()
    at.switch_page(page).run()
    assert not at.exception
    return at


def student(code: str, seed: int = 7):
    """A phone that opens the app, goes to the Class page and types the code."""
    at = switch(open_app(), CLASS)
    at.session_state["class_seed"] = seed
    at.text_input(key="class_code").input(code).run()
    at.button(key="class_join").click().run()
    assert not at.exception
    assert at.session_state["class_student"]["code"] == code
    return at


def has_panel(at) -> bool:
    return any(b.key == RUN for b in at.button)


def test_a_phone_pools_20_rounds_from_the_lab_and_the_round_page():
    teacher, code = start_teacher()
    exp = open_experiment(teacher, "correct")
    at = student(code, seed=11)
    pooled = [store().pool(code, exp.name).rounds]
    for page in (LAB, ROUND):
        switch(at, page)
        assert f"Your class (code {code}): add 20 rounds" in texts(at)
        at.button(key=RUN).click().run()
        assert not at.exception
        pooled.append(store().pool(code, exp.name).rounds)
        assert f"Added {asking.ROUNDS_PER_PRESS} rounds" in texts(at)
    assert pooled == [0, 20, 40]
    pool = store().pool(code, exp.name)
    assert pool.students == 1
    batches = [asking.run_batch(exp, 11, b) for b in range(2)]  # the phone's seed, press 0, 1
    assert pool.emitted == tuple(np.sum([b[0] for b in batches], 0))
    assert pool.lengths == tuple(np.sum([b[1] for b in batches], 0))
    tokens = sum(batches[1][0])
    assert f"Added 20 rounds ({tokens} tokens" in texts(at)
    switch(at, CLASS)  # back on the Class page: still in the class, with its run button
    assert at.button(key="class_run") and str(at.query_params["join"]) == code
    at.button(key="class_run").click().run()
    assert store().pool(code, exp.name).rounds == 60
    added = [s.value for s in at.success if s.value.startswith("Added 20 rounds")]
    assert len(added) == 1
    at.run()  # a refresh of the panel (every 2 s), no press: the message stays, nothing added
    assert [s.value for s in at.success if s.value.startswith("Added 20 rounds")] == added
    assert store().pool(code, exp.name).rounds == 60


def test_no_panel_without_a_seat():
    for page in (LAB, ROUND):
        at = open_page(page)
        assert not at.exception and not has_panel(at)
        assert "Your class" not in texts(at)
    at = switch(open_app(), LAB)  # the router too, before and after opening the Class page
    assert not has_panel(at)
    assert not has_panel(switch(switch(at, CLASS), ROUND))


def test_refusals_no_experiment_ended_class_and_too_fast(monkeypatch):
    teacher, code = start_teacher()
    at = switch(student(code), LAB)
    assert NO_EXPERIMENT in texts(at) and not at.warning
    at.button(key=RUN).click().run()
    assert not at.exception
    assert NO_EXPERIMENT in [w.value for w in at.warning]  # pressed: refused, said why
    exp = open_experiment(teacher, "correct")
    assert store().pool(code, exp.name).rounds == 0
    now = time.time()
    monkeypatch.setattr(store(), "clock", lambda: now)  # every press within the same second
    for _ in range(4):
        at.button(key=RUN).click().run()
        assert not at.exception
    assert store().pool(code, exp.name).rounds == 60  # three a second, the fourth refused
    assert "Too fast: at most 3 batches of rounds a second" in texts(at), texts(at)
    teacher.button(key="class_end").click().run()
    switch(at, ROUND)
    assert f"No class has the code {code}" in texts(at)  # said once, then the panel goes
    at.run()
    assert not at.exception and not has_panel(at)
