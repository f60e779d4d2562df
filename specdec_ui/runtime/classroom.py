"""Class sessions (issue 34): a class's code, its students, the question asked, the answers
(counts only) and the pooled Monte Carlo counts of its phones.

Two backends implement :class:`ClassStore`: :class:`MemoryClassStore` (the default: one lock,
in this process; a restart ends its classes) and, when ``SPECDEC_STORE=redis://host:port/db``
is set, :class:`specdec_ui.runtime.classroom_redis.ResilientStore` (classes shared by every
replica through Redis; if Redis goes away it carries on in-process from its local copy).
:func:`store` returns the process's store.

What a student sends is a number or a choice index only, never text; every refusal is a
:class:`ClassroomError` (a ``ValueError``) whose message says what is wrong and what is allowed.
Everything is bounded: :data:`MAX_CLASSES` classes, :data:`MAX_STUDENTS` students a class,
:data:`MAX_QUESTIONS` questions and :data:`MAX_POOLS` experiments a class, pools of at most
:data:`MAX_VOCAB` tokens and :data:`MAX_POOL_LEN` tokens a round; a class lives at most
:data:`CLASS_TTL_S` (expired classes are dropped when the store is next used).
"""

from __future__ import annotations

import collections
import dataclasses
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6
CLASS_TTL_S = 3 * 3600  # a class lives at most 3 hours, or until ended
MAX_CLASSES = 50  # per store (per server, or per Redis)
MAX_STUDENTS = 400  # per class
MAX_ANSWERS_PER_S = 3  # per student: faster is refused with Throttled
MAX_QUESTIONS = 100  # questions with answers kept, per class
MAX_POOLS = 20  # experiments pooled, per class
MAX_VOCAB = 64  # V of a pool
MAX_POOL_LEN = 17  # K + 1 of a pool
MAX_BATCH_ROUNDS = 10_000  # rounds in one add_rounds batch
MAX_CHOICES = 26  # choices of a multiple-choice question
MAX_NAME = 200  # characters of a question id, page or experiment name
STUDENT_TOKEN_BYTES = 12
IN_PROCESS = "in-process"


class ClassroomError(ValueError):
    """A refusal the user reads: says what is wrong and what is allowed."""


class ClassNotFound(ClassroomError):
    """Unknown, ended or expired code."""


class ClassFull(ClassroomError):
    """Too many classes or students; names the bound."""


class NotTeacher(ClassroomError):
    """Wrong teacher key."""


class AnswerRefused(ClassroomError):
    """Not a number, out of range, not a choice, or counts of the wrong shape."""


class Throttled(ClassroomError):
    """Too fast; ``wait_s`` says how long to wait."""

    def __init__(self, message: str, wait_s: float = 1.0) -> None:
        super().__init__(message)
        self.wait_s = wait_s


@dataclasses.dataclass(frozen=True)
class Asked:
    """The question the teacher put to the class."""

    page: str  # registry url_path of the page ("" = Home)
    question_id: str  # e.g. "Step_through_a_round/1" (page + index), stable
    kind: str  # "choice" or "number"
    choices: int = 0  # kind "choice": answers are 0 .. choices-1
    low: float = 0.0  # kind "number": answers within [low, high]
    high: float = 0.0


@dataclasses.dataclass(frozen=True)
class ClassView:
    """What a projector or a phone reads, a snapshot."""

    code: str
    students: int
    asked: Asked | None
    revealed: bool
    answers: int  # answers to the asked question (one per student at most)
    pool_name: str | None  # the experiment the class pools into now, or None
    expires_at: float  # unix time
    backend: str  # "in-process" or "redis"; "in-process (Redis unreachable: ...)" after a fallback


@dataclasses.dataclass(frozen=True)
class Pool:
    """Pooled counts of one experiment, counts only."""

    name: str
    students: int  # students who added at least one batch
    rounds: int
    emitted: tuple[int, ...]  # counts per token (length V)
    lengths: tuple[int, ...]  # counts of rounds by tokens emitted (index n = n tokens, 0..K+1)


class ClassStore(Protocol):
    """Both backends implement exactly this; thread-safe."""

    def start(self) -> tuple[str, str]: ...
    def view(self, code: str) -> ClassView: ...
    def join(self, code: str, student: str | None = None) -> str: ...
    def ask(self, code: str, teacher_key: str, asked: Asked) -> None: ...
    def reveal(self, code: str, teacher_key: str) -> None: ...
    def answer(self, code: str, student: str, question_id: str, value: float) -> None: ...
    def my_answer(self, code: str, student: str, question_id: str) -> float | None: ...
    def tally(self, code: str, question_id: str) -> dict[float, int]: ...
    def set_pool(
        self, code: str, teacher_key: str, name: str, vocab: int, max_len: int
    ) -> None: ...
    def add_rounds(
        self, code: str, student: str, name: str, emitted: Sequence[int], lengths: Sequence[int]
    ) -> None: ...
    def pool(self, code: str, name: str) -> Pool: ...
    def reset(self, code: str, teacher_key: str) -> None: ...
    def end(self, code: str, teacher_key: str) -> None: ...


# ---------------------------------------------------------------- the state of one class
@dataclasses.dataclass
class PoolState:
    """One experiment's running counts (mutable; copied into a :class:`Pool` to be read)."""

    vocab: int
    max_len: int
    rounds: int = 0
    emitted: list[int] = dataclasses.field(default_factory=list)
    lengths: list[int] = dataclasses.field(default_factory=list)
    students: set[str] = dataclasses.field(default_factory=set)

    def __post_init__(self) -> None:
        self.emitted = self.emitted or [0] * self.vocab
        self.lengths = self.lengths or [0] * (self.max_len + 1)


@dataclasses.dataclass
class ClassState:
    """Everything a class holds. The in-process backend keeps these; the Redis backend reads
    one back as a snapshot (and keeps it as the local copy it falls back to)."""

    code: str
    key: str
    expires_at: float
    asked: Asked | None = None
    revealed: bool = False
    pool_name: str | None = None
    students: set[str] = dataclasses.field(default_factory=set)
    answers: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    pools: dict[str, PoolState] = dataclasses.field(default_factory=dict)
    seq: int = 0  # Redis: the class's change number this state includes (0 in-process)

    def copy(self) -> ClassState:
        """A deep copy (sets, dicts and pools copied)."""
        pools = {
            n: dataclasses.replace(
                p, emitted=list(p.emitted), lengths=list(p.lengths), students=set(p.students)
            )
            for n, p in self.pools.items()
        }
        answers = {q: dict(a) for q, a in self.answers.items()}
        return dataclasses.replace(self, students=set(self.students), answers=answers, pools=pools)


def view_of(state: ClassState, backend: str) -> ClassView:
    """The :class:`ClassView` of ``state``."""
    asked = state.asked
    answers = len(state.answers.get(asked.question_id, {})) if asked else 0
    return ClassView(
        code=state.code,
        students=len(state.students),
        asked=asked,
        revealed=state.revealed,
        answers=answers,
        pool_name=state.pool_name,
        expires_at=state.expires_at,
        backend=backend,
    )


def tally_of(state: ClassState, question_id: str) -> dict[float, int]:
    """Answer value -> how many students gave it, smallest value first."""
    counts = collections.Counter(state.answers.get(question_id, {}).values())
    return {value: counts[value] for value in sorted(counts)}


def pool_of(state: ClassState, name: str) -> Pool:
    """The :class:`Pool` ``name`` of ``state``; :class:`ClassroomError` when not opened."""
    found = state.pools.get(name)
    if found is None:
        raise ClassroomError(
            f"Class {state.code} has no experiment {name[:MAX_NAME]!r}: the teacher opens one "
            "(on the Round page or the Losslessness lab) before phones can pool into it."
        )
    return Pool(
        name=name,
        students=len(found.students),
        rounds=found.rounds,
        emitted=tuple(found.emitted),
        lengths=tuple(found.lengths),
    )


# ---------------------------------------------------------------- checks of what arrives
def new_code() -> str:
    """Six characters from :data:`CODE_ALPHABET` (31**6, about 887 million codes)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_teacher_key() -> str:
    return secrets.token_urlsafe(24)


def new_student_id() -> str:
    return secrets.token_urlsafe(STUDENT_TOKEN_BYTES)


def normalise_code(code: object) -> str:
    """Upper case, spaces and dashes dropped; :class:`ClassNotFound` for anything that cannot
    be a code (wrong length or characters)."""
    text = str(code)[:40].upper().replace(" ", "").replace("-", "")
    if len(text) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in text):
        raise ClassNotFound(
            f"No class has the code {text[:12]!r}: a class code is {CODE_LENGTH} characters "
            f"from {CODE_ALPHABET} (no 0, O, 1, I or L). Check the code on the projector."
        )
    return text


def not_found(code: str) -> ClassNotFound:
    return ClassNotFound(
        f"No class has the code {code}: it was never started, has ended, or is older than "
        f"{CLASS_TTL_S // 3600} hours. Ask the teacher for the code on the projector."
    )


def check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise ClassroomError(f"The {what} must be text of 1 to {MAX_NAME} characters.")
    return name


def check_question_id(question_id: object) -> str:
    """A question id as the store keeps it (text of 1..MAX_NAME characters)."""
    return check_name("question id", question_id)


def check_asked(asked: Asked) -> Asked:
    """A question the class can answer: a choice among 2..MAX_CHOICES or a finite range."""
    if not isinstance(asked, Asked):
        raise ClassroomError("The question to ask must be an Asked.")
    check_name("question id", asked.question_id)
    if not isinstance(asked.page, str) or len(asked.page) > MAX_NAME:
        raise ClassroomError(f"The question's page must be text of at most {MAX_NAME} characters.")
    if asked.kind == "choice":
        if not (isinstance(asked.choices, int) and 2 <= asked.choices <= MAX_CHOICES):
            raise ClassroomError(
                f"A multiple-choice question has 2 to {MAX_CHOICES} choices, not {asked.choices}."
            )
        return asked
    if asked.kind == "number":
        low, high = float(asked.low), float(asked.high)
        if not (math.isfinite(low) and math.isfinite(high) and low <= high):
            raise ClassroomError(
                f"A number question needs a finite range low <= high, not [{low}, {high}]."
            )
        return asked
    raise ClassroomError(f"A question's kind is 'choice' or 'number', not {asked.kind!r}.")


def check_value(asked: Asked, value: object) -> float:
    """The answer as a float, or :class:`AnswerRefused` naming what is allowed."""
    try:
        if isinstance(value, bool) or not isinstance(value, int | float):
            value = str(value).strip()[:40]
        number = float(value)
    except (ValueError, OverflowError):
        number = math.nan
    if asked.kind == "choice":
        allowed = f"one of the choices 0 to {asked.choices - 1}"
        if not (math.isfinite(number) and number.is_integer() and 0 <= number < asked.choices):
            raise AnswerRefused(f"The answer must be {allowed}.")
        return number
    if not (math.isfinite(number) and asked.low <= number <= asked.high):
        raise AnswerRefused(
            f"The answer must be a number from {asked.low:g} to {asked.high:g}; "
            "this one is not a number in that range."
        )
    return number


def check_pool_shape(vocab: object, max_len: object) -> tuple[int, int]:
    ok_vocab = isinstance(vocab, int) and 2 <= vocab <= MAX_VOCAB
    ok_len = isinstance(max_len, int) and 1 <= max_len <= MAX_POOL_LEN
    if not (ok_vocab and ok_len):
        raise ClassroomError(
            f"An experiment pools V = 2 to {MAX_VOCAB} tokens and K + 1 = 1 to {MAX_POOL_LEN} "
            f"tokens a round, not V = {vocab}, K + 1 = {max_len}."
        )
    return int(vocab), int(max_len)


def _counts(what: str, values: Sequence[int], size: int) -> list[int]:
    try:
        counts = [int(v) for v in values]
        exact = all(float(v) == c for v, c in zip(values, counts, strict=True))
    except (TypeError, ValueError, OverflowError):
        counts, exact = [], False
    if not exact or len(counts) != size or any(c < 0 for c in counts):
        raise AnswerRefused(f"The {what} must be {size} whole counts, none negative.")
    return counts


def check_batch(
    found: PoolState, emitted: Sequence[int], lengths: Sequence[int]
) -> tuple[list[int], list[int]]:
    """A phone's batch: V token counts and K + 2 round counts, 1..MAX_BATCH_ROUNDS rounds."""
    emitted_counts = _counts("token counts", emitted, found.vocab)
    length_counts = _counts("counts of rounds by tokens emitted", lengths, found.max_len + 1)
    rounds = sum(length_counts)
    if not 1 <= rounds <= MAX_BATCH_ROUNDS:
        raise AnswerRefused(f"A batch holds 1 to {MAX_BATCH_ROUNDS:,} rounds, not {rounds:,}.")
    if sum(emitted_counts) > rounds * found.max_len:
        raise AnswerRefused(
            f"{rounds:,} rounds emit at most {rounds * found.max_len:,} tokens "
            f"(K + 1 = {found.max_len} a round), not {sum(emitted_counts):,}."
        )
    return emitted_counts, length_counts


def throttled(kind: str, wait_s: float) -> Throttled:
    return Throttled(
        f"Too fast: at most {MAX_ANSWERS_PER_S} {kind} a second from one phone. "
        f"Wait {max(wait_s, 0.1):.1f} s and send again.",
        wait_s=wait_s,
    )


class SlidingWindow:
    """At most ``limit`` events a second per key (not thread-safe: the caller locks)."""

    def __init__(self, limit: int = MAX_ANSWERS_PER_S, max_keys: int = 50_000) -> None:
        self.limit, self.max_keys = limit, max_keys
        self._times: dict[object, collections.deque[float]] = {}

    def wait(self, key: object, now: float) -> float:
        """0 when an event is allowed now (and recorded), else the seconds to wait."""
        times = self._times.get(key)
        if times is None:
            if len(self._times) >= self.max_keys:
                self._times.clear()  # bounded: forgetting old keys only lets a phone send
            times = self._times[key] = collections.deque(maxlen=self.limit)
        if len(times) == self.limit and now - times[0] < 1.0:
            return 1.0 - (now - times[0])
        times.append(now)
        return 0.0

    def forget(self, prefix: str) -> None:
        for key in [k for k in self._times if isinstance(k, tuple) and k[0] == prefix]:
            del self._times[key]


# ---------------------------------------------------------------- the in-process backend
class MemoryClassStore:
    """Classes in this process, behind one lock. ``clock`` (unix seconds) is injectable."""

    backend = IN_PROCESS

    def __init__(self, clock: Callable[[], float] = time.time, label: str = IN_PROCESS) -> None:
        self.clock, self.label = clock, label
        self._lock = threading.Lock()
        self._classes: dict[str, ClassState] = {}
        self._window = SlidingWindow()

    # ---- the teacher
    def start(self) -> tuple[str, str]:
        with self._lock:
            self._drop_expired()
            if len(self._classes) >= MAX_CLASSES:
                raise ClassFull(
                    f"This server holds at most {MAX_CLASSES} classes at a time and all are "
                    "in use. Try again when a class ends (classes end after "
                    f"{CLASS_TTL_S // 3600} hours at most)."
                )
            code = new_code()
            while code in self._classes:
                code = new_code()
            key = new_teacher_key()
            self._classes[code] = ClassState(code, key, self.clock() + CLASS_TTL_S)
            return code, key

    def ask(self, code: str, teacher_key: str, asked: Asked) -> None:
        asked = check_asked(asked)
        with self._lock:
            state = self._teacher(code, teacher_key)
            if asked.question_id not in state.answers and len(state.answers) >= MAX_QUESTIONS:
                raise ClassFull(
                    f"A class keeps the answers of at most {MAX_QUESTIONS} questions; "
                    "reset the class to ask more."
                )
            state.asked, state.revealed = asked, False
            state.answers.setdefault(asked.question_id, {})

    def reveal(self, code: str, teacher_key: str) -> None:
        with self._lock:
            state = self._teacher(code, teacher_key)
            if state.asked is None:
                raise ClassroomError(f"Class {state.code} has no question asked to reveal.")
            state.revealed = True

    def set_pool(self, code: str, teacher_key: str, name: str, vocab: int, max_len: int) -> None:
        check_name("experiment name", name)
        vocab, max_len = check_pool_shape(vocab, max_len)
        with self._lock:
            state = self._teacher(code, teacher_key)
            found = state.pools.get(name)
            if found is None:
                if len(state.pools) >= MAX_POOLS:
                    raise ClassFull(
                        f"A class pools at most {MAX_POOLS} experiments; reset the class to "
                        "open more."
                    )
                state.pools[name] = PoolState(vocab, max_len)
            elif (found.vocab, found.max_len) != (vocab, max_len):
                raise ClassroomError(
                    f"The experiment {name!r} pools V = {found.vocab}, K + 1 = {found.max_len}; "
                    "a different V or K needs a different name."
                )
            state.pool_name = name

    def reset(self, code: str, teacher_key: str) -> None:
        with self._lock:
            state = self._teacher(code, teacher_key)
            state.asked, state.revealed, state.pool_name = None, False, None
            state.answers.clear()
            state.pools.clear()

    def end(self, code: str, teacher_key: str) -> None:
        with self._lock:
            state = self._teacher(code, teacher_key)
            del self._classes[state.code]
            self._window.forget(state.code)

    # ---- the phones
    def join(self, code: str, student: str | None = None) -> str:
        with self._lock:
            state = self._class(code)
            if isinstance(student, str) and student in state.students:
                return student  # a reload: the same student, answers kept
            if len(state.students) >= MAX_STUDENTS:
                raise ClassFull(
                    f"Class {state.code} is full: at most {MAX_STUDENTS} students a class."
                )
            student = new_student_id()
            state.students.add(student)
            return student

    def answer(self, code: str, student: str, question_id: str, value: float) -> None:
        with self._lock:
            state = self._student(code, student)
            asked = answerable(state, question_id)
            number = check_value(asked, value)
            wait = self._window.wait((state.code, student, "answer"), self.clock())
            if wait:
                raise throttled("answers", wait)
            state.answers.setdefault(question_id, {})[student] = number

    def add_rounds(
        self, code: str, student: str, name: str, emitted: Sequence[int], lengths: Sequence[int]
    ) -> None:
        check_name("experiment name", name)
        with self._lock:
            state = self._student(code, student)
            found = state.pools.get(name)
            if found is None:
                pool_of(state, str(name))  # raises the message
            emitted_counts, length_counts = check_batch(found, emitted, lengths)
            wait = self._window.wait((state.code, student, "rounds"), self.clock())
            if wait:
                raise throttled("batches of rounds", wait)
            add_batch(found, student, emitted_counts, length_counts)

    # ---- reading
    def view(self, code: str) -> ClassView:
        with self._lock:
            return view_of(self._class(code), self.label)

    def my_answer(self, code: str, student: str, question_id: str) -> float | None:
        check_question_id(question_id)
        with self._lock:
            return self._class(code).answers.get(question_id, {}).get(student)

    def tally(self, code: str, question_id: str) -> dict[float, int]:
        check_question_id(question_id)
        with self._lock:
            return tally_of(self._class(code), question_id)

    def pool(self, code: str, name: str) -> Pool:
        check_name("experiment name", name)
        with self._lock:
            return pool_of(self._class(code), name)

    # ---- the local copy (used by the Redis backend's fallback) and tests
    def adopt(self, state: ClassState) -> None:
        """Hold ``state`` (a copy), replacing what this store had for its code; not bounded by
        MAX_CLASSES (a class already running elsewhere goes on here)."""
        with self._lock:
            self._classes[state.code] = state.copy()

    def codes(self) -> list[str]:
        with self._lock:
            self._drop_expired()
            return sorted(self._classes)

    # ---------------------------------------------------------------- with the lock held
    def _drop_expired(self) -> None:
        now = self.clock()
        for code in [c for c, s in self._classes.items() if s.expires_at <= now]:
            del self._classes[code]
            self._window.forget(code)

    def _class(self, code: str) -> ClassState:
        code = normalise_code(code)
        state = self._classes.get(code)
        if state is not None and state.expires_at <= self.clock():
            self._drop_expired()
            state = None
        if state is None:
            raise not_found(code)
        return state

    def _teacher(self, code: str, teacher_key: str) -> ClassState:
        state = self._class(code)
        if not (isinstance(teacher_key, str) and secrets.compare_digest(teacher_key, state.key)):
            raise NotTeacher(
                f"Only the teacher's browser that started class {state.code} can do this "
                "(its teacher key does not match)."
            )
        return state

    def _student(self, code: str, student: str) -> ClassState:
        state = self._class(code)
        if not isinstance(student, str) or student not in state.students:
            raise ClassNotFound(
                f"This phone has not joined class {state.code} (or the class was restarted): "
                "open the join link or type the code again."
            )
        return state


def answerable(state: ClassState, question_id: str) -> Asked:
    """The asked question when ``question_id`` is it and its answers are not revealed yet."""
    asked = state.asked
    if asked is None or asked.question_id != question_id:
        raise AnswerRefused(
            f"Class {state.code} is not asking this question now; answer the one on the projector."
        )
    if state.revealed:
        raise AnswerRefused(
            "The answers to this question are revealed already; wait for the next question."
        )
    return asked


def add_batch(found: PoolState, student: str, emitted: list[int], lengths: list[int]) -> None:
    found.emitted = [a + b for a, b in zip(found.emitted, emitted, strict=True)]
    found.lengths = [a + b for a, b in zip(found.lengths, lengths, strict=True)]
    found.rounds += sum(lengths)
    found.students.add(student)


# ---------------------------------------------------------------- the process's store
STORE_ENV = "SPECDEC_STORE"
_STORE: ClassStore | None = None
_STORE_LOCK = threading.Lock()


def make_store(url: str | None) -> ClassStore:
    """In-process for no URL; Redis (with its in-process fallback) for ``redis://...``."""
    if not url:
        return MemoryClassStore()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return MemoryClassStore(
            label=f"{IN_PROCESS} ({STORE_ENV} is not a redis://host:port/db URL, so classes "
            "live in this server only)"
        )
    try:
        from specdec_ui.runtime.classroom_redis import ResilientStore  # redis only when asked
    except ImportError as err:
        return MemoryClassStore(
            label=f"{IN_PROCESS} (the redis client is not installed: {err}; pip install -r "
            "requirements.txt; classes live in this server only)"
        )
    return ResilientStore(url)


def store() -> ClassStore:
    """The process's store: in-process by default; ``SPECDEC_STORE=redis://host:port/db``
    -> Redis (falls back to in-process, keeping the message in ClassView.backend)."""
    global _STORE
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = make_store(os.environ.get(STORE_ENV, "").strip())
        return _STORE


def reset_store_for_tests() -> None:
    """Forget the process's store (tests that change SPECDEC_STORE)."""
    global _STORE
    with _STORE_LOCK:
        _STORE = None
