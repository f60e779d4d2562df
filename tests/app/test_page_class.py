"""Class page (issue 34): a teacher's session and several phones' sessions (each an AppTest of
the page, one class store in this process): start, join, ask, answer, reveal, pool rounds,
reset, end, wrong codes, a reload that rejoins, the teacher's link."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_ui.classroom import asking
from specdec_ui.page_questions import questions_for
from specdec_ui.registry import available_pages
from specdec_ui.runtime import classroom
from specdec_ui.runtime.classroom import store
from tests.app.conftest import figures, open_app, open_page

CLASS = "pages/scripts/classroom.py"


def _param(at, name):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in (*at.error, *at.info, *at.success, *at.warning)]
    return " ".join(parts).replace("\\", "")  # md_escape's backslashes


def start_teacher():
    at = open_page(CLASS)
    at.button(key="class_start").click().run()
    assert not at.exception
    return at, _param(at, "class")


def phone(code: str, me: str | None = None):
    at = open_page(CLASS, {"join": code} | ({"me": me} if me else {}))
    assert not at.exception
    return at


def ask(teacher, page: str, index: int) -> asking.ClassQuestion:
    found = asking.find_question(f"{page or 'Home'}/{index}")
    teacher.selectbox(key="class_pick_page").set_value(found.page.title).run()
    picker = teacher.selectbox(key="class_pick_question")
    picker.set_value(next(o for o in picker.options if o.startswith(f"{index}. "))).run()
    teacher.button(key="class_ask").click().run()
    assert not teacher.exception
    return found


def answers_in(teacher) -> str:
    teacher.run()
    return next(m.value for m in teacher.metric if m.label == "Answers in")


def test_start_shows_the_code_link_and_qr_but_never_the_teacher_key():
    teacher, code = start_teacher()
    key = teacher.session_state["class_teacher"]["key"]
    assert len(code) == classroom.CODE_LENGTH and set(code) <= set(classroom.CODE_ALPHABET)
    assert f"Join code: **{' '.join(code)}**" in texts(teacher)
    assert f"/Class?join={code}" in [c.value for c in teacher.code]
    assert "teach" not in teacher.query_params
    shown = " ".join([texts(teacher), *(c.value for c in teacher.code)])
    assert key not in shown.replace(f"teach={key}", "")  # only inside the folded own link
    assert store().view(code).students == 0


def test_phones_answer_a_choice_and_the_reveal_marks_the_right_one():
    teacher, code = start_teacher()
    phones = [phone(code) for _ in range(3)]
    teacher.run()
    assert "3 students joined" in texts(teacher)
    found = ask(teacher, "Step_through_a_round", 3)  # multiple choice, right = C
    key = "class_choice_Step_through_a_round_3"
    for at, choice in zip(phones, (2, 2, 0), strict=True):
        at.run()
        at.radio(key=key).set_value(choice)
        at.button(key="class_send").click().run()
        assert not at.exception
        assert "Sent:" in texts(at)
    phones[2].radio(key=key).set_value(2)
    phones[2].button(key="class_send").click().run()  # a new answer replaces the old one
    assert answers_in(teacher) == "3 of 3 students"
    assert not figures(teacher)  # counts only until the reveal
    teacher.button(key="class_reveal").click().run()
    (fig,) = figures(teacher)
    assert fig["data"][0]["y"] == [0, 0, 3, 0]
    assert "✓" in fig["data"][0]["text"][found.question.right]
    assert "Right answer: C." in texts(teacher) and "leftover" not in found.question.answer
    assert found.question.answer[:40] in texts(teacher)  # the worked answer under the chart
    phones[0].run()
    assert "the right answer is C. Yours: C ✓ right" in texts(phones[0])


def test_a_number_answer_is_checked_against_its_range_and_counted_within_tolerance():
    teacher, code = start_teacher()
    at = phone(code)
    found = ask(teacher, "Step_through_a_round", 1)  # a = min(1, 0.25/0.30), from the core
    key = "class_number_Step_through_a_round_1"
    at.run()
    at.number_input(key=key).set_value(5.0)
    at.button(key="class_send").click().run()
    assert not at.exception
    assert "a number from 0 to 1" in texts(at)  # refused, with the range
    at.number_input(key=key).set_value(round(found.right_value, 3))
    at.button(key="class_send").click().run()
    assert "Sent: 0.833" in texts(at)
    teacher.button(key="class_reveal").click().run()
    (fig,) = figures(teacher)
    assert "1 of 1 within ±0.0005 of 0.833" in fig["layout"]["title"]["text"]


def test_a_reload_rejoins_with_the_answers_and_the_teacher_link_gives_the_controls_back():
    teacher, code = start_teacher()
    key = teacher.session_state["class_teacher"]["key"]
    first = phone(code)
    me = _param(first, "me")
    ask(teacher, "", 1)
    first.run()
    first.radio(key="class_choice_Home_1").set_value(1)
    first.button(key="class_send").click().run()
    again = phone(code, me)  # a reload: a new session with the same link
    assert _param(again, "me") == me
    assert "Sent: B." in texts(again)
    assert store().view(code).students == 1
    other = open_page(CLASS, {"class": code, "teach": key})
    assert not other.exception
    assert "teach" not in other.query_params  # the key leaves the address bar at once
    assert other.button(key="class_reveal")
    stranger = open_page(CLASS, {"class": code})  # a class link without the key: a phone
    assert _param(stranger, "join") == code
    assert "class_reveal" not in [b.key for b in stranger.button]


def test_the_teacher_back_through_the_page_menu_gets_the_controls_and_the_address():
    teacher, code = start_teacher()
    teacher.query_params.clear()  # the sidebar's page menu opens the Class page without a link
    teacher.run()
    assert not teacher.exception
    assert _param(teacher, "class") == code
    assert teacher.button(key="class_reveal")
    assert "join" not in teacher.query_params and store().view(code).students == 0


def test_wrong_and_ended_codes_say_so_and_end_needs_the_teacher():
    bad = phone("ZZZ-ZZZ")
    assert "No class has the code ZZZZZZ" in texts(bad)
    assert bad.button(key="class_join")  # the join form again
    teacher, code = start_teacher()
    at = phone(code)
    teacher.button(key="class_end").click().run()
    assert not teacher.exception
    assert f"Class {code} has ended." in texts(teacher)
    assert teacher.button(key="class_start")
    at.run()
    assert not at.exception
    assert f"No class has the code {code}" in texts(at)


def test_a_full_class_says_its_bound(monkeypatch):
    teacher, code = start_teacher()
    phone(code)
    monkeypatch.setattr(classroom, "MAX_STUDENTS", 1)
    full = phone(code)
    assert f"Class {code} is full: at most 1 students" in texts(full)


def open_experiment(teacher, rule: str, preset: str = "000", k: int = 4) -> Experiment:
    teacher.selectbox(key="class_exp_preset").set_value(preset)
    teacher.selectbox(key="class_exp_k").set_value(k)
    teacher.selectbox(key="class_exp_rule").set_value(rule)
    teacher.button(key="class_exp_open").click().run()
    assert not teacher.exception
    return asking.Experiment(preset, k, rule)


Experiment = asking.Experiment


def test_phones_pool_their_rounds_on_the_projector():
    teacher, code = start_teacher()
    phones = [phone(code) for _ in range(3)]
    exp = open_experiment(teacher, "correct")
    for i, at in enumerate(phones):
        at.session_state["class_seed"] = 100 + i
        at.run()
        for _ in range(2):
            at.button(key="class_run").click().run()
            assert not at.exception
    pool = store().pool(code, exp.name)
    assert (pool.students, pool.rounds) == (3, 120)
    assert pool.emitted == tuple(
        np.sum([asking.run_batch(exp, 100 + i, b)[0] for i in range(3) for b in range(2)], 0)
    )
    teacher.run()
    assert "**3 students** pooled **120 rounds**" in texts(teacher)
    tokens, lengths = figures(teacher)
    assert np.allclose(tokens["data"][0]["y"], np.array(pool.emitted) / sum(pool.emitted))
    assert sum(lengths["data"][0]["y"]) == pytest.approx(1)
    alts = [c.proto.alt for c in teacher.get("plotly_chart")]  # the charts' text alternatives
    assert alts[0].startswith(f"{sum(pool.emitted)} pooled tokens") and "p-value" in alts[0]
    assert alts[1].startswith("120 pooled rounds, mean")
    assert len([e for e in teacher.get("expander") if "as a table" in e.proto.label]) == 2
    assert "E(alpha, K) = 3.71" in lengths["layout"]["title"]["text"]
    assert "p-value" in tokens["layout"]["title"]["text"]


@pytest.mark.parametrize(("rule", "drifts"), [("correct", False), ("resample_from_p", True)])
def test_the_pool_follows_p_and_a_broken_rule_drifts_away(rule, drifts):
    """A hall of 40 phones (the store's calls, each phone's own seed) and one on the page."""
    teacher, code = start_teacher()
    exp = open_experiment(teacher, rule, preset="far", k=3)
    for seed in range(40):
        student = store().join(code)
        for batch in range(3):  # the store takes at most 3 batches a second from a phone
            store().add_rounds(code, student, exp.name, *asking.run_batch(exp, seed, batch))
    teacher.run()
    said = texts(teacher)
    assert "**41 students**" not in said and "**40 students** pooled **2,400 rounds**" in said
    assert ("drift away from p" in said) is drifts
    assert ("the tokens follow p" in said) is not drifts


def test_reset_clears_answers_and_pools_and_controls_need_the_key():
    teacher, code = start_teacher()
    at = phone(code)
    ask(teacher, "Speedup_explorer", 3)
    at.run()
    at.number_input(key="class_number_Speedup_explorer_3").set_value(4.0)
    at.button(key="class_send").click().run()
    assert answers_in(teacher) == "1 of 1 students"
    teacher.button(key="class_reset").click().run()
    assert "No question asked yet" in texts(teacher)  # answers, question and pools cleared
    assert store().tally(code, "Speedup_explorer/3") == {}
    assert store().view(code).students == 1  # the students stay
    with pytest.raises(classroom.NotTeacher):
        store().reveal(code, "not-the-key")


def test_next_question_asks_the_following_one():
    teacher, _ = start_teacher()
    ask(teacher, "Speedup_explorer", 3)
    teacher.button(key="class_next").click().run()
    following = asking.next_question("Speedup_explorer/3")
    assert teacher.selectbox(key="class_pick_page").value == following.page.title
    assert teacher.selectbox(key="class_pick_question").value.startswith(f"{following.index}. ")
    assert "Losslessness lab, question 1" in texts(teacher)


def test_home_and_the_sidebar_start_a_class():
    at = open_app()
    at.button(key="class_home").click().run()
    assert not at.exception
    held = at.session_state["class_teacher"]
    assert store().view(held["code"]).students == 0
    assert "Join code:" in texts(at)
    assert at.button(key="class_sidebar").label == f"🏫 Class {held['code']}"


@pytest.mark.parametrize("page", [p for p in available_pages() if questions_for(p.path)])
def test_every_page_question_can_be_asked_in_class(page):
    """A question without an answer format silently drops out of the class's picker."""
    asked = {cq.question for cq in asking.class_questions() if cq.page == page}
    for question in questions_for(page.path):
        assert asking.askable(question) and question in asked, (page.title, question.ask[:60])
        if question.number:  # the right number is one the core computed, within its range
            right = question.fact(question.number)
            cq = next(c for c in asking.class_questions() if c.question == question)
            assert cq.span[0] <= right <= cq.span[1], (page.title, right, cq.span)
