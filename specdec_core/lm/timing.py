"""A speedup measurement that holds still while other work shares the machine.

The page's old figure was one wall-clock ratio of a speculative and a plain run: every
other session's work, the garbage collector and the operating system's scheduling went
into it, and fresh visits at identical settings showed 0.6x to 3.5x. Here:

- **per-thread CPU time** (``time.thread_time``): the CPU the measuring thread itself
  used. Time the thread spends waiting for a core or for the interpreter lock while other
  sessions run does not count. BLAS must run on the calling thread for this to hold (it
  does: :func:`specdec_core.lm.blas.limit_blas_threads`), and the measurement must run on
  one thread (the page runs it on the heavy-work queue's worker);
- **interleaved repeats**: speculative, plain and draft-only runs alternate, so a slow
  phase of the machine hits all three; the speedup of repeat i is plain_i / spec_i, and
  the figure is the median of the repeats with their range as the spread;
- **unit costs** from the same runs: target step = plain time / n, draft step = draft-only
  time / n, c = draft step / target step, and everything a round does besides drafting,
  in target steps, v(K) = (spec time / rounds - K draft step) / target step (the verify
  call on K + 1 tokens, the accept / reject decisions and the rollback);
- **a physics check**: a figure that no correct run can produce is refused, with the
  reason (:func:`impossible_reasons`).

Seeds' cost model (seed 003 Ex 7; Leviathan et al. 2023, Thm 3.8) with the verify cost
measured instead of assumed to be 1: S = E / (K c + v(K)), E = tokens per round.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from .adaptive import CostProfile
from .generate import autoregressive_generate, speculative_generate

MAX_REPEATS = 15


@dataclass(frozen=True)
class SpeedMeasurement:
    """Interleaved CPU-time runs of speculative, plain and draft-only decoding."""

    k: int
    temperature: float
    n_tokens: int
    parallel_verify: bool  # the target scores K + 1 positions in one call
    spec_s: tuple[float, ...]  # per repeat, seconds of the measuring thread's CPU
    plain_s: tuple[float, ...]
    draft_s: tuple[float, ...]
    rounds: int  # speculative rounds of the median repeat (of every repeat, at a fixed K)
    accepted: int  # drafts kept in one run
    checked: int  # drafts checked in one run
    clock: str  # name of the clock, e.g. "time.thread_time"
    drafted: int | None = None  # drafts proposed in one run (None: K every round)
    draft_length: str = "fixed"  # "fixed": K a round; "adaptive": K or plain steps (the guard)

    @property
    def speedups(self) -> tuple[float, ...]:
        """plain_i / spec_i for each repeat i."""
        return tuple(p / s for p, s in zip(self.plain_s, self.spec_s, strict=True))

    @property
    def speedup(self) -> float:
        """Median of the per-repeat speedups."""
        return statistics.median(self.speedups)

    @property
    def spread(self) -> tuple[float, float]:
        """(lowest, highest) per-repeat speedup."""
        return min(self.speedups), max(self.speedups)

    @property
    def target_step(self) -> float:
        """Seconds of one plain target step: median plain time / n."""
        return statistics.median(self.plain_s) / self.n_tokens

    @property
    def c(self) -> float:
        """Draft step / target step (median draft-only time / median plain time)."""
        return statistics.median(self.draft_s) / statistics.median(self.plain_s)

    @property
    def drafts_per_round(self) -> float:
        """Drafts proposed per round: K, or fewer when rounds drafted less (a quiet lookup
        draft, a guard that stepped aside)."""
        return self.k if self.drafted is None else self.drafted / self.rounds

    @property
    def v(self) -> float:
        """v = (spec time / rounds - drafts per round x draft step) / target step, from
        medians: what a round costs besides its drafting, in plain steps (v(K) at fixed K)."""
        per_round = statistics.median(self.spec_s) / self.rounds
        draft_step = statistics.median(self.draft_s) / self.n_tokens
        return (per_round - self.drafts_per_round * draft_step) / self.target_step

    @property
    def tokens_per_round(self) -> float:
        """E measured: generated tokens / rounds (the last round cut at the limit)."""
        return self.n_tokens / self.rounds

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.checked if self.checked else math.nan


class _Lockstep:
    """Plain decoding paced by the speculative run: it may produce as many tokens as the
    speculative run has emitted so far, then waits. The two runs take turns round by
    round (a few ms), so a slow phase of the machine hits both alike."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.allowed = 0  # tokens the plain run may have produced
        self.plain_done = 0
        self.finished = False

    def on_round(self, n_emitted: int) -> None:  # speculative thread, after each round
        with self.cond:
            self.allowed = n_emitted
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.plain_done >= n_emitted or self.finished, 60)

    def on_token(self, n_done: int) -> None:  # plain thread, after each token
        with self.cond:
            self.plain_done = n_done
            if n_done >= self.allowed:  # the speculative thread waits for this token: wake
                self.cond.notify_all()  # it (not at every token: it would pay the wake-ups)
            self.cond.wait_for(lambda: self.allowed > n_done or self.finished, 60)

    def wait_first_token(self) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.plain_done >= 1 or self.finished, 60)

    def finish(self) -> None:
        with self.cond:
            self.finished = True
            self.cond.notify_all()


def _lockstep_pair(spec, plain, clock) -> tuple[float, float, object, object]:
    """CPU seconds of ``spec(on_round)`` and ``plain(on_token)`` run in turns, each on its
    own thread and timed with ``clock`` (a per-thread clock) on that thread, and their
    results."""
    step, times, errors, out = _Lockstep(), {}, [], {}

    def body(name, fn, hook):
        try:
            start = clock()
            out[name] = fn(hook)
            times[name] = clock() - start
        except Exception as err:  # noqa: BLE001 - re-raised on the caller's thread
            errors.append(err)
        finally:
            step.finish()

    plain_thread = threading.Thread(target=body, args=("plain", plain, step.on_token))
    plain_thread.start()
    step.wait_first_token()
    body("spec", spec, step.on_round)
    plain_thread.join(120)
    if errors:
        raise errors[0]
    return times["spec"], times["plain"], out["spec"], out["plain"]


def _runners(pair: tuple, prompt_ids, k, temperature, max_new_tokens, seed, adaptive=None):
    """The three runs a measurement times: (speculative, plain, draft-only) generation.

    Each run of a kind uses ``np.random.default_rng(seed)``, so every repeat makes the
    same tokens; the first two take the lockstep hook (``on_round`` / ``on_token``).
    ``adaptive``: the cost profile of the guard that steps aside (None: K every round).
    """
    draft, target = pair
    common = {"max_new_tokens": max_new_tokens, "temperature": temperature}

    def spec(on_round=None):
        rng = np.random.default_rng(seed)
        return speculative_generate(
            draft,
            target,
            prompt_ids,
            k=k,
            rng=rng,
            trace=False,
            on_round=on_round,
            adaptive=adaptive,
            **common,
        )

    def plain(on_token=None):
        rng = np.random.default_rng(seed)
        return autoregressive_generate(target, prompt_ids, rng=rng, on_token=on_token, **common)

    def draft_only():
        if hasattr(draft, "propose"):  # prompt lookup: no model; time one lookup per token
            return [draft.propose(list(prompt_ids), k) for _ in range(max_new_tokens)]
        return autoregressive_generate(draft, prompt_ids, rng=np.random.default_rng(seed), **common)

    return spec, plain, draft_only


def lockstep_runs(
    pair: tuple,
    prompt_ids: Sequence[int],
    *,
    k: int,
    temperature: float,
    max_new_tokens: int,
    seed: int = 0,
    adaptive: CostProfile | None = None,
    clock: Callable[[], float] = time.thread_time,
) -> tuple[float, float, object, object]:
    """One speculative and one plain run of ``prompt_ids``, in turns round by round
    (:class:`_Lockstep`), each with ``np.random.default_rng(seed)``: (speculative CPU
    seconds, plain CPU seconds, the speculative result, the plain result). What
    :func:`measure_speedup` repeats; a benchmark pairs every run this way."""
    spec, plain, _ = _runners(pair, prompt_ids, k, temperature, max_new_tokens, seed, adaptive)
    return _lockstep_pair(spec, plain, clock)


def measure_speedup(
    pair: tuple,
    prompt_ids: Sequence[int],
    *,
    k: int,
    temperature: float,
    max_new_tokens: int,
    seed: int = 0,
    repeats: int = 5,
    clock: Callable[[], float] = time.thread_time,
    adaptive: CostProfile | None = None,
) -> SpeedMeasurement:
    """Time ``repeats`` (speculative, plain, draft-only) runs with a per-thread ``clock``.

    ``pair`` is (draft, target) as :func:`specdec_core.lm.load_pair` returns it.

    Speculative and plain decoding run in turns, round by round, on two threads that
    never compute at the same time (:class:`_Lockstep`); each is timed on its own
    thread. The draft-only run (for c) follows. Every run of a kind uses
    ``np.random.default_rng(seed)``, so every repeat makes the same tokens and only the
    clock differs. One untimed run of each kind warms caches first. Prefill is included
    in every run alike; with a short prompt it is a small part of the time.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 15:
        raise InvalidParameterError(f"repeats is {repeats!r}; allowed: 1 to {MAX_REPEATS}.")
    spec, plain, draft_only = _runners(
        pair, prompt_ids, k, temperature, max_new_tokens, seed, adaptive
    )
    spec(), plain(), draft_only()  # warm-up (untimed)
    times: list[tuple[float, float, float]] = []
    runs = []
    for _ in range(repeats):
        spec_s, plain_s, run, _ = _lockstep_pair(spec, plain, clock)
        start = clock()
        draft_only()
        times.append((spec_s, plain_s, clock() - start))
        runs.append(run)
    spec_s, plain_s, draft_s = (tuple(col) for col in zip(*times, strict=True))
    # The counts: those of the repeat with the median time (every repeat makes the same
    # rounds, but for a guard measured by its own clock, which may differ a little)
    run = runs[sorted(range(repeats), key=spec_s.__getitem__)[repeats // 2]]
    return SpeedMeasurement(
        k=run.k,
        temperature=run.temperature,
        n_tokens=len(run.tokens),
        parallel_verify=bool(pair[1].parallel_verify),
        spec_s=spec_s,
        plain_s=plain_s,
        draft_s=draft_s,
        rounds=run.n_rounds,
        accepted=run.accepted,
        checked=run.checked,
        clock=f"{getattr(clock, '__module__', '')}.{getattr(clock, '__name__', 'clock')}".lstrip(
            "."
        ),
        drafted=run.drafted,
        draft_length=run.draft_length,
    )


def measure_pair(
    name: str,
    prompt: str,
    *,
    k: int,
    temperature: float,
    max_new_tokens: int,
    seed: int = 0,
    repeats: int = 5,
    adaptive: CostProfile | None = None,
) -> SpeedMeasurement:
    """:func:`measure_speedup` of the shipped pair ``name`` on the text ``prompt``.

    Loads the pair here (once per process), so that a helper process can run it from
    names and numbers alone (``specdec_ui.runtime.processes``; a cost profile is numbers too).
    """
    from .pairs import load_pair  # the registry imports the models; timing does not need them
    from .report import encode_prompt

    pair = load_pair(name)
    ids = encode_prompt(pair[1].tokenizer, prompt)
    return measure_speedup(
        pair,
        ids,
        k=k,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        seed=seed,
        repeats=repeats,
        adaptive=adaptive,
    )


def predicted_speedup(tokens_per_round: float, k: int, c: float, v: float) -> float:
    """S = E / (K c + v(K)): seeds' formula with the measured verify cost (seed 003 Ex 7)."""
    return tokens_per_round / (k * c + v)


def impossible_reasons(m: SpeedMeasurement) -> list[str]:
    """Why a measurement cannot be right ([] when it can), in words for the page.

    - any run took no CPU time, or a time is not finite: the clock failed;
    - a target with a parallel verify scores K + 1 positions in one call, which costs at
      least one plain step: v(K) < 1 is impossible (it means the plain run was slowed or
      the speculative run was favoured by something else);
    - a round emits at most K + 1 tokens for K draft steps and one verify, so the speedup
      cannot exceed E / (K c + 1) with E = tokens per round (the v = 1 bound); nor can
      it exceed K + 1.
    """
    reasons: list[str] = []
    all_times = m.spec_s + m.plain_s + m.draft_s
    if any(not math.isfinite(t) or t <= 0 for t in all_times):
        return ["a run took no measurable CPU time, so the clock cannot compare them"]
    if m.parallel_verify and m.v < 1.0:
        reasons.append(
            f"v(K) = {m.v:.2f} < 1: checking K + 1 = {m.k + 1} tokens in one target call "
            "cannot cost less than one plain step"
        )
    bound = min(m.k + 1.0, predicted_speedup(m.tokens_per_round, m.k, max(m.c, 0.0), 1.0))
    if m.speedup > bound * 1.05:
        reasons.append(
            f"{m.speedup:.2f}x is above the most these rounds allow ({bound:.2f}x with "
            f"{m.tokens_per_round:.2f} tokens per round and a verify of one step)"
        )
    if m.c < 0:
        reasons.append(f"the draft step came out negative (c = {m.c:.3f})")
    return reasons
