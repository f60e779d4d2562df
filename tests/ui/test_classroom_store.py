"""The in-process class store (issue 34): bounds, expiry, throttling, rejoin, teacher key,
reset/end, counts only, and many threads at once."""

import random
import threading

import pytest

from specdec_ui.runtime import classroom as cr
from specdec_ui.runtime.classroom import (
    AnswerRefused,
    Asked,
    ClassFull,
    ClassNotFound,
    ClassroomError,
    MemoryClassStore,
    NotTeacher,
    Throttled,
)

CHOICE = Asked(page="Step_through_a_round", question_id="Step_through_a_round/0", kind="choice",
               choices=4)  # fmt: skip
NUMBER = Asked(page="Speedup_explorer", question_id="Speedup_explorer/1", kind="number",
               low=0.0, high=5.0)  # fmt: skip


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def st(clock):
    return MemoryClassStore(clock=clock)


def started(st):
    code, key = st.start()
    return code, key


def test_codes_and_keys_are_unguessable_and_normalised(st):
    code, key = st.start()
    assert len(code) == cr.CODE_LENGTH and set(code) <= set(cr.CODE_ALPHABET)
    assert not set(code) & set("01OIL")
    assert len(key) >= 30 and key != code
    lowered = f"{code[:3].lower()} - {code[3:].lower()}"
    assert st.view(lowered).code == code
    codes = {cr.new_code() for _ in range(2000)}
    assert len(codes) > 1990  # random, not sequential


def test_unknown_code_says_so(st):
    with pytest.raises(ClassNotFound, match="No class has the code ABCDEF"):
        st.view("abcdef")
    with pytest.raises(ClassNotFound, match="6 characters"):
        st.join("AB0")  # a 0 can never be in a code


def test_too_many_classes_is_refused_with_the_bound(st):
    for _ in range(cr.MAX_CLASSES):
        st.start()
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_CLASSES} classes"):
        st.start()


def test_too_many_students_is_refused_with_the_bound(st):
    code, _ = st.start()
    ids = {st.join(code) for _ in range(cr.MAX_STUDENTS)}
    assert len(ids) == cr.MAX_STUDENTS and st.view(code).students == cr.MAX_STUDENTS
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_STUDENTS} students"):
        st.join(code)
    assert st.join(code, next(iter(ids))) in ids  # a reload still gets back in


def test_a_class_expires_after_three_hours(st, clock):
    code, key = st.start()
    view = st.view(code)
    assert view.expires_at == clock.now + cr.CLASS_TTL_S and view.backend == "in-process"
    clock.now += cr.CLASS_TTL_S - 1
    assert st.view(code).code == code
    clock.now += 1
    with pytest.raises(ClassNotFound, match="older than 3 hours"):
        st.view(code)
    assert st.codes() == []
    with pytest.raises(ClassNotFound):
        st.reveal(code, key)


def test_expired_classes_free_their_places(st, clock):
    for _ in range(cr.MAX_CLASSES):
        st.start()
    clock.now += cr.CLASS_TTL_S
    st.start()
    assert len(st.codes()) == 1


def test_answers_one_per_student_replaced_and_tallied(st):
    code, key = st.start()
    a, b, c = (st.join(code) for _ in range(3))
    st.ask(code, key, CHOICE)
    st.answer(code, a, CHOICE.question_id, 1)
    st.answer(code, b, CHOICE.question_id, 1)
    st.answer(code, c, CHOICE.question_id, 3)
    assert st.view(code).answers == 3
    assert st.tally(code, CHOICE.question_id) == {1.0: 2, 3.0: 1}
    st.answer(code, a, CHOICE.question_id, 2)  # replaces a's 1
    assert st.tally(code, CHOICE.question_id) == {1.0: 1, 2.0: 1, 3.0: 1}
    assert st.my_answer(code, a, CHOICE.question_id) == 2.0
    assert st.view(code).answers == 3


@pytest.mark.parametrize(
    ("asked", "value", "message"),
    [
        (CHOICE, 4, "one of the choices 0 to 3"),
        (CHOICE, 1.5, "one of the choices 0 to 3"),
        (CHOICE, -1, "one of the choices 0 to 3"),
        (NUMBER, 5.5, "from 0 to 5"),
        (NUMBER, "two", "from 0 to 5"),
        (NUMBER, float("nan"), "from 0 to 5"),
        (NUMBER, float("inf"), "from 0 to 5"),
        (NUMBER, True, "from 0 to 5"),
        (NUMBER, None, "from 0 to 5"),
    ],
)
def test_bad_answers_are_refused_with_the_range(st, asked, value, message):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, asked)
    with pytest.raises(AnswerRefused, match=message):
        st.answer(code, s, asked.question_id, value)
    assert st.tally(code, asked.question_id) == {}


def test_number_answers_in_range_and_as_text(st):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, NUMBER)
    st.answer(code, s, NUMBER.question_id, " 2.5 ")
    assert st.tally(code, NUMBER.question_id) == {2.5: 1}


def test_only_the_asked_question_before_reveal(st, clock):
    code, key = st.start()
    s = st.join(code)
    with pytest.raises(AnswerRefused, match="not asking this question"):
        st.answer(code, s, CHOICE.question_id, 1)
    st.ask(code, key, CHOICE)
    with pytest.raises(AnswerRefused, match="not asking this question"):
        st.answer(code, s, NUMBER.question_id, 1)
    st.reveal(code, key)
    assert st.view(code).revealed
    with pytest.raises(AnswerRefused, match="revealed already"):
        st.answer(code, s, CHOICE.question_id, 1)
    st.ask(code, key, NUMBER)
    assert not st.view(code).revealed


def test_throttle_says_how_long_to_wait(st, clock):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, CHOICE)
    for i in range(cr.MAX_ANSWERS_PER_S):
        st.answer(code, s, CHOICE.question_id, i)
        clock.now += 0.1
    with pytest.raises(Throttled, match=r"at most 3 answers a second.*Wait 0\.7 s") as err:
        st.answer(code, s, CHOICE.question_id, 0)
    assert err.value.wait_s == pytest.approx(0.7)
    assert st.my_answer(code, s, CHOICE.question_id) == 2.0  # the throttled one not kept
    other = st.join(code)
    st.answer(code, other, CHOICE.question_id, 0)  # per student: another phone may send
    clock.now += 0.71
    st.answer(code, s, CHOICE.question_id, 0)


def test_rejoin_keeps_the_answers_and_unknown_ids_get_a_new_one(st):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, CHOICE)
    st.answer(code, s, CHOICE.question_id, 2)
    assert st.join(code, s) == s
    assert st.my_answer(code, s, CHOICE.question_id) == 2.0
    assert st.view(code).students == 1
    fresh = st.join(code, "made-up-id")
    assert fresh != "made-up-id" and st.view(code).students == 2
    with pytest.raises(ClassNotFound, match="has not joined"):
        st.answer(code, "made-up-id", CHOICE.question_id, 1)


def test_wrong_teacher_key_is_refused(st):
    code, key = st.start()
    other_code, other_key = st.start()
    for bad in ("", "x" * 32, other_key, None):
        with pytest.raises(NotTeacher, match="teacher key does not match"):
            st.ask(code, bad, CHOICE)
        with pytest.raises(NotTeacher):
            st.end(code, bad)
        with pytest.raises(NotTeacher):
            st.reset(code, bad)
        with pytest.raises(NotTeacher):
            st.set_pool(code, bad, "lab", 4, 4)
    st.ask(code, key, CHOICE)
    with pytest.raises(NotTeacher):
        st.reveal(code, other_key)
    assert not st.view(code).revealed


def test_pools_add_up_and_are_bounded(st):
    code, key = st.start()
    a, b = st.join(code), st.join(code)
    with pytest.raises(ClassroomError, match="has no experiment"):
        st.add_rounds(code, a, "lab", [1, 0, 0], [0, 1, 0, 0])
    st.set_pool(code, key, "lab", 3, 3)  # V = 3, K = 2
    assert st.view(code).pool_name == "lab"
    st.add_rounds(code, a, "lab", [2, 1, 0], [0, 1, 1, 0])
    st.add_rounds(code, b, "lab", [0, 1, 3], [0, 0, 2, 0])
    pool = st.pool(code, "lab")
    assert pool == cr.Pool("lab", students=2, rounds=4, emitted=(2, 2, 3), lengths=(0, 1, 3, 0))
    for emitted, lengths, message in [
        ([1, 0], [0, 1, 0, 0], "3 whole counts"),
        ([1, 0, 0], [0, 1, 0], "4 whole counts"),
        ([1, 0, -1], [0, 1, 0, 0], "none negative"),
        ([0.5, 0, 0], [0, 1, 0, 0], "whole counts"),
        (["a", 0, 0], [0, 1, 0, 0], "whole counts"),
        ([0, 0, 0], [0, 0, 0, 0], "1 to 10,000 rounds"),
        ([0, 0, 0], [0, 0, 0, 10_001], "1 to 10,000 rounds"),
        ([9, 0, 0], [0, 1, 0, 0], "at most 3 tokens"),
    ]:
        with pytest.raises(AnswerRefused, match=message):
            st.add_rounds(code, a, "lab", emitted, lengths)
    assert st.pool(code, "lab") == pool  # refused batches add nothing
    with pytest.raises(ClassroomError, match="V = 2 to 64"):
        st.set_pool(code, key, "big", 65, 4)
    with pytest.raises(ClassroomError, match="K \\+ 1 = 1 to 17"):
        st.set_pool(code, key, "long", 4, 18)
    with pytest.raises(ClassroomError, match="different name"):
        st.set_pool(code, key, "lab", 4, 3)
    for i in range(cr.MAX_POOLS - 1):
        st.set_pool(code, key, f"lab{i}", 3, 3)
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_POOLS} experiments"):
        st.set_pool(code, key, "one-more", 3, 3)


def test_questions_per_class_are_bounded(st):
    code, key = st.start()
    for i in range(cr.MAX_QUESTIONS):
        st.ask(code, key, Asked("p", f"p/{i}", "choice", choices=2))
    st.ask(code, key, Asked("p", "p/0", "choice", choices=2))  # asked again: no new place
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_QUESTIONS} questions"):
        st.ask(code, key, Asked("p", "p/new", "choice", choices=2))


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        (Asked("p", "p/0", "choice", choices=1), "2 to 26 choices"),
        (Asked("p", "p/0", "number", low=2, high=1), "low <= high"),
        (Asked("p", "p/0", "number", low=0, high=float("inf")), "finite range"),
        (Asked("p", "p/0", "text"), "'choice' or 'number'"),
        (Asked("p", "", "choice", choices=2), "question id"),
    ],
)
def test_bad_questions_are_refused(st, asked, message):
    code, key = st.start()
    with pytest.raises(ClassroomError, match=message):
        st.ask(code, key, asked)
    assert st.view(code).asked is None


def test_reset_keeps_students_and_end_ends(st):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, CHOICE)
    st.answer(code, s, CHOICE.question_id, 1)
    st.set_pool(code, key, "lab", 3, 3)
    st.add_rounds(code, s, "lab", [1, 0, 0], [0, 1, 0, 0])
    st.reset(code, key)
    view = st.view(code)
    assert (view.students, view.asked, view.answers, view.pool_name) == (1, None, 0, None)
    assert st.tally(code, CHOICE.question_id) == {}
    with pytest.raises(ClassroomError, match="has no experiment"):
        st.pool(code, "lab")
    assert st.join(code, s) == s
    st.end(code, key)
    with pytest.raises(ClassNotFound, match="has ended"):
        st.view(code)
    with pytest.raises(ClassNotFound):
        st.join(code, s)


def test_nothing_a_student_sends_is_kept_as_text(st):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, NUMBER)
    st.answer(code, s, NUMBER.question_id, "3")
    (value,) = st.tally(code, NUMBER.question_id)
    assert isinstance(value, float)
    with pytest.raises(AnswerRefused):
        st.answer(code, s, NUMBER.question_id, "<b>hi</b>")


def test_many_threads_lose_nothing(clock):
    st = MemoryClassStore(clock=clock)  # a clock that stands still: throttle by count only
    code, key = st.start()
    st.ask(code, key, CHOICE)
    st.set_pool(code, key, "lab", 4, 4)
    students = 120
    errors, throttled = [], []

    def phone(seed: int) -> None:
        rng = random.Random(seed)
        try:
            me = st.join(code)
            st.answer(code, me, CHOICE.question_id, rng.randrange(4))
            st.answer(code, me, CHOICE.question_id, seed % 4)  # replaces the first
            emitted = [1, 2, 0, seed % 3]
            st.add_rounds(code, me, "lab", emitted, [0, 1, 1, 1, 0])
            st.view(code), st.tally(code, CHOICE.question_id), st.pool(code, "lab")
            try:
                st.answer(code, me, CHOICE.question_id, 0)
                st.answer(code, me, CHOICE.question_id, 0)
            except Throttled:
                throttled.append(seed)
                raise
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=phone, args=(i,)) for i in range(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(throttled) == students and len(errors) == students  # the 4th answer, each
    assert all(isinstance(e, Throttled) for e in errors)
    assert st.view(code).students == students and st.view(code).answers == students
    tally = st.tally(code, CHOICE.question_id)
    assert tally == {0.0: students}  # each student's 3rd answer (0) replaced the earlier ones
    pool = st.pool(code, "lab")
    assert pool.students == students and pool.rounds == 3 * students
    assert pool.emitted == (students, 2 * students, 0, sum(i % 3 for i in range(students)))


def test_the_process_store_is_in_process_by_default(monkeypatch):
    monkeypatch.delenv("SPECDEC_STORE", raising=False)
    cr.reset_store_for_tests()
    try:
        assert cr.store() is cr.store()
        assert isinstance(cr.store(), MemoryClassStore)
    finally:
        cr.reset_store_for_tests()
    bad = cr.make_store("http://example")  # no traceback: in-process, and it says why
    code, _ = bad.start()
    assert bad.view(code).backend.startswith("in-process (SPECDEC_STORE is not a redis://")


ODD_CALLS = [
    lambda st, code, s: st.answer(code, s, CHOICE.question_id, 10**400),
    lambda st, code, s: st.answer(code, s, CHOICE.question_id, [1]),
    lambda st, code, s: st.answer(code, ["x"], CHOICE.question_id, 1),
    lambda st, code, s: st.answer(code, s, ["q"], 1),
    lambda st, code, s: st.tally(code, ["q"]),
    lambda st, code, s: st.my_answer(code, s, None),
    lambda st, code, s: st.join(["list"]),
    lambda st, code, s: st.add_rounds(code, s, ["lab"], [1], [1]),
    lambda st, code, s: st.pool(code, None),
]


@pytest.mark.parametrize("call", ODD_CALLS)
def test_odd_input_is_a_clear_refusal_never_a_traceback(st, call):
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, CHOICE)
    with pytest.raises(ClassroomError):
        call(st, code, s)
