"""The Serving lab under load: continuous batching at a QPS, with and without speculation.

A **steady-state** model (no simulation, no randomness): requests arrive at ``qps`` per
second (Poisson arrivals: only their mean rate enters a steady state), each with ``prompt``
tokens to prefill and ``output`` tokens to decode. The engine runs continuous batching
(Yu et al. 2022, Orca; vLLM): every step decodes one token (a plain step) or one round
(speculation) for every running sequence, and the prompt tokens that arrived meanwhile
share the same pass in chunks (chunked prefill, at most ``chunk`` prompt tokens per step:
vLLM's ``max_num_batched_tokens``). With a step (or round) of ``T(b, p)`` seconds that
emits ``tau`` tokens per sequence (1 for a plain step, tau_eff for a round), the per-token
latency (time per output token, TPOT) of a running sequence is

    TPOT(b) = T(b, p) / tau,        p = qps x prompt x T(b, p)        (prompt tokens per step)

and Little's law (Little 1961: mean number in a system = arrival rate x mean time in it)
fixes the batch: a sequence stays ``output x TPOT`` seconds, so

    b = qps x output x TPOT(b).

``T`` is the step model of :mod:`specdec_core.serving` used as a black box
(``plain_step``, ``draft_step``, ``verify_step``: a round is d h draft steps + one verify of
m_eff tokens, the prompt chunk riding on the target's pass). T grows with b, so
g(b) = qps x output x TPOT(b) - b is convex (the step is a sum of lines and of blends
(m^2 + a^2)^(1/2) of lines in b, each convex): it has one root in [1, cap] when
g(1) > 0 >= g(cap), found on the whole batches 1..cap in one vectorised call and
interpolated linearly between the two around the sign change, exact where T is linear and
within 1e-5 where the blend bends it (:func:`batch_at`, :func:`steady_batch`; the prompt
tokens per step by a fixed-point iteration). Below one sequence on average (g(1) <= 0) a
sequence mostly runs alone: the step at batch 1. When g(cap) > 0 (or the prompts need more than
``chunk`` tokens per step) the server cannot keep up: queues grow without bound, the
latency has no steady state (NaN) and the throughput stays at its capacity.

Assumptions, said on the page: the mean context of a running sequence is
prompt + output / 2 (a paged KV cache holds what each sequence has written so far,
Kwon et al. 2023, PagedAttention); every running sequence is in every step; the batch is
capped by ``max_seqs`` (vLLM's ``max_num_seqs``, 256 by default) and by the KV cache that
fits in ``memory_share`` of the memory (vLLM's ``gpu_memory_utilization``, 0.9) after the
target's and the draft's weights; prefill's own wait (time to first token) is left out.

Sources: the vLLM blog "How Speculative Decoding Boosts vLLM Performance by up to 2.8x"
(17 Oct 2024: gains at low QPS, slowdowns at high QPS); SmartSpec (Liu et al. 2024,
arXiv 2406.14066): goodput, the rate of generated tokens a server sustains, falls with
speculation once the batch is large, so the best speculation length shrinks with load;
vLLM's ``speculative_disable_by_batch_size`` (engine arguments, v0.6: speculation off for
new requests while more than that many run).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .errors import InvalidParameterError
from .serving import (
    Acceptance,
    DraftSpec,
    ServingSetup,
    draft_step,
    memory_needed,
    plain_step,
    verify_step,
)
from .serving_checks import MAX_BATCH, MAX_CONTEXT, MAX_PREFILL, finite_in, share_in, whole_in

MIN_QPS = 1e-3  # requests per second
MAX_QPS = 10_000.0
MAX_QPS_POINTS = 200  # points of one QPS sweep
DEFAULT_MAX_SEQS = 256  # vLLM's max_num_seqs
DEFAULT_MEMORY_SHARE = 0.9  # vLLM's gpu_memory_utilization
DEFAULT_CHUNK = 2_048  # prompt tokens per step at most (vLLM's max_num_batched_tokens)
BISECTIONS = 40  # halvings of the batch (or QPS) interval: far below a sequence
NO_DRAFT = DraftSpec("no draft", fixed_c=0.0)  # plain decoding: no draft weights, no cache


def check_qps(qps: object, name: str = "QPS") -> float:
    """Requests per second in [MIN_QPS, MAX_QPS]."""
    return finite_in(name, qps, MIN_QPS, MAX_QPS, "requests per second")


@dataclass(frozen=True)
class Workload:
    """What the requests look like and what the engine allows (checked on creation).

    ``prompt`` and ``output``: mean tokens per request (prompt + output <= MAX_CONTEXT);
    ``max_seqs``: the most sequences in one step (vLLM ``max_num_seqs``);
    ``memory_share``: the share of the chips' memory for weights and KV cache (vLLM
    ``gpu_memory_utilization``); ``chunk``: prompt tokens one step may carry
    (``max_num_batched_tokens``); ``chunked``: prompts share the decoding steps (chunked
    prefill) or, False, run in passes of their own of ``chunk`` tokens that pause decoding
    (vLLM's V0 engine of 2024 unless the context passed 32K tokens).
    """

    prompt: int
    output: int
    max_seqs: int = DEFAULT_MAX_SEQS
    memory_share: float = DEFAULT_MEMORY_SHARE
    chunk: int = DEFAULT_CHUNK
    chunked: bool = True

    def __post_init__(self) -> None:
        whole_in("prompt tokens per request", self.prompt, 1, MAX_CONTEXT - 1)
        whole_in("output tokens per request", self.output, 1, MAX_CONTEXT - 1)
        if self.prompt + self.output > MAX_CONTEXT:
            raise InvalidParameterError(
                f"prompt tokens + output tokens per request = {self.prompt + self.output:,} "
                f"is out of range; allowed: at most {MAX_CONTEXT:,} (the longest context)."
            )
        whole_in("most sequences per step (max_num_seqs)", self.max_seqs, 1, MAX_BATCH)
        share_in("share of memory for weights and KV cache", self.memory_share)
        whole_in("prompt tokens per step at most (chunk)", self.chunk, 1, MAX_PREFILL)

    @property
    def mean_context(self) -> int:
        """prompt + output / 2: what a running sequence has in its KV cache on average."""
        return self.prompt + self.output // 2


# ----------------------------------------------------------------------------- memory
def _per_sequence(setup: ServingSetup, context: int) -> tuple[float, float] | None:
    """(weights, KV bytes of one sequence at ``context``) of ``setup``'s target and draft,
    or None when not even one sequence fits in the whole memory."""
    try:
        at = dataclasses.replace(setup, context=context, prefill=0)
    except InvalidParameterError:
        return None
    return memory_needed(at, 1)


def largest_batch(setup: ServingSetup, context: int, memory_share: float = 1.0) -> int:
    """floor((share x memory - weights) / KV bytes per sequence), at most MAX_BATCH.

    KV bytes per sequence = target's KV per token x n + the draft's x min(n, its budget)
    (:func:`specdec_core.serving.memory_needed`); 0 when no sequence fits.
    """
    whole_in("context length", context, 1, MAX_CONTEXT)
    share = share_in("share of memory for weights and KV cache", memory_share)
    sizes = _per_sequence(setup, context)
    if sizes is None:
        return 0
    weights, per_sequence = sizes
    room = share * setup.hardware.total_memory - weights
    return int(min(MAX_BATCH, max(0, math.floor(room / per_sequence))))


def plain_setup(setup: ServingSetup) -> ServingSetup:
    """The same server without a draft (no draft weights, no draft cache)."""
    return dataclasses.replace(setup, draft=NO_DRAFT, draft_tp=None)


@dataclass(frozen=True)
class MemoryCurve:
    """The largest batch that fits at each context, with and without the draft."""

    context: np.ndarray  # (C,) tokens
    with_draft: np.ndarray  # (C,) sequences
    without_draft: np.ndarray  # (C,)
    max_seqs: int
    binds_from: int | None  # the shortest context at which the KV cache caps the batch


def binding_context(setup: ServingSetup, max_seqs: int, memory_share: float) -> int | None:
    """The shortest context at which fewer than ``max_seqs`` sequences fit (the KV cache,
    not max_num_seqs, caps the batch from there on); None when max_seqs fit at MAX_CONTEXT.

    The largest batch falls as the context grows, so bisection over whole contexts.
    """
    if largest_batch(setup, MAX_CONTEXT, memory_share) >= max_seqs:
        return None
    lo, hi = 1, MAX_CONTEXT  # fits at lo (or lo binds already), not at hi
    if largest_batch(setup, lo, memory_share) < max_seqs:
        return 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if largest_batch(setup, mid, memory_share) >= max_seqs:
            lo = mid
        else:
            hi = mid
    return hi


def memory_curve(setup: ServingSetup, workload: Workload, points: int = 48) -> MemoryCurve:
    """:func:`largest_batch` over contexts from 256 to MAX_CONTEXT (log spaced), with the
    draft and without it, and where the KV cache starts to bind."""
    whole_in("points", points, 2, MAX_QPS_POINTS)
    ctx = np.unique(np.round(np.geomspace(256, MAX_CONTEXT, points)).astype(np.int64))
    share, plain = workload.memory_share, plain_setup(setup)
    return MemoryCurve(
        ctx,
        np.array([largest_batch(setup, int(n), share) for n in ctx]),
        np.array([largest_batch(plain, int(n), share) for n in ctx]),
        workload.max_seqs,
        binding_context(setup, workload.max_seqs, share),
    )


def batch_cap(setup: ServingSetup, workload: Workload) -> int:
    """min(max_seqs, the largest batch whose KV cache fits at the mean context)."""
    fits = largest_batch(setup, workload.mean_context, workload.memory_share)
    if fits < 1:
        raise InvalidParameterError(
            f"{setup.target.label} with the {setup.draft.label}: not one sequence of "
            f"{workload.mean_context:,} tokens fits in {workload.memory_share:.0%} of the "
            f"{setup.hardware.total_memory / 1e9:,.1f} GB after the weights; use more memory, "
            "a larger share or shorter requests."
        )
    return min(workload.max_seqs, fits)


# ----------------------------------------------------------------------------- one cycle
def cycle_s(setup: ServingSetup, acceptance: Acceptance | None, batch, prefill: int):
    """Seconds of one plain step (``acceptance`` None) or one round at each batch in
    ``batch`` with ``prefill`` prompt tokens in the target's pass:
    d h x draft step + verify of m_eff tokens + W, the engine's work per round (serving.py's
    ``engine_work_s``; the draft prefills nothing)."""
    target = dataclasses.replace(setup, prefill=int(prefill))
    if acceptance is None:
        return plain_step(target, batch)
    drafts = acceptance.k * acceptance.propose_share * draft_step(setup, batch)
    return drafts + verify_step(target, acceptance.effective_verified, batch) + setup.engine_work_s


# ----------------------------------------------------------------------------- steady state
@dataclass(frozen=True)
class LoadPoint:
    """The steady state at one QPS (NaN latency and batch when the server cannot keep up)."""

    qps: float
    batch: float  # mean sequences decoding (Little's law)
    tpot_s: float  # seconds per output token of a running sequence
    prefill: int  # prompt tokens per step
    overloaded: bool

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second served: b / TPOT = qps x output; NaN when overloaded."""
        return math.nan if self.overloaded else self.batch / self.tpot_s


def _overloaded(qps: float) -> LoadPoint:
    return LoadPoint(qps, math.nan, math.nan, 0, True)


def batch_at(cycle: np.ndarray, tau: float, demand: float) -> float | None:
    """The root of g(b) = demand x T(b) / tau - b, T given at b = 1..cap (``cycle``):
    below 1 when g(1) <= 0 (the sequence runs alone, at batch 1's step), linear between
    the whole batches around the sign change (T is linear there), None when g(cap) > 0."""
    b = np.arange(1, cycle.size + 1, dtype=np.float64)
    g = demand * cycle / tau - b  # (cap,)
    if g[0] <= 0:
        return demand * float(cycle[0]) / tau
    below = np.flatnonzero(g <= 0)
    if not below.size:
        return None
    i = int(below[0])  # g[i - 1] > 0 >= g[i]
    return float(b[i - 1] + g[i - 1] / (g[i - 1] - g[i]))


MAX_PREFILL_ROUNDS = 100  # fixed-point passes for the prompt tokens per step


def prefill_share(setup: ServingSetup, workload: Workload, qps: float) -> float:
    """Without chunked prefill: the share of time spent in prompt passes of ``chunk``
    tokens, rho = qps x prompt / chunk x T(1, chunk) (each pass priced as a step at batch 1
    carrying ``chunk`` prompt tokens). Decoding runs in the other 1 - rho."""
    passes = qps * workload.prompt / workload.chunk  # prompt passes per second
    full = dataclasses.replace(setup, prefill=workload.chunk)
    return passes * float(plain_step(full, 1))


def steady_batch(setup, acceptance: Acceptance | None, workload: Workload, qps) -> LoadPoint:
    """Little's law b = qps x output x TPOT(b) with p = qps x prompt x T (module doc).

    For a given p the batch is the root of g over whole batches 1..cap (:func:`batch_at`);
    p is then found by the fixed-point iteration p <- ceil(qps x prompt x T(b(p), p)) from
    p = 0: T grows with p, so the whole numbers climb to the smallest fixed point (or past
    the chunk: overloaded; more than MAX_PREFILL_ROUNDS passes counts as overloaded too,
    a point at the edge of saturation). Without chunked prefill p = 0 and every step is
    stretched by 1 / (1 - rho) (:func:`prefill_share`).
    """
    qps, cap = check_qps(qps), batch_cap(setup, workload)
    demand, rate = qps * workload.output, qps * workload.prompt
    tau = 1.0 if acceptance is None else acceptance.effective_tokens
    stretch = 1.0
    if not workload.chunked:
        rho = prefill_share(setup, workload, qps)
        if rho >= 1.0:
            return _overloaded(qps)
        stretch, rate = 1.0 / (1.0 - rho), 0.0
    grid = np.arange(1, cap + 1)
    p = 0
    for _ in range(MAX_PREFILL_ROUNDS):
        cycle = stretch * np.atleast_1d(cycle_s(setup, acceptance, grid, p))  # (cap,)
        b = batch_at(cycle, tau, demand)
        if b is None:
            return _overloaded(qps)
        step = float(cycle[0]) if b <= 1 else tau * b / demand  # T at the root
        nxt = math.ceil(rate * step)
        if nxt > workload.chunk:
            return _overloaded(qps)
        if nxt <= p:
            return LoadPoint(qps, b, step / tau, p, False)
        p = nxt
    return _overloaded(qps)


def capacity_qps(setup, acceptance: Acceptance | None, workload: Workload) -> float:
    """The most QPS the server sustains (its goodput / output tokens, SmartSpec's sense):
    bisection on the QPS at which the steady state stops existing (within 0.1 %)."""
    lo, hi = MIN_QPS, MAX_QPS
    if steady_batch(setup, acceptance, workload, lo).overloaded:
        return 0.0
    if not steady_batch(setup, acceptance, workload, hi).overloaded:
        return hi
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if steady_batch(setup, acceptance, workload, mid).overloaded:
            hi = mid
        else:
            lo = mid
    return lo


@dataclass(frozen=True)
class LoadSweep:
    """Plain decoding and speculation against QPS (arrays of one length, NaN = overloaded)."""

    qps: np.ndarray  # (Q,)
    plain_tpot_s: np.ndarray
    spec_tpot_s: np.ndarray
    plain_batch: np.ndarray
    spec_batch: np.ndarray
    plain_capacity: float  # most QPS without speculation
    spec_capacity: float
    output: int

    @property
    def gain(self) -> np.ndarray:
        """plain TPOT / speculative TPOT at the same QPS (0 where only speculation is
        overloaded, NaN where both are)."""
        gain = self.plain_tpot_s / self.spec_tpot_s
        only_spec = np.isnan(self.spec_tpot_s) & ~np.isnan(self.plain_tpot_s)
        return np.where(only_spec, 0.0, gain)

    def throughput(self, capacity: float) -> np.ndarray:
        """Output tokens/s served: qps x output up to ``capacity``, then flat at it."""
        return np.minimum(self.qps, capacity) * self.output

    @property
    def plain_tokens_per_s(self) -> np.ndarray:
        return self.throughput(self.plain_capacity)

    @property
    def spec_tokens_per_s(self) -> np.ndarray:
        return self.throughput(self.spec_capacity)


def qps_grid(qps_max: float, points: int = 40) -> np.ndarray:
    """``points`` QPS values from qps_max / 100 to qps_max, log spaced."""
    top = check_qps(qps_max, "highest QPS")
    whole_in("QPS points", points, 2, MAX_QPS_POINTS)
    return np.geomspace(max(MIN_QPS, top / 100.0), top, points)


def load_sweep(setup, acceptance: Acceptance, workload: Workload, qps) -> LoadSweep:
    """:func:`steady_batch` at every QPS in ``qps`` (at most MAX_QPS_POINTS), plain and
    speculative, with both capacities. ``setup``'s context and prefill are replaced by the
    workload's mean context and the prompts that arrive."""
    qps = np.atleast_1d(np.asarray(qps, dtype=np.float64))
    if qps.ndim != 1 or not 1 <= qps.size <= MAX_QPS_POINTS:
        raise InvalidParameterError(f"QPS values: give 1 to {MAX_QPS_POINTS} of them.")
    for x in qps:
        check_qps(float(x))
    spec = at_mean_context(setup, workload)
    plain = plain_setup(spec)
    p = [steady_batch(plain, None, workload, x) for x in qps]
    s = [steady_batch(spec, acceptance, workload, x) for x in qps]
    return LoadSweep(
        qps,
        np.array([pt.tpot_s for pt in p]),
        np.array([pt.tpot_s for pt in s]),
        np.array([pt.batch for pt in p]),
        np.array([pt.batch for pt in s]),
        capacity_qps(plain, None, workload),
        capacity_qps(spec, acceptance, workload),
        workload.output,
    )


def load_gain(setup, acceptance: Acceptance, workload: Workload, qps: float) -> float:
    """plain TPOT / speculative TPOT at one QPS (0 when only speculation is overloaded,
    NaN when both are)."""
    spec = at_mean_context(setup, workload)
    plain = steady_batch(plain_setup(spec), None, workload, qps).tpot_s
    fast = steady_batch(spec, acceptance, workload, qps).tpot_s
    if math.isnan(fast):
        return math.nan if math.isnan(plain) else 0.0
    return plain / fast


def crossover_qps(setup, acceptance, workload: Workload, qps_max: float, sweep=None):
    """The QPS (up to ``qps_max``) from which speculation stops paying (gain < 1), refined
    by bisection (0.1 %) between the grid points around the first loss; None when it pays
    at every QPS of the grid, the grid's first QPS when it never pays. ``sweep``: a
    :class:`LoadSweep` over :func:`qps_grid` (qps_max) already computed."""
    if sweep is None:
        sweep = load_sweep(setup, acceptance, workload, qps_grid(qps_max))
    losing = np.flatnonzero(sweep.gain < 1.0)
    if not losing.size:
        return None
    i = int(losing[0])
    if i == 0:
        return float(sweep.qps[0])
    lo, hi = float(sweep.qps[i - 1]), float(sweep.qps[i])
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if load_gain(setup, acceptance, workload, mid) < 1.0:
            hi = mid
        else:
            lo = mid
    return hi


def at_mean_context(setup: ServingSetup, workload: Workload) -> ServingSetup:
    """``setup`` at the workload's mean context, without a fixed prefill (it comes from QPS)."""
    return dataclasses.replace(setup, context=workload.mean_context, prefill=0)


def saturated_gain(setup, acceptance: Acceptance, workload: Workload) -> float:
    """Past both servers' capacity every step is full: the batch is the cap (max_num_seqs
    or the KV cache) and, with chunked prefill, each step carries a full chunk of prompt
    tokens (without it, prompt passes pause both alike and cancel). The gain is the time
    per output token of a running sequence, plain T(cap, p) over speculative T(cap', p) /
    tau_eff (the draft's cache lowers cap' when memory binds)."""
    spec = at_mean_context(setup, workload)
    plain = plain_setup(spec)
    p = workload.chunk if workload.chunked else 0
    t_plain = cycle_s(plain, None, batch_cap(plain, workload), p)
    t_spec = cycle_s(spec, acceptance, batch_cap(spec, workload), p)
    return float(t_plain) / (float(t_spec) / acceptance.effective_tokens)


def switch_off(sweep: LoadSweep, disable_above: int | None) -> tuple[np.ndarray, np.ndarray]:
    """vLLM's ``speculative_disable_by_batch_size`` D in the steady state: (speculating?,
    TPOT) at each QPS. Speculation runs while its own steady batch is at most D (and it
    keeps up); above, the engine decodes plainly. None: never switched off."""
    if disable_above is None:
        on = np.ones(sweep.qps.shape, dtype=bool)
    else:
        whole_in("speculative_disable_by_batch_size", disable_above, 1, MAX_BATCH)
        on = ~np.isnan(sweep.spec_batch) & (sweep.spec_batch <= disable_above)
    return on, np.where(on, sweep.spec_tpot_s, sweep.plain_tpot_s)
