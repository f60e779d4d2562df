"""Classes in Redis, shared by every replica (issue 34 item 6), and the in-process fallback.

:class:`RedisClassStore` keeps a class in a few keys that all expire with the class
(``EXPIREAT``, at most :data:`~specdec_ui.runtime.classroom.CLASS_TTL_S` after its start)::

    specdec:cls:index            sorted set code -> expiry (the MAX_CLASSES bound)
    specdec:cls:<code>           hash: key, exp, asked (JSON), qid, rev, pool
    specdec:cls:<code>:st        set of student ids
    specdec:cls:<code>:qs        set of question ids with answers (the MAX_QUESTIONS bound)
    specdec:cls:<code>:a:<qid>   hash student -> answer (a number)
    specdec:cls:<code>:pools     hash experiment -> "V,K+1" (the MAX_POOLS bound)
    specdec:cls:<code>:p:<name>  hash rounds, e<i> (token counts), l<n> (rounds by length)
    specdec:cls:<code>:ps:<name> set of students who pooled
    specdec:cls:<code>:t:<id>:<kind>  list of the phone's last send times (the throttle)

Every change that must check and write together is one Lua script (atomic in Redis): start,
join, ask, set_pool, answer and add_rounds (counts go in with ``HINCRBY``). What is read
(views, tallies, pools) comes from a snapshot of the whole class (:class:`ClassState`).

:class:`ResilientStore` is what :func:`~specdec_ui.runtime.classroom.store` returns for a
``redis://`` URL. It keeps a local copy of every class it has read or written (the last
snapshot, at most :data:`SNAPSHOT_MAX_AGE_S` old, plus this process's own writes since), and
everything shown on a projector is computed from that copy. When Redis stops answering it
says so in ``ClassView.backend`` ("in-process (Redis unreachable: ...)"), moves the copies
into an in-process store and goes on there for the rest of the process's life: nothing
already shown is lost, but replicas no longer share what comes after (each goes on with its
own copy), and it does not go back to Redis by itself (a restart does).
"""

from __future__ import annotations

import dataclasses
import json
import math
import secrets
import threading
import time
from collections.abc import Callable, Sequence

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from specdec_ui.runtime.classroom import (
    CLASS_TTL_S,
    IN_PROCESS,
    MAX_ANSWERS_PER_S,
    MAX_CLASSES,
    MAX_POOLS,
    MAX_QUESTIONS,
    MAX_STUDENTS,
    Asked,
    ClassFull,
    ClassNotFound,
    ClassroomError,
    ClassState,
    ClassView,
    MemoryClassStore,
    NotTeacher,
    Pool,
    PoolState,
    add_batch,
    answerable,
    check_asked,
    check_batch,
    check_name,
    check_pool_shape,
    check_question_id,
    check_value,
    new_code,
    new_student_id,
    new_teacher_key,
    normalise_code,
    not_found,
    pool_of,
    tally_of,
    throttled,
    view_of,
)

PREFIX = "specdec:cls:"
INDEX = PREFIX + "index"
SNAPSHOT_MAX_AGE_S = 0.5  # a view or tally is at most this old (plus this process's writes)
REDIS = "redis"
REDIS_DOWN = (redis.exceptions.RedisError, OSError)  # Redis gone, or answering nonsense
SLOW = (redis.exceptions.TimeoutError, TimeoutError)  # Redis there but slow to answer
DOWN_AFTER_S = 5.0  # only replies that time out for this long (none answered) mean "gone"
MAX_COPIES = 2 * MAX_CLASSES  # local copies of classes kept by one process
MAX_JOURNAL = 20_000  # this process's writes a class's copy re-applies to a newer snapshot

_START = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 'full' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'taken' end
redis.call('HSET', KEYS[2], 'key', ARGV[4], 'exp', ARGV[2], 'asked', '', 'qid', '',
           'rev', '0', 'pool', '', 'seq', '0')
redis.call('EXPIREAT', KEYS[2], math.ceil(tonumber(ARGV[2])))
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 'ok'
"""
_JOIN = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'nf' end
if ARGV[1] ~= '' and redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return ARGV[1] .. ':0'
end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 'full' end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('EXPIREAT', KEYS[2], ARGV[4])
return ARGV[2] .. ':' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
"""
_ASK = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'nf' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
  if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 'full' end
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('EXPIREAT', KEYS[2], ARGV[4])
end
redis.call('HSET', KEYS[1], 'asked', ARGV[2], 'qid', ARGV[1], 'rev', '0')
return 'ok:' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
"""
_SET_POOL = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'nf' end
local shape = redis.call('HGET', KEYS[2], ARGV[1])
if shape and shape ~= ARGV[2] then return shape end
if not shape then
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then return 'full' end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('EXPIREAT', KEYS[2], ARGV[4])
end
redis.call('HSET', KEYS[1], 'pool', ARGV[1])
return 'ok:' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
"""
# The throttle: KEYS[t] is a list of the phone's last sends (newest first), ARGV now, limit.
_THROTTLE = """
local function wait(key, now, limit)
  if redis.call('LLEN', key) >= limit then
    local oldest = tonumber(redis.call('LINDEX', key, limit - 1))
    if now - oldest < 1.0 then return 1.0 - (now - oldest) end
  end
  redis.call('LPUSH', key, now)
  redis.call('LTRIM', key, 0, limit - 1)
  redis.call('PEXPIRE', key, 2000)
  return 0
end
"""
# The whole class at once (atomic): meta, students, answers of the asked question and of
# ARGV[2], every pool with its counts and students. Reads keys under ARGV[1] (the class's prefix).
_SNAPSHOT = """
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return {} end
local base = ARGV[1]
local qid = redis.call('HGET', KEYS[1], 'qid')
local answers = {}
for _, q in ipairs({qid, ARGV[2]}) do
  if q and q ~= '' and (q ~= qid or #answers == 0) then
    answers[#answers + 1] = {q, redis.call('HGETALL', base .. ':a:' .. q)}
  end
end
local shapes = redis.call('HGETALL', base .. ':pools')
local pools = {}
for i = 1, #shapes, 2 do
  local p = base .. ':p:' .. shapes[i]
  pools[#pools + 1] = {shapes[i], shapes[i + 1], redis.call('HGETALL', p),
                       redis.call('SMEMBERS', base .. ':ps:' .. shapes[i])}
end
return {meta, redis.call('SMEMBERS', base .. ':st'), answers, pools}
"""
_ANSWER = (
    _THROTTLE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'nf' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then return 'stranger' end
local q = redis.call('HMGET', KEYS[1], 'qid', 'rev')
if q[1] ~= ARGV[2] then return 'not-asked' end
if q[2] == '1' then return 'revealed' end
local w = wait(KEYS[4], tonumber(ARGV[4]), tonumber(ARGV[5]))
if w > 0 then return tostring(w) end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('EXPIREAT', KEYS[3], ARGV[6])
return 'ok:' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
"""
)
_ADD_ROUNDS = (
    _THROTTLE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'nf' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then return 'stranger' end
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[3] then return 'no-pool' end
local w = wait(KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[5]))
if w > 0 then return tostring(w) end
for i = 7, #ARGV, 2 do redis.call('HINCRBY', KEYS[4], ARGV[i], ARGV[i + 1]) end
redis.call('SADD', KEYS[5], ARGV[1])
redis.call('EXPIREAT', KEYS[4], ARGV[6])
redis.call('EXPIREAT', KEYS[5], ARGV[6])
return 'ok:' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
"""
)


def _k(code: str, *parts: str) -> str:
    return ":".join((PREFIX + code, *parts))


def _asked_json(asked: Asked) -> str:
    return json.dumps(dataclasses.asdict(asked), sort_keys=True)


def _asked_from(text: str) -> Asked | None:
    return Asked(**json.loads(text)) if text else None


def _shape(vocab: int, max_len: int) -> str:
    return f"{vocab},{max_len}"


def _pool_state(shape: str, counts: dict[str, str], students: set[str]) -> PoolState:
    vocab, max_len = (int(x) for x in shape.split(","))
    return PoolState(
        vocab=vocab,
        max_len=max_len,
        rounds=int(counts.get("rounds", 0)),
        emitted=[int(counts.get(f"e{i}", 0)) for i in range(vocab)],
        lengths=[int(counts.get(f"l{n}", 0)) for n in range(max_len + 1)],
        students=students,
    )


def redis_client(url: str) -> redis.Redis:
    """A client of ``url`` as every store of this app uses one (the class store, the held
    speedup figure): text replies, short time-outs, one retry, so that a Redis that went
    away is noticed within seconds and the store falls back in-process."""
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=2.0,
        socket_connect_timeout=1.0,
        retry=Retry(NoBackoff(), 1),
    )


class RedisClassStore:
    """The :class:`~specdec_ui.runtime.classroom.ClassStore` in Redis (all replicas share it).

    Raises the redis client's ``ConnectionError``/``TimeoutError`` when Redis does not answer
    (:class:`ResilientStore` turns those into its fallback)."""

    backend = REDIS

    def __init__(self, client: redis.Redis | str, clock: Callable[[], float] = time.time) -> None:
        if isinstance(client, str):
            client = redis_client(client)
        self.r, self.clock = client, clock
        self._scripts = {
            name: client.register_script(text)
            for name, text in {
                "start": _START,
                "join": _JOIN,
                "ask": _ASK,
                "set_pool": _SET_POOL,
                "answer": _ANSWER,
                "add_rounds": _ADD_ROUNDS,
                "snapshot": _SNAPSHOT,
            }.items()
        }
        self._tls = threading.local()  # .seq: the class's change number of this thread's last write

    # ---- the teacher
    def start(self) -> tuple[str, str]:
        now = self.clock()
        expires = now + CLASS_TTL_S
        while True:
            code, key = new_code(), new_teacher_key()
            done = self._scripts["start"](
                keys=[INDEX, _k(code)],
                args=[repr(now), repr(expires), code, key, MAX_CLASSES, CLASS_TTL_S + 60],
            )
            if done == "full":
                raise ClassFull(
                    f"This server holds at most {MAX_CLASSES} classes at a time and all are "
                    "in use. Try again when a class ends (classes end after "
                    f"{CLASS_TTL_S // 3600} hours at most)."
                )
            if done == "ok":
                return code, key

    def ask(self, code: str, teacher_key: str, asked: Asked) -> None:
        asked = check_asked(asked)
        code, meta = self._teacher(code, teacher_key)
        done = self._scripts["ask"](
            keys=[_k(code), _k(code, "qs")],
            args=[asked.question_id, _asked_json(asked), MAX_QUESTIONS, _exp(meta)],
        )
        self._outcome(code, done, "questions")

    def reveal(self, code: str, teacher_key: str) -> None:
        code, meta = self._teacher(code, teacher_key)
        if not meta.get("asked"):
            raise ClassroomError(f"Class {code} has no question asked to reveal.")
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(_k(code), "rev", "1").hincrby(_k(code), "seq", 1)
            self._tls.seq = pipe.execute()[1]

    def set_pool(self, code: str, teacher_key: str, name: str, vocab: int, max_len: int) -> None:
        check_name("experiment name", name)
        vocab, max_len = check_pool_shape(vocab, max_len)
        code, meta = self._teacher(code, teacher_key)
        done = self._scripts["set_pool"](
            keys=[_k(code), _k(code, "pools")],
            args=[name, _shape(vocab, max_len), MAX_POOLS, _exp(meta)],
        )
        if "," in done:
            v, k1 = done.split(",")
            raise ClassroomError(
                f"The experiment {name!r} pools V = {v}, K + 1 = {k1}; "
                "a different V or K needs a different name."
            )
        self._outcome(code, done, "experiments")

    def reset(self, code: str, teacher_key: str) -> None:
        code, _ = self._teacher(code, teacher_key)
        with self.r.pipeline(transaction=True) as pipe:
            pipe.delete(*self._answer_and_pool_keys(code), _k(code, "qs"), _k(code, "pools"))
            pipe.hset(_k(code), mapping={"asked": "", "qid": "", "rev": "0", "pool": ""})
            pipe.hincrby(_k(code), "seq", 1)
            self._tls.seq = pipe.execute()[-1]

    def end(self, code: str, teacher_key: str) -> None:
        code, _ = self._teacher(code, teacher_key)
        self._drop(code)

    # ---- the phones
    def join(self, code: str, student: str | None = None) -> str:
        code = normalise_code(code)
        meta = self._meta(code)
        known = student if isinstance(student, str) and len(student) <= 64 else ""
        got = self._scripts["join"](
            keys=[_k(code), _k(code, "st")],
            args=[known, new_student_id(), MAX_STUDENTS, _exp(meta)],
        )
        if got == "full":
            raise ClassFull(f"Class {code} is full: at most {MAX_STUDENTS} students a class.")
        if got == "nf":
            raise not_found(code)
        student_id, _, seq = got.rpartition(":")
        self._tls.seq = int(seq)
        return student_id

    def answer(self, code: str, student: str, question_id: str, value: float) -> float:
        code = normalise_code(code)
        meta = self._meta(code)
        state = ClassState(code, "", _exp(meta), _asked_from(meta.get("asked", "")))
        state.revealed = meta.get("rev") == "1"
        number = check_value(answerable(state, question_id), value)
        done = self._scripts["answer"](
            keys=[_k(code), _k(code, "st"), _k(code, "a", question_id), _throttle(code, student)],
            args=[str(student), question_id, repr(number), repr(self.clock())]
            + [MAX_ANSWERS_PER_S, _exp(meta)],
        )
        self._outcome(code, done, "answers", state)
        return number  # (ResilientStore's local copy keeps it)

    def add_rounds(
        self, code: str, student: str, name: str, emitted: Sequence[int], lengths: Sequence[int]
    ) -> None:
        check_name("experiment name", name)
        code = normalise_code(code)
        meta = self._meta(code)
        shape = self.r.hget(_k(code, "pools"), name)
        if shape is None:
            pool_of(ClassState(code, "", 0.0), str(name))  # raises the message
        found = _pool_state(shape, {}, set())
        emitted_counts, length_counts = check_batch(found, emitted, lengths)
        counts = [("rounds", sum(length_counts))]
        counts += [(f"e{i}", c) for i, c in enumerate(emitted_counts) if c]
        counts += [(f"l{n}", c) for n, c in enumerate(length_counts) if c]
        keys = [_k(code), _k(code, "st"), _k(code, "pools"), _k(code, "p", name)]
        keys += [_k(code, "ps", name), _throttle(code, student, "rounds")]
        args = [str(student), name, shape, repr(self.clock()), MAX_ANSWERS_PER_S, _exp(meta)]
        done = self._scripts["add_rounds"](keys=keys, args=args + [x for kv in counts for x in kv])
        self._outcome(code, done, "batches of rounds")

    # ---- reading
    def view(self, code: str) -> ClassView:
        return view_of(self.snapshot(code), REDIS)

    def my_answer(self, code: str, student: str, question_id: str) -> float | None:
        check_question_id(question_id)
        code = normalise_code(code)
        self._meta(code)
        found = self.r.hget(_k(code, "a", question_id), str(student))
        return None if found is None else float(found)

    def tally(self, code: str, question_id: str) -> dict[float, int]:
        check_question_id(question_id)
        return tally_of(self.snapshot(code, question_id), question_id)

    def pool(self, code: str, name: str) -> Pool:
        check_name("experiment name", name)
        return pool_of(self.snapshot(code), name)

    def snapshot(self, code: str, question_id: str | None = None) -> ClassState:
        """The whole class as a :class:`ClassState`: students, the answers of the asked
        question (and of ``question_id``), every pool. ClassNotFound when it is gone."""
        code = normalise_code(code)
        got = self._scripts["snapshot"](keys=[_k(code)], args=[_k(code), question_id or ""])
        meta = _pairs(got[0]) if got else {}
        self._check_alive(code, meta)
        state = ClassState(code, meta["key"], float(meta["exp"]), _asked_from(meta["asked"]))
        state.revealed, state.pool_name = meta["rev"] == "1", meta["pool"] or None
        state.seq = int(meta.get("seq", 0))
        state.students = set(got[1])
        for qid, answers in got[2]:
            state.answers[qid] = {s: float(v) for s, v in _pairs(answers).items()}
        for name, shape, counts, students in got[3]:
            state.pools[name] = _pool_state(shape, _pairs(counts), set(students))
        return state

    # ---------------------------------------------------------------- helpers
    def _meta(self, code: str) -> dict[str, str]:
        meta = self.r.hgetall(_k(code))
        self._check_alive(code, meta)
        return meta

    def _check_alive(self, code: str, meta: dict[str, str]) -> None:
        if not meta:
            raise not_found(code)
        if float(meta["exp"]) <= self.clock():
            self._drop(code)  # expired (Redis drops it too, at its EXPIREAT)
            raise not_found(code)

    def _teacher(self, code: str, teacher_key: str) -> tuple[str, dict[str, str]]:
        code = normalise_code(code)
        meta = self._meta(code)
        if not (isinstance(teacher_key, str) and secrets.compare_digest(teacher_key, meta["key"])):
            raise NotTeacher(
                f"Only the teacher's browser that started class {code} can do this "
                "(its teacher key does not match)."
            )
        return code, meta

    def _answer_and_pool_keys(self, code: str) -> list[str]:
        with self.r.pipeline(transaction=False) as pipe:
            pipe.smembers(_k(code, "qs")).hkeys(_k(code, "pools"))
            qids, names = pipe.execute()
        keys = [_k(code, "a", q) for q in qids]
        return keys + [_k(code, part, n) for n in names for part in ("p", "ps")]

    def _drop(self, code: str) -> None:
        keys = self._answer_and_pool_keys(code)
        for student in self.r.smembers(_k(code, "st")):  # the throttles (2 s TTL) go too
            keys += [_throttle(code, student, kind) for kind in ("answer", "rounds")]
        keys += [_k(code, part) for part in ("st", "qs", "pools")]
        with self.r.pipeline(transaction=True) as pipe:
            pipe.delete(_k(code), *keys).zrem(INDEX, code)
            pipe.execute()

    def _outcome(
        self, code: str, done: str, kind: str = "", state: ClassState | None = None
    ) -> None:
        """Turn a script's answer into the refusal it stands for (or nothing for 'ok:<seq>')."""
        if done.startswith("ok:"):
            self._tls.seq = int(done[3:])
            return
        if done == "nf":
            raise not_found(code)
        if done == "full" and kind == "questions":
            raise ClassFull(
                f"A class keeps the answers of at most {MAX_QUESTIONS} questions; "
                "reset the class to ask more."
            )
        if done == "full":
            raise ClassFull(
                f"A class pools at most {MAX_POOLS} experiments; reset the class to open more."
            )
        if done == "stranger":
            raise ClassNotFound(
                f"This phone has not joined class {code} (or the class was restarted): "
                "open the join link or type the code again."
            )
        if done in ("not-asked", "revealed") and state is not None:
            state.asked, state.revealed = None, done == "revealed"
            answerable(state, "")  # raises the message
        if done == "no-pool":
            pool_of(ClassState(code, "", 0.0), "")  # raises the message
        raise throttled(kind, float(done))


def _pairs(flat: list[str]) -> dict[str, str]:
    """A Lua HGETALL's flat [field, value, ...] as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _exp(meta: dict[str, str]) -> int:
    return math.ceil(float(meta["exp"]))


def _throttle(code: str, student: str, kind: str = "answer") -> str:
    return _k(code, "t", str(student)[:64], kind)


class StoreBusy(ClassroomError):
    """Redis took too long to answer (it is there, but busy): try again in a moment."""


class ResilientStore:
    """Redis while it answers; in-process from the local copies once it does not."""

    def __init__(self, client: redis.Redis | str, clock: Callable[[], float] = time.time) -> None:
        self.primary = RedisClassStore(client, clock)
        self.local = MemoryClassStore(clock)
        self.down: str | None = None  # the fallback's message, once Redis has gone away
        self._lock = threading.Lock()
        self._copies: dict[str, tuple[float, ClassState]] = {}  # code -> (read at, state)
        self._refreshing: set[str] = set()
        # code -> this process's writes (seq, change, result) not yet in the copy's snapshot
        self._journal: dict[str, list[tuple[int, Callable, object]]] = {}
        self._slow_since: float | None = None  # first timeout since Redis last answered

    @property
    def backend(self) -> str:
        return self.down or REDIS

    # ---- the teacher
    def start(self) -> tuple[str, str]:
        return self._write("", self.primary.start, self.local.start, _refresh_after)

    def ask(self, code: str, teacher_key: str, asked: Asked) -> None:
        def copy(state: ClassState, _: object) -> None:
            state.asked, state.revealed = asked, False
            state.answers.setdefault(asked.question_id, {})

        self._write(
            code,
            lambda: self.primary.ask(code, teacher_key, asked),
            lambda: self.local.ask(code, teacher_key, asked),
            copy,
        )

    def reveal(self, code: str, teacher_key: str) -> None:
        def copy(state: ClassState, _: object) -> None:
            state.revealed = True

        self._write(
            code,
            lambda: self.primary.reveal(code, teacher_key),
            lambda: self.local.reveal(code, teacher_key),
            copy,
        )

    def set_pool(self, code: str, teacher_key: str, name: str, vocab: int, max_len: int) -> None:
        def copy(state: ClassState, _: object) -> None:
            state.pools.setdefault(name, PoolState(vocab, max_len))
            state.pool_name = name

        self._write(
            code,
            lambda: self.primary.set_pool(code, teacher_key, name, vocab, max_len),
            lambda: self.local.set_pool(code, teacher_key, name, vocab, max_len),
            copy,
        )

    def reset(self, code: str, teacher_key: str) -> None:
        def copy(state: ClassState, _: object) -> None:
            state.asked, state.revealed, state.pool_name = None, False, None
            state.answers.clear()
            state.pools.clear()

        self._write(
            code,
            lambda: self.primary.reset(code, teacher_key),
            lambda: self.local.reset(code, teacher_key),
            copy,
        )

    def end(self, code: str, teacher_key: str) -> None:
        self._write(
            code,
            lambda: self.primary.end(code, teacher_key),
            lambda: self.local.end(code, teacher_key),
            None,
        )

    # ---- the phones
    def join(self, code: str, student: str | None = None) -> str:
        def copy(state: ClassState, got: str) -> None:
            state.students.add(got)

        return self._write(
            code,
            lambda: self.primary.join(code, student),
            lambda: self.local.join(code, student),
            copy,
        )

    def answer(self, code: str, student: str, question_id: str, value: float) -> None:
        def copy(state: ClassState, number: float) -> None:
            state.answers.setdefault(question_id, {})[student] = number

        self._write(
            code,
            lambda: self.primary.answer(code, student, question_id, value),
            lambda: self.local.answer(code, student, question_id, value),
            copy,
        )

    def add_rounds(
        self, code: str, student: str, name: str, emitted: Sequence[int], lengths: Sequence[int]
    ) -> None:
        def copy(state: ClassState, _: object) -> None:
            found = state.pools.get(name)
            if found is None:
                raise LookupError(name)  # the copy is older than the pool: read it afresh
            add_batch(found, student, *check_batch(found, emitted, lengths))

        self._write(
            code,
            lambda: self.primary.add_rounds(code, student, name, emitted, lengths),
            lambda: self.local.add_rounds(code, student, name, emitted, lengths),
            copy,
        )

    # ---- reading: from the local copy (so what was shown is what the fallback keeps)
    def view(self, code: str) -> ClassView:
        return self._read(code, lambda state: view_of(state, REDIS), self.local.view)

    def my_answer(self, code: str, student: str, question_id: str) -> float | None:
        if self.down is None:
            try:
                found = self.primary.my_answer(code, student, question_id)
                self._slow_since = None  # Redis answered
                return found
            except REDIS_DOWN as err:
                self._trouble(err)
        return self.local.my_answer(code, student, question_id)

    def tally(self, code: str, question_id: str) -> dict[float, int]:
        check_question_id(question_id)
        return self._read(
            code,
            lambda state: tally_of(state, question_id),
            lambda c: self.local.tally(c, question_id),
            question_id,
        )

    def pool(self, code: str, name: str) -> Pool:
        check_name("experiment name", name)
        return self._read(
            code, lambda state: pool_of(state, name), lambda c: self.local.pool(c, name)
        )

    def copies(self) -> list[str]:
        """The codes this process holds a local copy of (for tests)."""
        with self._lock:
            return sorted(self._copies)

    # ---------------------------------------------------------------- the machinery
    def _write(self, code: str, on_redis: Callable, on_local: Callable, copy: Callable | None):  # noqa: ANN202
        """Write to Redis and apply the same change to the local copy; in-process once Redis
        has gone away (or goes away during this write)."""
        if self.down is None:
            try:
                self.primary._tls.seq = 0
                result = on_redis()
                self._slow_since = None  # Redis answered
                self._copy_write(code or result[0], copy, result, self.primary._tls.seq)
                return result
            except REDIS_DOWN as err:
                self._trouble(err)
        return on_local()

    def _copy_write(self, code: str, copy: Callable | None, result: object, seq: int) -> None:
        """Apply this process's write (the class's change number ``seq``) to the local copy
        now, and journal it for a snapshot that was read before it landed."""
        code = normalise_code(code)
        with self._lock:
            entry = self._copies.get(code)
            if copy is None:
                self._copies.pop(code, None)
                self._journal.pop(code, None)
                return
            if seq:
                journal = self._journal.setdefault(code, [])
                journal.append((seq, copy, result))
                del journal[:-MAX_JOURNAL]
            if entry is not None and entry[1].seq >= seq:
                return  # the copy already holds it
            if entry is not None and _apply(entry[1], [(seq, copy, result)]):
                return
            self._copies.pop(code, None)  # read afresh below
        self._fresh(code, None)

    def _read(self, code: str, compute: Callable, on_local: Callable, question_id=None):  # noqa: ANN001, ANN202
        if self.down is None:
            try:
                state = self._fresh(normalise_code(code), question_id)
                with self._lock:
                    return compute(state)
            except REDIS_DOWN as err:
                self._trouble(err)
        return on_local(code)

    def _fresh(self, code: str, question_id: str | None) -> ClassState:
        """The local copy of ``code``, read afresh from Redis when older than
        SNAPSHOT_MAX_AGE_S (one reader at a time: the others use the copy meanwhile)."""
        now = time.monotonic()
        with self._lock:
            entry = self._copies.get(code)
            has = entry is not None and (question_id is None or question_id in entry[1].answers)
            if has and (now - entry[0] <= SNAPSHOT_MAX_AGE_S or code in self._refreshing):
                return entry[1]
            self._refreshing.add(code)
        try:
            state = self.primary.snapshot(code, question_id)
            self._slow_since = None  # Redis answered
        except ClassNotFound:
            with self._lock:
                self._copies.pop(code, None)
            raise
        finally:
            with self._lock:
                self._refreshing.discard(code)
        with self._lock:
            journal = [w for w in self._journal.get(code, []) if w[0] > state.seq]
            self._journal[code] = journal  # the snapshot holds the rest
            _apply(state, sorted(journal, key=lambda w: w[0]))
            self._copies[code] = (now, state)
            while len(self._copies) > MAX_COPIES:
                oldest = min(self._copies, key=lambda c: self._copies[c][0])
                del self._copies[oldest]
                self._journal.pop(oldest, None)
        return state

    def _trouble(self, err: BaseException) -> None:
        """Redis failed: a refused or broken connection means it has gone (fall back now);
        a timeout is only "busy" (:class:`StoreBusy`) until replies have timed out, with no
        reply in between, for :data:`DOWN_AFTER_S`."""
        if isinstance(err, SLOW):
            now = time.monotonic()
            with self._lock:
                self._slow_since = self._slow_since or now
                busy = now - self._slow_since < DOWN_AFTER_S
            if busy:
                raise StoreBusy(
                    "The class store (Redis) did not answer in time, the server is busy: "
                    "try again in a moment."
                ) from None
        self._fall(err)

    def _fall(self, err: BaseException) -> None:
        """Redis has gone away: the local copies go on in-process from now on."""
        with self._lock:
            if self.down is not None:
                return
            reason = " ".join(f"{type(err).__name__}: {err}".split())[:120]
            message = f"{IN_PROCESS} (Redis unreachable: {reason}; the class goes on in this "
            message += "server only, with everything shown so far)"
            self.local.label = message
            for _, state in self._copies.values():
                self.local.adopt(state)
            self.down = message


def _apply(state: ClassState, writes: list[tuple[int, Callable, object]]) -> bool:
    """Apply this process's writes to ``state``; False when one does not fit. ``state.seq``
    stays its snapshot's: writes of this process land out of order across threads."""
    for _, copy, result in writes:
        try:
            copy(state, result)
        except (LookupError, ClassroomError):
            return False
    return True


def _refresh_after(state: ClassState, result: object) -> None:
    """start(): there is no copy yet; :meth:`ResilientStore._copy_write` reads one."""
    raise LookupError("no copy yet")
