"""What drafting, the guard and verifying cost on the running machine: c, a and v(k).

The guard that steps aside when drafting does not pay (:mod:`.adaptive`) starts from
these numbers and (by default) then measures each run on its own clock, so they should
be this machine's: a verify of
k + 1 rows costs 1.06 plain steps on one processor and 1.9 on another (OpenBLAS picks
its small-matrix kernels by processor; issues 20, 27). Measured the way :mod:`.timing`
measures a speedup:

- **per-thread CPU time** (``time.thread_time``): time spent waiting for a core while
  other sessions run does not count (BLAS runs on the calling thread: ``load_pair``
  limits it to one);
- **interleaved repeats**: each repeat times the verify of k = 0..K drafts, one draft
  call and one round of the guard's work in turn (the order reversed every other repeat), so
  a slow phase of the machine hits them all; each figure is the median over the repeats
  of its time divided by the same repeat's plain step (paired ratios: the phase divides
  out).

What is timed is what the engine does (:mod:`.generate`): v(k) is the engine's
``_verify_step`` on k drafts (the target's call on k + 1 tokens and the decisions: argmax
at T = 0, softmax and coins above) plus the rollback, over the target's own greedy
continuation (so the drafts are kept, as in a good round). Round 0, the target's call on
one token and its choice, is a plain step: the unit, so v(0) = 1 by definition. c is one
draft call (a model's row, or a lookup draft's guesses and their q rows) and a the
guard's work for one round (:func:`_draft_timers`). With the default 60 repeats and K = 8 it
takes about 1.5-2 s of CPU for the shipped 4-layer target (a plain step of 0.4-0.9 ms).

Measured apart from a run, these figures run low: within a run the draft's call finds
its data out of cache after every target call (issue 27 measured a lookup draft's call
at about twice this measurement in the run itself), and they move with the machine's
load (here v(3) 1.3-1.8 and v(4) 2.3-3.8 within an hour on two shared cores). That is
why a guarded run measures its rounds by its own clock (``CostProfile.own_clock``).
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..distributions import check_k
from ..errors import InvalidParameterError
from ..greedy import one_hot_rows
from .adaptive import CostProfile, DraftGuard
from .blas import blas_kernel
from .generate import (
    MAX_TEMPERATURE,
    _Run,
    _sample,
    _Tally,
    _verify_step,
    autoregressive_generate,
    probabilities,
)

COST_PROMPT = "def add(a, b):\n    return a + b\n\n"  # a fixed context for the timed calls
# The target's greedy text after the prompt is the context of every timed call: 128
# tokens, the middle of a 200-token answer (attention grows with the context).
CONTEXT_TOKENS = 128
MAX_COST_REPEATS = 200
LOOKUP_POSITIONS = 16  # a lookup draft's call is timed after each of the last 16 prefixes


def _context(target, k_max: int) -> list[int]:
    """The prompt and the target's greedy continuation: CONTEXT_TOKENS + k_max + 1 ids."""
    ids = target.tokenizer.encode(COST_PROMPT)
    run = autoregressive_generate(
        target,
        ids,
        max_new_tokens=CONTEXT_TOKENS + k_max + 1,
        temperature=0.0,
        rng=np.random.default_rng(0),
    )
    return [*ids, *run.tokens]


def _target_timers(target, text, base, k_max, t):
    """v(0..k_max) timers: each makes one round's target work and undoes it (the cache is
    left at ``base`` - 1 tokens). Round 0, a plain step, is the unit of every cost."""
    runner = target.fresh()
    runner.extend(text[: base - 1], last_only=True)
    rng = np.random.default_rng(0)
    vocab = target.tokenizer.vocab_size
    run = _Run(None, runner, list(text[:base]), base, _Tally(), None, t, rng, trace=False)

    def verify(k):
        drafts = text[base : base + k]
        q_rows = None if t == 0.0 else one_hot_rows(drafts, vocab)
        _verify_step(run, drafts, q_rows)
        runner.rollback(base - 1)

    return [lambda k=k: verify(k) for k in range(k_max + 1)]


def _draft_timers(draft, text, base, k_max, t):
    """Two callables: one draft call, and one round of the guard's work, as a guarded
    run makes them (:func:`.generate._draft_step`, ``_one_round``).

    A lookup draft: the call is ``propose`` of K guesses and their one-hot q rows (T > 0),
    after each of the last LOOKUP_POSITIONS prefixes of the context in turn (a draft that
    reads a table reads other entries every round). A model draft: the call is one row
    (the forward pass on one token, its distribution and the drawn token). The guard's
    round: its decision (:meth:`.DraftGuard.plain_rounds`) and its books
    (:meth:`.DraftGuard.record`), with flat placeholder costs (the real ones are what is
    being measured).
    """
    lookup = hasattr(draft, "propose")
    flat = CostProfile("timing", 0.0, (1.0,) * (k_max + 1), per_token=not lookup)
    guard = DraftGuard(replace(flat, own_clock=False), k_max)

    def plan():
        guard.plain_rounds()
        guard.record(k_max, 2, 1, (0.0, 0.0, 0.0))

    if lookup:
        return _lookup_call(draft, text, base, k_max, t), plan
    runner = draft.fresh()
    runner.extend(text[: base - 1], last_only=True)
    rng = np.random.default_rng(0)

    def call():
        logits = runner.extend((text[base - 1],), last_only=True)
        q_row = None if t == 0.0 else probabilities(logits, t)[0]
        int(logits[0].argmax()) if q_row is None else _sample(q_row, t, rng)
        runner.rollback(base - 1)

    return call, plan


def _lookup_call(draft, text, base, k_max, t):
    """A draft without a model: its call over rotating prefixes (:func:`_draft_timers`)."""
    prefixes = [text[:p] for p in range(base - LOOKUP_POSITIONS + 1, base + 1)]
    turn = itertools.count()
    vocab = draft.tokenizer.vocab_size

    def call():
        drafts = draft.propose(prefixes[next(turn) % len(prefixes)], k_max)
        if t > 0.0:
            one_hot_rows(drafts, vocab)

    return call


def _interleaved(timers, repeats: int, clock) -> list[list[float]]:
    """Seconds of each timer in each of ``repeats`` rounds of all of them in turn."""
    times: list[list[float]] = [[] for _ in timers]
    order = list(range(len(timers)))
    for r in range(repeats + 1):  # repeat 0 warms the caches and is not kept
        for i in order if r % 2 else order[::-1]:
            start = clock()
            timers[i]()
            if r:
                times[i].append(clock() - start)
    return times


def _paired_ratios(times: list[list[float]]) -> list[float]:
    """median_r times[i][r] / times[0][r] for every timer i: each repeat's own unit, so a
    slow phase of the machine divides out instead of tilting one figure."""
    return [
        statistics.median(t / unit for t, unit in zip(ts, times[0], strict=True)) for ts in times
    ]


def measure_pair_costs(
    pair: tuple,
    k_max: int,
    *,
    name: str = "",
    temperature: float = 0.0,
    repeats: int = 60,
    clock: Callable[[], float] = time.thread_time,
) -> CostProfile:
    """c and v(0..k_max) of ``pair`` = (draft, target), in plain target steps.

    See the module docstring for what is timed; ``clock`` is a per-thread clock (a test
    may pass another). T = 0 times the engine's greedy path, T > 0 its softmax and coins.
    """
    k_max = check_k(k_max)
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        raise InvalidParameterError(f"repeats is {repeats!r}; allowed: 1 to {MAX_COST_REPEATS}.")
    if not 1 <= repeats <= MAX_COST_REPEATS:
        raise InvalidParameterError(f"repeats is {repeats}; allowed: 1 to {MAX_COST_REPEATS}.")
    t = float(temperature)
    if not 0.0 <= t <= MAX_TEMPERATURE:
        raise InvalidParameterError(f"temperature is {temperature!r}; allowed: 0 to 5.")
    draft, target = pair
    text = _context(target, k_max)
    base = len(text) - k_max
    timers = _target_timers(target, text, base, k_max, t)
    timers.extend(_draft_timers(draft, text, base, k_max, t))
    times = _interleaved(timers, repeats, clock)
    ratios = _paired_ratios(times)  # (1.0, v(1), ..., v(K), c, a)
    return CostProfile(
        pair=name,
        draft=ratios[-2],
        plan=ratios[-1],
        verify=(1.0, *ratios[1:-2]),
        per_token=not hasattr(draft, "propose"),
        step_s=statistics.median(times[0]),
        temperature=t,
        kernel=blas_kernel(),
        clock=f"{getattr(clock, '__module__', '')}.{getattr(clock, '__name__', 'clock')}".lstrip(
            "."
        ),
    )


def measure_costs(
    pair_name: str, k_max: int, *, temperature: float = 0.0, repeats: int = 60
) -> CostProfile:
    """:func:`measure_pair_costs` of the shipped pair ``pair_name`` (loaded here).

    From names and numbers only, so a helper process or a background thread can run it
    (``load_pair`` sets numpy's BLAS to one thread first).
    """
    from .pairs import load_pair  # the registry imports the models; costs do not need them

    return measure_pair_costs(
        load_pair(pair_name), k_max, name=pair_name, temperature=temperature, repeats=repeats
    )
