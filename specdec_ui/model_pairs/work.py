"""The Model pair lab's work, outside the page: shared runs, counts, speed, link state.

- :func:`get_run`: one speculative run per :class:`RunRequest` (pair, prompt, K, T, tokens,
  seed; traced round by round only for step mode), computed once per server process on
  the heavy-work queue and shared by every session (:mod:`specdec_ui.runtime.shared_work`); the
  key holds the typed prompt, so it lives at most ``runtime.shared_work.TEXT_TTL_S``;
- :class:`RunCounts`: the one definition of every count the page shows;
- :func:`get_run_speed`: the speedup of the run on screen (:mod:`specdec_core.lm.timing`:
  per-thread CPU time, speculative and plain decoding of the same prompt, settings and
  seed taking turns), once per run and server, in the background lane so that nobody's
  generation queues behind it; a run of the default prompt is measured in a helper
  process (:func:`measure_apart`), a typed prompt never leaves this process. A finished
  measurement is **held** for :data:`HOLD_S` (3 hours: a lesson sees one figure) under a
  key with a digest of the prompt, never its text (:func:`speed_key`), with the time it
  finished; :func:`measure_again` replaces it on a teacher's request. With
  ``SPECDEC_STORE=redis://...`` the figure is held in Redis for every replica, one replica
  measuring a run at a time (:mod:`specdec_ui.runtime.held_store`; in-process again if
  Redis goes away);
- :func:`get_speed`: the same measurement on the reference workload (default prompt,
  200 tokens, seed 0), once per (pair, K, T): the figure the Serving lab and the
  comparison line use;
- :func:`state_from_link` / :func:`link_for`: the page's shareable link.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import json
import math
import statistics
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

import specdec_core.lm as lm
from specdec_core.errors import InvalidParameterError, SpecDecError
from specdec_core.lm.adaptive import CostProfile
from specdec_core.lm.costs import measure_costs
from specdec_core.lm.timing import SpeedMeasurement, impossible_reasons, measure_pair
from specdec_core.theory import expected_tokens
from specdec_ui.kit.share import LinkReader, share_query
from specdec_ui.presets import MAX_SEED, MODEL_PAIR_K_MAX
from specdec_ui.runtime.held_store import RedisHeld, down_errors, shared_held
from specdec_ui.runtime.processes import HelperTimeoutError, run_apart
from specdec_ui.runtime.shared_work import TEXT_TTL_S, WaitStatus, shared_result, status

DEFAULT_PROMPT = "Return the number of"
DEFAULT_PAIR = "lookup-table-to-gpt-4L"  # the fastest pair here (benchmarks/results_model_pairs.md)
# The page opens on a fixed draft length of DEFAULT_K drafts a round, always (issue 26): the
# default pair's best K at T = 0 on the default prompt (benchmarks/results_model_pairs.md).
# Where stepping aside measured faster on this server, the page says so in a note
# (:func:`adaptive_note`); it never changes what the page opens on.
DEFAULT_DRAFT_LENGTH = "fixed"
DEFAULT_K = 3
DEFAULT_TOKENS = 60
K_MAX = MODEL_PAIR_K_MAX
TOKENS_MIN, TOKENS_MAX, TOKENS_STEP, T_MAX = 10, 200, 10, 2.0
MODES = {"run": "Run to the end", "step": "Step round by round"}
# "adaptive" keeps its name in links made before issue 27 cut it down to the guard.
DRAFT_LENGTHS = {
    "fixed": "Fixed: K drafts a round",
    "adaptive": "Steps aside: K, or plain steps while drafting loses",
}
GREEDY_SEED_NOTE = (
    "At T = 0 both models take their most likely token and no random number is drawn, "
    "so every seed gives the same text. Raise T to see the seed matter."
)
T = TypeVar("T")
HOLD_S = 3 * 3600.0  # a finished measurement is kept this long: one figure for a lesson
HOLD_MAX = 512  # measurements held at most (a few hundred bytes each); oldest go first
LOCK_S = 600.0  # with Redis: one replica measures a run; the others wait at most this long
AGAIN_AFTER_S = 60.0  # "measure again" is offered once the figure is this old
SPEED_TOKENS, SPEED_REPEATS, SPEED_SEED = 200, 5, 0  # the reference workload of the timing
TOKEN_KINDS = ("accepted", "resampled", "bonus", "plain")  # how a generated token was made


@dataclass(frozen=True)
class RunCounts:
    """Every count of one speculative run, defined once (the page shows only these).

    Rounds emit ``emitted`` tokens in all; the last round may emit more than the limit
    needs, and its surplus ``cut`` is dropped, so the text holds ``n_tokens`` tokens.
    Rates per round count what the rounds emitted (before the cut): the seeds'
    E(alpha, K) predicts exactly that. A target without a parallel verify (an n-gram)
    checks K + 1 positions with K + 1 lookups, so its "calls" are lookups.
    """

    k: int
    n_tokens: int  # tokens in the generated text (after the cut)
    rounds: int
    drafted: int  # K per round
    checked: int  # drafts that met a coin (later drafts of a rejected round are not checked)
    kept: int
    emitted: int  # tokens all rounds produced, before the cut
    parallel_verify: bool
    target_calls: int  # speculative: rounds (parallel verify) or lookups, rounds x (K + 1)
    in_text: tuple[tuple[str, int], ...]  # (kind, tokens of that kind in the text)
    plain_rounds: int = 0  # rounds whose draft proposed nothing: one plain target step

    @property
    def rejected(self) -> int:
        """Drafts rejected = rounds that ended with a resample (one rejection ends a round)."""
        return self.checked - self.kept

    @property
    def bonus_rounds(self) -> int:
        """Rounds in which every draft was kept and the target added a bonus token (a round
        whose draft proposed nothing is a plain step, not a bonus)."""
        return self.rounds - self.rejected - self.plain_rounds

    @property
    def cut(self) -> int:
        """Tokens of the last round dropped at the token limit."""
        return self.emitted - self.n_tokens

    @property
    def plain_calls(self) -> int:
        """Plain decoding: one target call (or lookup) per generated token."""
        return self.n_tokens

    @property
    def acceptance_rate(self) -> float:
        """kept / checked (NaN when nothing was checked)."""
        return self.kept / self.checked if self.checked else math.nan

    @property
    def tokens_per_round(self) -> float:
        """emitted / rounds (before the cut)."""
        return self.emitted / self.rounds

    @property
    def calls_saved(self) -> int:
        """Plain calls minus speculative calls (negative: speculative needs more)."""
        return self.plain_calls - self.target_calls

    def text_count(self, kind: str) -> int:
        return dict(self.in_text).get(kind, 0)


def run_counts(spec: lm.GenerationResult, parallel_verify: bool) -> RunCounts:
    """The counts of a speculative run (see :class:`RunCounts`)."""
    return RunCounts(
        k=spec.k,
        n_tokens=len(spec.tokens),
        rounds=spec.n_rounds,
        drafted=spec.drafted,
        checked=spec.checked,
        kept=spec.accepted,
        emitted=spec.emitted,
        parallel_verify=bool(parallel_verify),
        target_calls=spec.target_calls,
        in_text=tuple((kind, spec.kinds.count(kind)) for kind in TOKEN_KINDS),
        plain_rounds=spec.empty_rounds,
    )


@dataclass(frozen=True)
class LabRun:
    """What the page shows of one request: the traced run, its counts, the T = 0 check."""

    spec: lm.GenerationResult
    counts: RunCounts
    identical: bool | None  # T = 0: equal to the target's greedy output; None at T > 0
    prompt_ids: tuple[int, ...]


@dataclass(frozen=True)
class RunRequest:
    """What a run depends on: the key under which it, its measurement and its figures are
    shared by every session that asks for the same run."""

    pair: str
    prompt: str
    k: int  # drafts a round (guarded: K, or none while the guard steps aside)
    temperature: float
    n_tokens: int
    seed: int
    draft_length: str = "fixed"  # "adaptive": the guard that steps aside (this server's costs)

    @property
    def adaptive(self) -> bool:
        return self.draft_length == "adaptive"

    def shared(self, *, trace: bool) -> RunRequest:
        """The request as it is computed and shared.

        At T = 0 the run's tokens and decisions do not depend on the seed (both sides take
        the argmax), so every seed gives the same run: the seed becomes 0 and a class
        pressing "New seed" shares one computation. Step mode included: its trace draws
        coins that decide nothing at T = 0 (a is 0 or 1), and the page shows none.
        """
        return replace(self, seed=0) if self.temperature == 0 else self


def compute_run(request: RunRequest, *, trace: bool) -> LabRun:
    """A speculative run (with its round-by-round trace when ``trace``: step mode) and, at
    T = 0, the check against the plain greedy run. With or without the trace, the same
    seed gives the same tokens and counts (the engine's tests check it)."""
    draft, target = lm.load_pair(request.pair)
    ids = lm.encode_prompt(target.tokenizer, request.prompt)
    common = {"max_new_tokens": request.n_tokens, "temperature": request.temperature}
    rng = np.random.default_rng(request.seed)
    spec = lm.speculative_generate(
        draft, target, ids, k=request.k, rng=rng, trace=trace, adaptive=_costs_of(request), **common
    )
    identical = None
    if request.temperature == 0:  # the greedy output does not depend on the seed: shared
        greedy = shared_result(
            "lm.greedy",
            (request.pair, request.prompt, request.n_tokens),
            lambda: (
                lm.autoregressive_generate(
                    target, ids, rng=np.random.default_rng(0), **common
                ).tokens
            ),
            heavy=False,  # already on a worker: compute here, single flight only
            ttl_s=TEXT_TTL_S,
        )
        identical = greedy == spec.tokens
    return LabRun(
        spec=spec,
        counts=run_counts(spec, target.parallel_verify),
        identical=identical,
        prompt_ids=tuple(ids),
    )


def get_run(
    request: RunRequest,
    *,
    trace: bool = False,
    on_wait: Callable[[WaitStatus], None] | None = None,
) -> LabRun:
    """:func:`compute_run`, once per request (:meth:`RunRequest.shared`) and process, on
    the heavy-work queue."""
    shared = request.shared(trace=trace)
    return shared_result(
        "lm.run",
        (shared, trace),
        lambda: compute_run(shared, trace=trace),
        ttl_s=TEXT_TTL_S,
        on_wait=on_wait,
    )


def measure_run(request: RunRequest) -> SpeedMeasurement:
    """The speedup of one run: :func:`specdec_core.lm.timing.measure_pair` on its prompt,
    K, T, token count and seed, so the timed speculative run makes the same tokens as the
    run on screen. A run of the default prompt goes to a helper process; a typed prompt
    is measured on this thread (a student's text is never sent to another process)."""
    options = {
        "k": request.k,
        "temperature": request.temperature,
        "max_new_tokens": request.n_tokens,
        "seed": request.seed,
        "repeats": SPEED_REPEATS,
        "adaptive": _costs_of(request),
    }
    if request.prompt == DEFAULT_PROMPT:
        return run_apart("speed", measure_pair, request.pair, request.prompt, **options)
    return measure_pair(request.pair, request.prompt, **options)


@dataclass(frozen=True)
class Unmeasured:
    """A measurement that did not finish (its helper timed out), stored like a result so
    that a page polling for it can say why instead of waiting for ever."""

    reason: str


def _or_why(measure: Callable[[], T], what: str) -> T | Unmeasured:
    """``measure()``, or :class:`Unmeasured` with the reason when its helper timed out."""
    try:
        return measure()
    except HelperTimeoutError as err:
        return Unmeasured(
            f"The {what} did not finish in {err.timeout_s:g} s: the server is very busy. "
            f"It is tried again after {TEXT_TTL_S / 60:g} minutes; other settings are "
            "measured at once."
        )


@dataclass(frozen=True)
class Held:
    """A finished measurement as the page shows it: the value (a :class:`SpeedMeasurement`,
    or :class:`Unmeasured` when it could not finish) and when it finished."""

    value: object
    measured_at: float  # wall-clock seconds (time.time()) when the measurement finished

    @property
    def age_s(self) -> float:
        return max(0.0, time.time() - self.measured_at)


def held_json(held: Held) -> str:
    """``held`` as JSON of plain numbers and strings (what replicas share in Redis)."""
    value = held.value
    if isinstance(value, Unmeasured):
        body = {"kind": "unmeasured", "reason": value.reason}
    elif isinstance(value, SpeedMeasurement):
        body = {"kind": "speed", "fields": dataclasses.asdict(value)}
    else:
        raise TypeError(f"a held value is a measurement, not {type(value).__name__}")
    return json.dumps({"measured_at": held.measured_at, "value": body}, allow_nan=False)


def _plain_field(value: object) -> object:
    """A field read back from JSON: a number, a string, a bool, None or a list of numbers."""
    if isinstance(value, list):
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            raise ValueError("a list in a held measurement holds numbers only")
        return tuple(float(x) for x in value)
    if value is None or isinstance(value, str | int | float):
        return value
    raise ValueError(f"a held measurement holds no {type(value).__name__}")


def held_from_json(text: str) -> Held | None:
    """The :class:`Held` of :func:`held_json`'s text, or None when it is not one (then the run
    is measured again and the text replaced)."""
    try:
        data = json.loads(text)
        at, body = data["measured_at"], data["value"]
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
            return None
        if body["kind"] == "unmeasured" and isinstance(body["reason"], str):
            return Held(Unmeasured(body["reason"]), float(at))
        fields = {name: _plain_field(v) for name, v in body["fields"].items()}
        return Held(SpeedMeasurement(**fields), float(at)) if body["kind"] == "speed" else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


class MeasurementHold:
    """Finished measurements, each kept ``hold_s`` (an :class:`Unmeasured`: ``retry_s``),
    at most ``max_entries`` (the oldest go first).

    Apart from :mod:`specdec_ui.runtime.shared_work`'s store on purpose: that store is an LRU shared
    with every figure of every page, so a class moving sliders pushed a measurement out
    within minutes and the next visitor measured again, on a busier machine (issue 25: the
    same run read 1.38x, then 1.31x, then 1.25x in one lesson). Keys hold no typed text.

    With ``shared`` (:class:`specdec_ui.runtime.held_store.RedisHeld`, when
    ``SPECDEC_STORE=redis://...``) the figure lives in Redis for every replica (issue 34 item
    6): :meth:`get` reads it there (a local copy keeps what this process saw), :meth:`put`
    writes it there with the hold's TTL, and :meth:`turn` lets one replica at a time measure
    a run. When Redis stops answering, the hold goes on in-process from its local copies
    (:attr:`backend` says so) for the rest of the process's life, as the class store does.
    """

    def __init__(
        self,
        *,
        hold_s: float,
        retry_s: float,
        max_entries: int,
        clock=time.monotonic,
        shared: RedisHeld | None = None,
        backend: str = "in-process",
        lock_s: float = LOCK_S,
        poll_s: float = 0.25,
    ):
        self.hold_s, self.retry_s, self.max_entries = hold_s, retry_s, max_entries
        self.clock = clock
        self._lock = threading.Lock()
        self._items: collections.OrderedDict[Hashable, tuple[float, Held]] = (
            collections.OrderedDict()
        )
        self.shared, self.backend = shared, backend
        self.lock_s, self.poll_s = lock_s, poll_s
        self._down = down_errors() if shared is not None else ()

    def get(self, key: Hashable) -> Held | None:
        """The held measurement of ``key``, or None (never held, or expired)."""
        if (shared := self.shared) is not None:
            found = self._ask(lambda: shared.get(key), _DOWN)
            if found is not _DOWN:
                return self._copy(key, found)
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] <= self.clock():
                self._items.pop(key, None)
                return None
            return item[1]

    def put(self, key: Hashable, held: Held) -> Held:
        """Hold ``held`` under ``key`` (replacing an older one); returns it."""
        keep = self.retry_s if isinstance(held.value, Unmeasured) else self.hold_s
        if (shared := self.shared) is not None:
            self._ask(lambda: shared.put(key, held_json(held), keep), None)
        self._keep(key, held, keep)
        return held

    def clear(self) -> None:
        if (shared := self.shared) is not None:
            self._ask(shared.clear, None)
        with self._lock:
            self._items.clear()

    @contextlib.contextmanager
    def turn(self, key: Hashable, *, newer_than: float = -math.inf):
        """Yields a held measurement of ``key`` finished after ``newer_than`` that another
        replica made meanwhile (use it), or None: measure now. In Redis, None comes with
        ``key``'s lock (``SET NX`` with a TTL of ``lock_s``), so one replica measures a run
        while the others wait here for its figure; in-process it is None at once (the
        shared store's single flight already measures a run once per process)."""
        token, deadline = None, time.monotonic() + self.lock_s
        try:
            while (shared := self.shared) is not None and time.monotonic() < deadline:
                found = self.get(key)
                if found is not None and found.measured_at > newer_than:
                    break
                token = self._ask(lambda s=shared: s.lock(key, self.lock_s), None)
                if token is not None:
                    found = self.get(key)  # finished between the look and the lock?
                    break
                time.sleep(self.poll_s)
            else:
                found = None
            yield found if found is not None and found.measured_at > newer_than else None
        finally:
            if token is not None and (shared := self.shared) is not None:
                self._ask(lambda: shared.unlock(key, token), None)

    # ---- Redis and the local copy
    def _keep(self, key: Hashable, held: Held, keep: float) -> None:
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = (self.clock() + keep, held)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def _copy(self, key: Hashable, found: tuple[str, float] | None) -> Held | None:
        """The held value Redis returned, kept as this process's copy (the same object as
        long as Redis holds the same figure)."""
        if found is None:
            with self._lock:
                self._items.pop(key, None)
            return None
        text, left_s = found
        with self._lock:
            item = self._items.get(key)
        if item is not None and held_json(item[1]) == text:
            return item[1]
        held = held_from_json(text)
        if held is not None:
            self._keep(key, held, left_s)
        return held

    def _ask(self, call: Callable[[], T], on_down: object) -> T | object:
        """``call()`` on Redis, or ``on_down`` once Redis has gone (the hold then goes on in
        this process, and :attr:`backend` says why)."""
        try:
            return call()
        except self._down as err:
            reason = " ".join(f"{type(err).__name__}: {err}".split())[:120]
            self.shared = None
            self.backend = (
                f"in-process (Redis unreachable: {reason}; the figure is held on this server "
                "only, with every figure shown so far)"
            )
            return on_down


_DOWN = object()  # MeasurementHold._ask's answer once Redis has gone
_SHARED_HELD, _HELD_BACKEND = shared_held()
HOLD = MeasurementHold(
    hold_s=HOLD_S,
    retry_s=TEXT_TTL_S,
    max_entries=HOLD_MAX,
    shared=_SHARED_HELD,
    backend=_HELD_BACKEND,
)


def where_held() -> str:
    """Where the figure is held, in words for the page: this server, every replica (Redis),
    or this server after Redis went away (with why)."""
    if HOLD.shared is not None:
        return "on one of this site's servers and shared by all of them (Redis)"
    if HOLD.backend.startswith("in-process (Redis unreachable"):
        return "on this server (" + HOLD.backend.removeprefix("in-process (")
    return "on this server"


def prompt_digest(prompt: str) -> str:
    """A stand-in for typed text in a kept key: its SHA-256, never the text itself."""
    return "sha256:" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def speed_key(request: RunRequest) -> RunRequest:
    """The key a run's measurement is shared and held under: the untraced run (step mode
    replays the same tokens, and at T = 0 every seed shares one) with the prompt's digest
    in place of its text."""
    shared = request.shared(trace=False)
    return replace(shared, prompt=prompt_digest(shared.prompt))


def _held_result(namespace: str, key: Hashable, measure: Callable[[], T], what: str, wait: bool):
    """The held measurement of ``key`` (a :class:`Held`), or ``MISSING`` while it runs.

    Computed once (single flight, the background lane), then held by :data:`HOLD`: the
    shared store keeps nothing of it (``ttl_s=0``), so a class sees this one figure for
    :data:`HOLD_S` whatever else the server stores meanwhile.
    """
    if (held := HOLD.get((namespace, key))) is not None:
        return held

    def compute() -> Held:
        with HOLD.turn((namespace, key)) as found:  # Redis: one replica measures it
            if found is not None:
                return found
            return HOLD.put((namespace, key), Held(_or_why(measure, what), time.time()))

    return shared_result(namespace, key, compute, lane="background", wait=wait, ttl_s=0.0)


def get_run_speed(request: RunRequest, *, wait: bool = False):
    """The held measurement of the run on screen (:func:`measure_run`) as a :class:`Held`
    (its value an :class:`Unmeasured` when it could not finish), or ``runtime.shared_work.MISSING``
    while it runs (``wait=False`` starts it in the background lane and returns at once)."""
    shared = request.shared(trace=False)
    return _held_result(
        "lm.run_speed",
        speed_key(request),
        lambda: measure_run(shared),
        "speed measurement of this run",
        wait,
    )


def clock_text(epoch_s: float, offset_minutes: int | None) -> str:
    """``epoch_s`` as "HH:MM" on the viewer's clock (``offset_minutes``: the browser's
    ``getTimezoneOffset()``, UTC minus local time), or "HH:MM UTC" when it is not known."""
    if offset_minutes is None:
        return time.strftime("%H:%M UTC", time.gmtime(epoch_s))
    return time.strftime("%H:%M", time.gmtime(epoch_s - 60 * int(offset_minutes)))


def age_text(seconds: float) -> str:
    """How long ago, in words: "just now", "1 minute ago", "2 hours 5 minutes ago"."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "just now"
    hours, minutes = divmod(minutes, 60)
    parts = [f"{hours} hour{'s' * (hours != 1)}"] if hours else []
    parts += [f"{minutes} minute{'s' * (minutes != 1)}"] if minutes or not hours else []
    return " ".join(parts) + " ago"


def run_speed_status(request: RunRequest) -> WaitStatus | None:
    """Where the measurement of a run stands in the queue (None when none runs), a first
    one or one asked for again."""
    key = speed_key(request)
    return status("lm.run_speed", key) or status("lm.run_speed_again", key)


def measuring_again(request: RunRequest) -> bool:
    """Whether a "measure again" of this run is running now."""
    return status("lm.run_speed_again", speed_key(request)) is not None


def measure_again(request: RunRequest) -> bool:
    """Measure the run again, now, in the background, and replace its held figure for
    everyone once the new one is done (the old one stays on screen until then).

    Refused (False) while a measurement of it runs or when its figure is younger than
    :data:`AGAIN_AFTER_S` (a double click, or a class pressing it at once, measures once).
    """
    key = speed_key(request)
    held = HOLD.get(("lm.run_speed", key))
    if held is None or held.age_s < AGAIN_AFTER_S or run_speed_status(request) is not None:
        return False
    shared = request.shared(trace=False)

    def again() -> Held:
        with HOLD.turn(("lm.run_speed", key), newer_than=held.measured_at) as found:
            if found is not None:
                return found  # another replica measured it again meanwhile
            value = _or_why(lambda: measure_run(shared), "new speed measurement of this run")
            if isinstance(value, Unmeasured):
                return held  # the old figure stays; the timeout is not news for the class
            return HOLD.put(("lm.run_speed", key), Held(value, time.time()))

    shared_result("lm.run_speed_again", key, again, lane="background", wait=False, ttl_s=0.0)
    return True


def held_run_speed(request: RunRequest) -> SpeedMeasurement | None:
    """The held speed measurement of ``request``'s run, or None (never starts one; a
    measurement that cannot be right counts as none)."""
    held = HOLD.get(("lm.run_speed", speed_key(request)))
    if held is None or not isinstance(held.value, SpeedMeasurement):
        return None
    return None if impossible_reasons(held.value) else held.value


@dataclass(frozen=True)
class PriceUnit:
    """The plain step a guarded run's prices are given in (issue 33, item 3): the speed
    section's (a plain step of plain decoding of the same prompt, timed beside the run)
    once the run is measured, else the cost measurement's (timed apart, on a short fixed
    text). ``apart_s``: the cost measurement's plain step, for the words."""

    seconds: float
    from_speed: bool
    apart_s: float

    @property
    def scale(self) -> float:
        """A price in the cost measurement's plain steps x scale = the same in this unit."""
        return self.apart_s / self.seconds


def price_unit(request: RunRequest, apart_s: float) -> PriceUnit:
    """One unit on the page: the run's speed measurement's plain step when it is held."""
    speed = held_run_speed(request)
    if speed is None or not (math.isfinite(apart_s) and apart_s > 0):
        return PriceUnit(apart_s, False, apart_s)
    return PriceUnit(speed.target_step, True, apart_s)


@dataclass(frozen=True)
class GuardGap:
    """Why a guarded run's speedup reads below fixed K's (issue 33, item 3): the guard's
    share of a round's CPU time, and fixed K's figure of the same run when it is held."""

    guard_s: float  # the guard's CPU seconds a round, in the run on screen
    round_s: float  # a guarded round's CPU seconds in the timed runs (median / rounds)
    fixed: SpeedMeasurement | None  # fixed K's measurement of the same run, if held

    @property
    def share(self) -> float:
        return self.guard_s / self.round_s

    @property
    def fixed_less_guard(self) -> float:
        """Fixed K's speedup with the guard's time added to every round: f x (1 - share)."""
        return self.fixed.speedup * (1.0 - self.share) if self.fixed else math.nan


def guard_gap(request: RunRequest, guard_s: float, speed: SpeedMeasurement) -> GuardGap:
    """:class:`GuardGap` of a guarded run (``guard_s`` from its price ledger)."""
    round_s = statistics.median(speed.spec_s) / speed.rounds
    fixed = held_run_speed(replace(request, draft_length="fixed"))
    return GuardGap(guard_s=guard_s, round_s=round_s, fixed=fixed)


def reference_speed(pair: str, k: int, temperature: float) -> SpeedMeasurement | None:
    """The held reference measurement of (pair, K, T), or None (never starts one)."""
    held = HOLD.get(("lm.speed", (pair, int(k), float(temperature))))
    return held.value if held is not None and not isinstance(held.value, Unmeasured) else None


def compute_speed(pair: str, k: int, temperature: float) -> SpeedMeasurement:
    """The timing of (pair, K, T) on the reference workload (default prompt, 200 tokens)."""
    return measure_pair(pair, DEFAULT_PROMPT, **_speed_options(k, temperature))


def _speed_options(k: int, temperature: float) -> dict:
    return {
        "k": k,
        "temperature": temperature,
        "max_new_tokens": SPEED_TOKENS,
        "seed": SPEED_SEED,
        "repeats": SPEED_REPEATS,
    }


def measure_apart(*, pair: str, k: int, temperature: float) -> SpeedMeasurement:
    """:func:`compute_speed` in a helper process (:mod:`specdec_ui.runtime.processes`).

    Sessions are threads of one interpreter: a measurement on a thread held the
    interpreter lock half the time while a class waited for its pages (the Round page's
    p95 went from 0.4 s to 2.9 s during a wave). The helper receives only the pair's
    name, K, T and this module's constants, and returns numbers; it imports the core
    only (:func:`specdec_core.lm.timing.measure_pair`), not Streamlit.
    """
    return run_apart("speed", measure_pair, pair, DEFAULT_PROMPT, **_speed_options(k, temperature))


def get_speed(pair: str, k: int, temperature: float, *, wait: bool = False):
    """The held measurement of (pair, K, T) as a :class:`Held`, or ``runtime.shared_work.MISSING``
    while it runs (``wait=False`` starts it in the background lane and returns at once)."""
    k, temperature = int(k), float(temperature)
    return _held_result(
        "lm.speed",
        (pair, k, temperature),
        lambda: measure_apart(pair=pair, k=k, temperature=temperature),
        "reference speed measurement",
        wait,
    )


# ----------------------------------------------------------------------------- the guard
CostKey = tuple[str, bool]  # (pair, greedy): argmax decisions (T = 0) or coins


class CostPins:
    """This server's measured costs per (pair, greedy), pinned for the life of the process.

    The first measurement of a key is kept and every later one is dropped (:meth:`pin`),
    so a run priced by these costs never changes afterwards, whoever measures first. Apart
    from the shared store on purpose: an LRU could push the costs out, and the next
    guarded run would start from another measurement.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._costs: dict[CostKey, CostProfile] = {}

    def get(self, key: CostKey) -> CostProfile | None:
        """The pinned costs of ``key``, or None (not measured yet)."""
        with self._lock:
            return self._costs.get(key)

    def pin(self, key: CostKey, costs: CostProfile) -> CostProfile:
        """Pin ``costs`` unless ``key`` has costs already; returns the pinned ones."""
        with self._lock:
            return self._costs.setdefault(key, costs)

    def clear(self) -> None:
        """Forget every pinned cost (tests)."""
        with self._lock:
            self._costs.clear()


COSTS = CostPins()


def _costs_key(pair: str, temperature: float) -> CostKey:
    """Costs are measured once per pair and per kind of decision: argmax (T = 0) or coins."""
    return (pair, float(temperature) == 0.0)


def _measure_costs(pair: str, greedy: bool) -> CostProfile:
    """This server's costs of ``pair`` (c, v(0..K_MAX)), measured in a helper process once
    and kept for the life of the process: a run priced by them never changes afterwards,
    whoever measures first (``setdefault``)."""
    key = (pair, greedy)
    if (costs := COSTS.get(key)) is not None:
        return costs
    temperature = 0.0 if greedy else 1.0
    measured = run_apart("speed", measure_costs, pair, K_MAX, temperature=temperature)
    return COSTS.pin(key, measured)


def get_costs(pair: str, temperature: float, *, wait: bool = False):
    """The pinned costs of ``pair`` on this server, an :class:`Unmeasured`, or
    ``runtime.shared_work.MISSING`` while they are measured (in the background lane)."""
    key = _costs_key(pair, temperature)
    if (costs := COSTS.get(key)) is not None:
        return costs
    return shared_result(
        "lm.costs",
        key,
        lambda: _or_why(lambda: _measure_costs(*key), "measurement of this server's costs"),
        lane="background",
        wait=wait,
    )


def costs_status(pair: str, temperature: float) -> WaitStatus | None:
    """Where the cost measurement of ``pair`` stands in the queue (None when none runs)."""
    return status("lm.costs", _costs_key(pair, temperature))


def _costs_of(request: RunRequest) -> CostProfile | None:
    """The costs a guarded run starts from (None for a fixed K). The page asks for a run
    only once :func:`get_costs` has them; a lost race is said in words, never guessed."""
    if not request.adaptive:
        return None
    costs = COSTS.get(_costs_key(request.pair, request.temperature))
    if costs is None:
        raise InvalidParameterError(
            "this server's costs are still being measured; the guarded run starts once "
            "they are there (reload the page in a moment)."
        )
    return costs


@dataclass(frozen=True)
class DraftLengthChoice:
    """The default pair on its reference workload at T = 0: fixed K against the same K
    behind the guard."""

    fixed: SpeedMeasurement  # K = DEFAULT_K drafts a round
    adaptive: SpeedMeasurement  # K = DEFAULT_K, or plain steps while drafting loses

    @property
    def faster(self) -> str:
        """The draft length that measured faster here ("fixed" on a tie, or when either
        measurement is one no correct run can give)."""
        if impossible_reasons(self.fixed) or impossible_reasons(self.adaptive):
            return "fixed"
        return "adaptive" if self.adaptive.speedup > self.fixed.speedup else "fixed"


def _compare_draft_lengths() -> DraftLengthChoice:
    costs = _measure_costs(DEFAULT_PAIR, True)
    pair, prompt = DEFAULT_PAIR, DEFAULT_PROMPT
    fixed = run_apart("speed", measure_pair, pair, prompt, **_speed_options(DEFAULT_K, 0.0))
    adaptive = run_apart(
        "speed", measure_pair, pair, prompt, **_speed_options(DEFAULT_K, 0.0), adaptive=costs
    )
    return DraftLengthChoice(fixed=fixed, adaptive=adaptive)


def draft_length_choice(*, start: bool = True) -> DraftLengthChoice | None:
    """The measured comparison, held like a run's measurement (so its note stays put for a
    lesson), or None while it runs, when it could not finish, or (``start=False``) when
    nobody has started it yet. ``start``: begin it in the background lane if needed."""
    key = ("lm.prefer", DEFAULT_PAIR)
    if not start:
        held = HOLD.get(key)
    else:
        held = _held_result(
            *key, _compare_draft_lengths, "comparison of fixed K and stepping aside", False
        )
    value = held.value if isinstance(held, Held) else None
    return value if isinstance(value, DraftLengthChoice) else None


def adaptive_note(*, start: bool = False) -> str | None:
    """A short note when stepping aside measured faster than the page's default here.

    The page opens on :data:`DEFAULT_DRAFT_LENGTH` whatever this says. The comparison
    (:func:`draft_length_choice`, 15 s in the background lane) is started only with
    ``start`` (the page: once a student picks "Steps aside", when this server's costs are
    measured anyway); until it is held, and when fixed K measured as fast or faster: None.
    """
    choice = draft_length_choice(start=start)
    if choice is None or choice.faster != "adaptive":
        return None
    return (
        f"On this server, K = {DEFAULT_K} with the guard that steps aside measured faster "
        f"than a fixed K = {DEFAULT_K} on the reference workload: "
        f"{choice.adaptive.speedup:.2f}x against {choice.fixed.speedup:.2f}x. "
        "Choose “Steps aside” to try it."
    )


@dataclass(frozen=True)
class Predictions:
    """The formula's view of a run, with the measured unit costs c and v(K)."""

    alpha: float  # measured acceptance rate of the run (0 when nothing was checked)
    expected: float  # E(alpha, K) = (1 - alpha^(K+1)) / (1 - alpha)
    seeds: float  # E / (K c + 1)
    corrected: float  # E / (K c + v(K))
    accounting: float  # tokens per round / (d c + v), d = drafts per round: the run's own


def predictions(counts: RunCounts, speed: SpeedMeasurement) -> Predictions:
    """Seeds' formula (seed 003 Ex 7), the corrected one, S = E / (K c + v(K)), and the
    run's own accounting, S = tokens per round / (d c + v) with d its drafts per round
    (what a guarded run, which drafts d <= K a round on average, is measured against)."""
    alpha = counts.acceptance_rate
    alpha = 0.0 if math.isnan(alpha) else alpha
    e = float(expected_tokens(alpha, counts.k))
    per_round = speed.drafts_per_round * speed.c + speed.v
    return Predictions(
        alpha=alpha,
        expected=e,
        seeds=e / (counts.k * speed.c + 1.0),
        corrected=e / (counts.k * speed.c + speed.v),
        accounting=counts.tokens_per_round / per_round,
    )


def prompt_note(prompt: str) -> str | None:
    """What the models read differently from the typed prompt (issue 33, item 17), or
    None when they read it as typed (or cannot read it: the run's error says why)."""
    try:
        read = lm.ascii_prompt(prompt)
    except SpecDecError:
        return None
    if not read.mapped:
        return None
    pairs = dict.fromkeys((typed, ascii_) for _, typed, ascii_ in read.mapped)
    shown = ", ".join(f"{typed} as {ascii_}" for typed, ascii_ in list(pairs)[:8])
    more = ", ..." if len(pairs) > 8 else ""
    n = len(read.mapped)
    return (
        f"Read as plain ASCII (the models know no other characters): {shown}{more} "
        f"({n} character{'s' if n != 1 else ''} of your prompt, the first at position "
        f"{read.mapped[0][0]})."
    )


# ----------------------------------------------------------------------------- link
def _prompt(raw: str) -> str:
    lm.encode_prompt(lm.load_tokenizer(), raw)  # the same checks as the text box
    return raw


def _temperature(raw: str) -> float:
    value = float(raw)
    tenths = value * 10
    if not (math.isfinite(value) and 0 <= value <= T_MAX and abs(tenths - round(tenths)) < 1e-9):
        raise ValueError(f"{raw[:20]!r} is not a temperature 0, 0.1, ..., {T_MAX:g}")
    return round(value, 1)


def state_from_link(params: Mapping[str, str], pairs: list[str]) -> tuple[dict, list[str]]:
    """The page's settings from a link, and its problems ([] when every value was fine).

    Each bad value falls back to its default and is named in a problem. A link without a
    draft length opens on :data:`DEFAULT_DRAFT_LENGTH`.
    """
    reader = LinkReader(params)
    draft = reader.choice("draft", list(DRAFT_LENGTHS), DEFAULT_DRAFT_LENGTH)
    default_pair = DEFAULT_PAIR if DEFAULT_PAIR in pairs else pairs[0]
    tokens = reader.int_in("tokens", TOKENS_MIN, TOKENS_MAX, DEFAULT_TOKENS)
    if tokens % TOKENS_STEP:
        reader.problems.append(f"link parameter 'tokens': {tokens} is not a multiple of 10")
        tokens = DEFAULT_TOKENS
    state = {
        "pair": reader.choice("pair", pairs, default_pair),
        "prompt": reader.get("prompt", _prompt, DEFAULT_PROMPT),
        "k": reader.int_in("k", 1, K_MAX, DEFAULT_K),
        "draft": draft,
        "temperature": reader.get("t", _temperature, 0.0),
        "seed": reader.int_in("seed", 0, MAX_SEED, 0),
        "tokens": tokens,
        "mode": reader.choice("mode", list(MODES), "run"),
        "round": reader.int_in("round", 1, TOKENS_MAX, 1),
    }
    return state, reader.problems


def link_params(state: Mapping[str, object]) -> dict[str, str]:
    """The query parameters that reopen ``state`` (keys as in :func:`state_from_link`)."""
    params = {
        "pair": state["pair"],
        "prompt": state["prompt"],
        "k": state["k"],
        "draft": state["draft"],
        "t": f"{float(state['temperature']):.1f}",
        "seed": state["seed"],
        "tokens": state["tokens"],
        "mode": state["mode"],
    }
    if state["mode"] == "step":
        params["round"] = state["round"]
    return {name: str(value) for name, value in params.items()}


def link_for(state: Mapping[str, object]) -> str:
    """``?pair=...&...``: the part of the address that reopens ``state``."""
    return share_query(link_params(state))
