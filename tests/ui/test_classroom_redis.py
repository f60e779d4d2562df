"""The class store in Redis (issue 34 item 6), against a real ``redis-server`` this module
starts on a free loopback port, and its fallback when that server is killed mid-lesson.

Needs Debian's ``redis-server`` and the ``redis`` client (requirements.txt). Without them the
tests skip with a reason, unless ``SPECDEC_REQUIRE_OPTIONAL=1`` (CI's full tier, which
installs redis-server), where a missing one is a failure.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from benchmarks.redis_server import REDIS_SERVER, run_redis
from specdec_ui.runtime import classroom as cr
from specdec_ui.runtime.classroom import (
    AnswerRefused,
    Asked,
    ClassFull,
    ClassNotFound,
    ClassroomError,
    NotTeacher,
    Throttled,
)
from tests.ui.conftest import missing  # the Redis fixtures (server, client) live there too

try:
    import redis

    from specdec_ui.runtime.classroom_redis import (
        PREFIX,
        SNAPSHOT_MAX_AGE_S,
        RedisClassStore,
        ResilientStore,
    )
except ImportError:  # pragma: no cover - only where the client is not installed
    redis = None

from tests.ui.test_classroom_store import ODD_CALLS  # noqa: E402

CHOICE = Asked("Step_through_a_round", "Step_through_a_round/0", "choice", choices=4)
NUMBER = Asked("Speedup_explorer", "Speedup_explorer/1", "number", low=0.0, high=5.0)


class Clock:
    """Starts at the real time (Redis expires keys by the real clock), then moved by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def st(client, clock):
    return RedisClassStore(client, clock=clock)


def test_a_whole_lesson_in_redis(st, client, clock):
    code, key = st.start()
    assert set(code) <= set(cr.CODE_ALPHABET) and len(code) == cr.CODE_LENGTH
    a, b = st.join(code), st.join(code.lower())
    st.ask(code, key, CHOICE)
    st.answer(code, a, CHOICE.question_id, 1)
    st.answer(code, b, CHOICE.question_id, 3)
    st.answer(code, a, CHOICE.question_id, 2)  # replaces a's 1
    view = st.view(code)
    assert (view.students, view.answers, view.asked, view.backend) == (2, 2, CHOICE, "redis")
    assert st.tally(code, CHOICE.question_id) == {2.0: 1, 3.0: 1}
    assert st.my_answer(code, a, CHOICE.question_id) == 2.0
    st.reveal(code, key)
    with pytest.raises(AnswerRefused, match="revealed already"):
        st.answer(code, b, CHOICE.question_id, 0)
    st.set_pool(code, key, "lab", 3, 3)
    st.add_rounds(code, a, "lab", [2, 1, 0], [0, 1, 1, 0])
    st.add_rounds(code, b, "lab", [0, 1, 3], [0, 0, 2, 0])
    assert st.pool(code, "lab") == cr.Pool("lab", 2, 4, (2, 2, 3), (0, 1, 3, 0))
    assert st.view(code).pool_name == "lab"
    # Every key of the class expires with it (at most 3 hours).
    for name in client.scan_iter(f"{PREFIX}{code}*"):
        assert 0 < client.ttl(name) <= cr.CLASS_TTL_S + 1, name
    st.reset(code, key)
    view = st.view(code)
    assert (view.students, view.asked, view.answers, view.pool_name) == (2, None, 0, None)
    assert st.join(code, a) == a
    st.end(code, key)
    with pytest.raises(ClassNotFound, match="has ended"):
        st.view(code)
    assert list(client.scan_iter(f"{PREFIX}{code}*")) == []


def test_refusals_match_the_in_process_store(st, clock):
    code, key = st.start()
    s = st.join(code)
    with pytest.raises(NotTeacher, match="teacher key does not match"):
        st.ask(code, "x" * 32, CHOICE)
    with pytest.raises(AnswerRefused, match="not asking this question"):
        st.answer(code, s, CHOICE.question_id, 1)
    st.ask(code, key, NUMBER)
    for bad in (5.5, "two", float("nan"), True):
        with pytest.raises(AnswerRefused, match="from 0 to 5"):
            st.answer(code, s, NUMBER.question_id, bad)
    with pytest.raises(ClassNotFound, match="has not joined"):
        st.answer(code, "made-up", NUMBER.question_id, 1)
    with pytest.raises(ClassroomError, match="has no experiment"):
        st.add_rounds(code, s, "lab", [1, 0], [0, 1])
    st.set_pool(code, key, "lab", 3, 3)
    with pytest.raises(AnswerRefused, match="3 whole counts"):
        st.add_rounds(code, s, "lab", [1, 0], [0, 1, 0, 0])
    with pytest.raises(ClassroomError, match="different name"):
        st.set_pool(code, key, "lab", 4, 3)
    with pytest.raises(ClassNotFound, match="No class has the code"):
        st.join("ZZZZZZ")
    for i in range(cr.MAX_ANSWERS_PER_S):
        st.answer(code, s, NUMBER.question_id, i)
        clock.now += 0.1
    with pytest.raises(Throttled, match=r"Wait 0\.7 s"):
        st.answer(code, s, NUMBER.question_id, 4)
    assert st.my_answer(code, s, NUMBER.question_id) == 2.0
    clock.now += 0.71
    st.answer(code, s, NUMBER.question_id, 4)


def test_bounds_hold_in_redis(st):
    codes = [st.start() for _ in range(cr.MAX_CLASSES)]
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_CLASSES} classes"):
        st.start()
    code, key = codes[0]
    for _ in range(cr.MAX_STUDENTS):
        st.join(code)
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_STUDENTS} students"):
        st.join(code)
    for i in range(cr.MAX_POOLS):
        st.set_pool(code, key, f"lab{i}", 2, 2)
    with pytest.raises(ClassFull, match=f"at most {cr.MAX_POOLS} experiments"):
        st.set_pool(code, key, "one-more", 2, 2)
    st.end(code, key)
    st.start()  # an ended class frees its place


def test_classes_expire_after_three_hours(st, clock):
    code, key = st.start()
    clock.now += cr.CLASS_TTL_S
    with pytest.raises(ClassNotFound, match="older than 3 hours"):
        st.view(code)
    for _ in range(cr.MAX_CLASSES):
        st.start()  # the expired class no longer counts


def test_many_threads_count_everything_once(st, clock):
    code, key = st.start()
    st.ask(code, key, CHOICE)
    st.set_pool(code, key, "lab", 4, 4)
    n = 60
    errors: list[BaseException] = []

    def phone(i: int) -> None:
        try:
            me = st.join(code)
            st.answer(code, me, CHOICE.question_id, i % 4)
            st.add_rounds(code, me, "lab", [1, 1, 0, 1], [0, 1, 1, 0, 0])
        except BaseException as err:  # noqa: BLE001 - asserted below
            errors.append(err)

    threads = [threading.Thread(target=phone, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert st.tally(code, CHOICE.question_id) == {float(v): n // 4 for v in range(4)}
    pool = st.pool(code, "lab")
    assert (pool.students, pool.rounds, pool.emitted) == (n, 2 * n, (n, n, 0, n))
    assert pool.lengths == (0, n, n, 0, 0)


def test_two_stores_share_one_class(client, server):
    one, two = ResilientStore(server.url), ResilientStore(server.url)
    code, key = one.start()
    student = two.join(code)
    one.ask(code, key, CHOICE)
    two.answer(code, student, CHOICE.question_id, 2)
    assert two.my_answer(code, student, CHOICE.question_id) == 2.0
    time.sleep(SNAPSHOT_MAX_AGE_S + 0.05)  # what one replica reads is at most this old
    assert one.tally(code, CHOICE.question_id) == {2.0: 1}
    with pytest.raises(NotTeacher):
        two.reveal(code, "not-the-key")
    two.reveal(code, key)  # the key works on any replica
    time.sleep(SNAPSHOT_MAX_AGE_S + 0.05)
    assert one.view(code).revealed and one.view(code).backend == "redis"


def test_redis_killed_mid_lesson_the_class_goes_on_in_process():
    if redis is None:
        missing("the redis client is not installed (pip install -r requirements.txt)")
    if not REDIS_SERVER.exists():
        missing(f"{REDIS_SERVER} not found: install Debian's redis-server")
    with run_redis() as own:
        projector, phones = ResilientStore(own.url), ResilientStore(own.url)
        code, key = projector.start()
        ids = [phones.join(code) for _ in range(5)]
        projector.ask(code, key, CHOICE)
        projector.set_pool(code, key, "lab", 3, 3)
        for i, s in enumerate(ids):
            phones.answer(code, s, CHOICE.question_id, i % 2)
            phones.add_rounds(code, s, "lab", [1, 0, 1], [0, 1, 0, 0])
        time.sleep(SNAPSHOT_MAX_AGE_S + 0.05)  # the projector reads afresh: what it shows
        shown = (projector.view(code), projector.tally(code, CHOICE.question_id))
        shown_pool = projector.pool(code, "lab")
        assert shown[0].answers == 5 and shown_pool.rounds == 5
        own.kill()  # Redis goes away mid-lesson
        time.sleep(SNAPSHOT_MAX_AGE_S + 0.05)  # the next refresh of the projector's panel
        view = projector.view(code)  # no traceback: a message, and the class goes on
        assert view.backend.startswith("in-process (Redis unreachable:")
        assert (view.students, view.answers, view.asked) == (5, 5, CHOICE)
        assert projector.tally(code, CHOICE.question_id) == shown[1]
        assert projector.pool(code, "lab") == shown_pool
        projector.reveal(code, key)  # the teacher key still works
        assert projector.view(code).revealed
        # A phone on the same server (this process) goes on too: its copy, its own answers.
        assert phones.my_answer(code, ids[0], CHOICE.question_id) == 0.0
        assert phones.view(code).backend.startswith("in-process (Redis unreachable:")
        phones.add_rounds(code, ids[0], "lab", [0, 1, 0], [0, 1, 0, 0])
        assert phones.pool(code, "lab").rounds == 6
        assert phones.join(code, ids[1]) == ids[1]
        new_code, _ = projector.start()  # new classes start in-process
        assert projector.view(new_code).students == 0


def test_a_slow_redis_is_busy_first_and_gone_only_after_a_while(monkeypatch):
    if redis is None or not REDIS_SERVER.exists():
        missing(f"{REDIS_SERVER} or the redis client not found: install both")
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from specdec_ui.runtime import classroom_redis as crr

    with run_redis() as own:
        quick = redis.Redis.from_url(
            own.url, decode_responses=True, socket_timeout=0.3, retry=Retry(NoBackoff(), 0)
        )
        st = ResilientStore(quick)
        code, key = st.start()
        s = st.join(code)
        st.ask(code, key, CHOICE)
        monkeypatch.setattr(crr, "DOWN_AFTER_S", 1.0)
        own.proc.send_signal(signal.SIGSTOP)  # Redis hangs: replies time out
        try:
            with pytest.raises(crr.StoreBusy, match="did not answer in time"):
                st.answer(code, s, CHOICE.question_id, 1)
            assert st.down is None
            time.sleep(1.0)
            st.answer(code, s, CHOICE.question_id, 2)  # still no reply after 1 s: gone
            assert st.view(code).backend.startswith("in-process (Redis unreachable: Timeout")
            assert st.tally(code, CHOICE.question_id) == {2.0: 1}
        finally:
            own.proc.send_signal(signal.SIGCONT)


def test_the_process_store_follows_specdec_store(monkeypatch, server, client):
    # client: an empty database (another test of this module may have filled every class)
    monkeypatch.setenv("SPECDEC_STORE", server.url)
    cr.reset_store_for_tests()
    try:
        made = cr.store()
        assert isinstance(made, ResilientStore) and made is cr.store()
        code, _ = made.start()
        assert made.view(code).backend == "redis"
    finally:
        cr.reset_store_for_tests()


def test_an_unreachable_redis_from_the_start_falls_back_with_a_message():
    if redis is None:
        missing("the redis client is not installed (pip install -r requirements.txt)")
    from benchmarks.local_server import free_port

    lonely = ResilientStore(f"redis://127.0.0.1:{free_port()}/0")
    code, key = lonely.start()
    view = lonely.view(code)
    assert view.backend.startswith("in-process (Redis unreachable: ConnectionError")
    lonely.ask(code, key, CHOICE)
    s = lonely.join(code)
    lonely.answer(code, s, CHOICE.question_id, 1)
    assert lonely.tally(code, CHOICE.question_id) == {1.0: 1}


@pytest.mark.parametrize("call", ODD_CALLS)
def test_odd_input_is_a_clear_refusal_in_redis_too(client, server, call):
    st = ResilientStore(server.url)
    code, key = st.start()
    s = st.join(code)
    st.ask(code, key, CHOICE)
    with pytest.raises(ClassroomError):
        call(st, code, s)
    assert st.view(code).backend == "redis"  # refused, not taken for Redis trouble


def test_the_local_copy_holds_every_write_of_this_process_through_racing_reads(monkeypatch):
    """Snapshots read while this process writes (every read refreshes here): after Redis is
    killed, the in-process class holds every answer and round this process sent."""
    if redis is None or not REDIS_SERVER.exists():
        missing(f"{REDIS_SERVER} or the redis client not found: install both")
    from specdec_ui.runtime import classroom_redis as crr

    monkeypatch.setattr(crr, "SNAPSHOT_MAX_AGE_S", 0.0)
    with run_redis() as own:
        st = ResilientStore(own.url)
        code, key = st.start()
        st.ask(code, key, CHOICE)
        st.set_pool(code, key, "lab", 4, 4)
        n, stop = 40, threading.Event()

        def reader() -> None:
            while not stop.is_set():
                st.view(code), st.pool(code, "lab"), st.tally(code, CHOICE.question_id)

        def phone(i: int) -> None:
            me = st.join(code)
            st.answer(code, me, CHOICE.question_id, i % 4)
            for _ in range(2):
                st.add_rounds(code, me, "lab", [1, 0, 1, 0], [0, 1, 0, 0, 0])

        readers = [threading.Thread(target=reader) for _ in range(3)]
        phones = [threading.Thread(target=phone, args=(i,)) for i in range(n)]
        for t in readers + phones:
            t.start()
        for t in phones:
            t.join()
        stop.set()
        for t in readers:
            t.join()
        own.kill()
        view = st.view(code)
        assert view.backend.startswith("in-process (Redis unreachable:")
        assert (view.students, view.answers) == (n, n)
        assert st.tally(code, CHOICE.question_id) == {float(v): n // 4 for v in range(4)}
        pool = st.pool(code, "lab")
        assert (pool.students, pool.rounds, pool.emitted) == (n, 2 * n, (2 * n, 0, 2 * n, 0))


def test_a_write_that_lands_while_a_snapshot_is_read_stays_in_the_copy(monkeypatch):
    """The race made certain: this process answers while its snapshot is on the way (read
    before the answer landed). The copy must still hold the answer when Redis then dies."""
    if redis is None or not REDIS_SERVER.exists():
        missing(f"{REDIS_SERVER} or the redis client not found: install both")
    from specdec_ui.runtime import classroom_redis as crr

    monkeypatch.setattr(crr, "SNAPSHOT_MAX_AGE_S", 0.0)
    with run_redis() as own:
        st = ResilientStore(own.url)
        code, key = st.start()
        a, b = st.join(code), st.join(code)
        st.ask(code, key, CHOICE)
        st.set_pool(code, key, "lab", 4, 4)
        st.view(code)  # a copy exists
        read = st.primary.snapshot

        def slow_snapshot(*args, **kwargs):
            state = read(*args, **kwargs)  # read now, handed back after b's writes landed
            monkeypatch.setattr(st.primary, "snapshot", read)
            st.answer(code, b, CHOICE.question_id, 3)
            st.add_rounds(code, b, "lab", [1, 1, 0, 0], [0, 2, 0, 0, 0])
            return state

        st.answer(code, a, CHOICE.question_id, 1)
        monkeypatch.setattr(st.primary, "snapshot", slow_snapshot)
        st.view(code)  # stores the snapshot read before b's writes
        own.kill()
        time.sleep(0.01)
        assert st.view(code).backend.startswith("in-process (Redis unreachable:")
        assert st.tally(code, CHOICE.question_id) == {1.0: 1, 3.0: 1}
        assert st.pool(code, "lab").rounds == 2
