"""When does speculative decoding pay on real hardware? Rounds priced by a per-layer roofline.

A round drafts d tokens (d draft steps, each c target steps), then the target checks m
tokens per sequence in one pass (a chain of K drafts: m = K + 1; a tree: its size) and
keeps tau of them, bonus included. Against plain decoding (one token per target step):

    speedup(b) = tau_eff / (d x c(b) x h + v(m_eff, b) + w(b))   Leviathan et al. 2023, Thm 3.8,

with v(m, b) = time(b, m, n) / time(b, 1, n) the verify in plain steps, c(b) = draft
step / target step at the same batch (the step times of :mod:`specdec_core.serving_cost`)
and w(b) = W / time(b, 1, n) the engine's own work per round (W seconds: tree building,
sampling and the acceptance test, the CPU's sync between draft and verify; Leviathan's
formula has no such term). W's default, :data:`DEFAULT_ENGINE_WORK_S`, is fitted on the
published rows that :data:`ENGINE_WORK_FIT_ROWS` names (at most half) and checked on the
rest (benchmarks/serving_model_vs_published.py).
For a chain with i.i.d. acceptance alpha, tau = E(alpha, K) = (1 - alpha^(K+1)) /
(1 - alpha) (Leviathan et al. Eq. 1); a measured acceptance length (an engine's AL, a
tree's tau; Sequoia's G(n, d), EAGLE's tau) replaces it: Sequoia (Chen et al. 2024,
Sec. 4.1) writes the same speedup = G(n, d) / (t(n) + d c). A draft that proposes only in a
share h of the rounds (prompt lookup that finds no match proposes nothing) gives
tau_eff = h tau + (1 - h) and a verify of m_eff = h m + (1 - h) tokens per sequence on
average (those rounds are plain steps).

At batch 1 a step reads every weight for a few FLOPs per byte: m tokens cost little more
than one (v near 1) and 2-3x is normal. As the batch grows the linear layers reach the
compute roof, v climbs towards m and speculation turns into a slowdown. The KV cache does
not hold v down: every sequence reads its own cache in the plain step and the verify
alike, but the verify's attention also pays m times the arithmetic, and real kernels pay
it on top of the read (:mod:`serving_kernels`), so a longer context raises v with the
kernels timed for this project. What a long context does lower is c, for a draft that
reads a short cache of its own (MagicDec's self-speculation with a StreamingLLM window).

The hardware, the models and the step live in :mod:`serving_hardware`,
:mod:`serving_models` and :mod:`serving_cost`; the published checks in
:mod:`serving_published`; the H200 measurements in :mod:`serving_measured`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import InvalidParameterError
from .serving_checks import (
    MAX_BATCH,
    MAX_CONTEXT,
    MAX_PREFILL,
    MAX_VERIFIED,
    batches,
    check_alpha,
    check_context,
    check_k,
    check_tokens,
    finite_in,
    whole_in,
)
from .serving_cost import StepCost, attention_s, is_compute_bound, step_cost, step_time
from .serving_hardware import (
    DEFAULT_BW_FRACTION,
    DEFAULT_FLOPS_FRACTION,
    DEFAULT_OVERHEAD_S,
    GB,
    GPUS,
    H100_SXM,
    H200,
    TPU_V4,
    Hardware,
    tensor_parallel,
)
from .serving_kernels import DEFAULT_KERNEL, KERNELS, TORCH_H200, TUNED, AttentionKernel
from .serving_models import (
    BYTES_PER_PARAM,
    DRAFTS,
    LLAMA_3_2_1B,
    LLAMA_68M,
    TARGETS,
    DraftSpec,
    ModelSpec,
    eagle_head,
)
from .theory import expected_tokens

__all__ = [
    "BYTES_PER_PARAM",
    "DEFAULT_ENGINE_WORK_S",
    "DEFAULT_KERNEL",
    "ENGINE_WORK_FIT_ROWS",
    "KERNELS",
    "MAX_ENGINE_WORK_S",
    "TORCH_H200",
    "TUNED",
    "AttentionKernel",
    "attention_ratio",
    "engine_work_steps",
    "round_cost",
    "DEFAULT_BW_FRACTION",
    "DEFAULT_FLOPS_FRACTION",
    "DEFAULT_OVERHEAD_S",
    "DRAFTS",
    "GB",
    "GPUS",
    "H100_SXM",
    "H200",
    "LLAMA_3_2_1B",
    "LLAMA_68M",
    "MAX_BATCH",
    "MAX_CONTEXT",
    "MAX_PREFILL",
    "MAX_VERIFIED",
    "TARGETS",
    "TPU_V4",
    "Acceptance",
    "BatchSweep",
    "DraftSpec",
    "Hardware",
    "ModelSpec",
    "ServerCosts",
    "ServingSetup",
    "StepCost",
    "batch_grid",
    "batch_sweep",
    "best_k",
    "break_even_batch",
    "check_context",
    "check_fits",
    "compute_bound_batch",
    "draft_cost",
    "draft_step",
    "eagle_head",
    "is_compute_bound",
    "max_batch",
    "memory_needed",
    "plain_step",
    "prefill_shares",
    "round_speedup",
    "serving_speedup",
    "speedup_from_costs",
    "step_cost",
    "step_time",
    "tensor_parallel",
    "verify_cost",
    "verify_step",
]


# ----------------------------------------------------------------------------- a setup
MAX_ENGINE_WORK_S = 1.0  # seconds of engine work per round: 0 .. 1 s (the page: 0 .. 1,000 ms)
# W fitted by serving_published.fit_engine_work on the published rows ENGINE_WORK_FIT_ROWS
# names (one of each pair of GPU-engine rows, 4 of 23; not the vLLM high-QPS rows, whose
# batch is a guess) and checked on the other rows (benchmarks/serving_model_vs_published.py).
DEFAULT_ENGINE_WORK_S = 1.9e-3
ENGINE_WORK_FIT_ROWS = ("vllm-draft-low", "sglang-eagle-2", "eagle3-b2", "magicdec-b64")


@dataclass(frozen=True)
class ServingSetup:
    """Hardware, target, draft and workload, checked to fit at batch 1.

    ``draft_tp``: chips the draft model is split over, 1 or all of the target's (vLLM's
    ``speculative_draft_tensor_parallel_size``); ``prefill``: prompt tokens of new requests
    processed in every step (chunked prefill under load); ``engine_work_s``: seconds the
    engine spends per round beyond the passes (tree building, sampling, CPU sync).
    """

    hardware: Hardware
    target: ModelSpec
    draft: DraftSpec
    context: int
    draft_tp: int | None = None  # None: the target's
    prefill: int = 0
    engine_work_s: float = DEFAULT_ENGINE_WORK_S

    def __post_init__(self) -> None:
        check_context(self.context)
        whole_in("prefill tokens per step", self.prefill, 0, MAX_PREFILL)
        finite_in("engine work per round", self.engine_work_s, 0.0, MAX_ENGINE_WORK_S, "s")
        chips = self.hardware.chips
        if self.draft_tp is not None and self.draft_tp not in (1, chips):
            raise InvalidParameterError(
                f"draft tensor-parallel chips = {self.draft_tp!r}; allowed: 1 or all {chips} "
                "chips of the target."
            )
        check_fits(self, 1)

    @property
    def draft_model(self) -> ModelSpec | None:
        return self.draft.draft_model(self.target)

    @property
    def draft_chips(self) -> int:
        return self.hardware.chips if self.draft_tp is None else self.draft_tp


@dataclass(frozen=True)
class Acceptance:
    """What a round yields: ``k`` draft steps (a chain's K, a tree's depth) and either
    ``alpha`` (i.i.d. acceptance of a chain: tau = E(alpha, K)) or ``tau`` (measured
    tokens per round, bonus included); ``verified`` tokens per sequence in the verify
    pass (default K + 1, a chain); ``propose_share`` h of the rounds with drafts."""

    k: int
    alpha: float | None = None
    tau: float | None = None
    verified: int | None = None
    propose_share: float = 1.0

    def __post_init__(self) -> None:
        k = check_k(self.k)
        if (self.alpha is None) == (self.tau is None):
            raise InvalidParameterError("give exactly one of alpha and a measured tau.")
        if self.alpha is not None:
            check_alpha(self.alpha)
        m = self.verified_tokens
        whole_in("tokens verified per round", m, k + 1, MAX_VERIFIED)
        if self.tau is not None:
            finite_in("tau, tokens per round", self.tau, 1.0, float(k + 1), "(bonus included)")
        finite_in("share of rounds that propose drafts", self.propose_share, 0.0, 1.0)

    @property
    def verified_tokens(self) -> int:
        return self.k + 1 if self.verified is None else self.verified

    @property
    def tokens_per_round(self) -> float:
        """tau: E(alpha, K) for a chain, or the measured value."""
        return float(expected_tokens(self.alpha, self.k)) if self.tau is None else self.tau

    @property
    def effective_tokens(self) -> float:
        """h tau + (1 - h): rounds without drafts emit one token."""
        h = self.propose_share
        return h * self.tokens_per_round + (1.0 - h)

    @property
    def effective_verified(self) -> float:
        """h m + (1 - h): tokens per sequence in a verify pass, on average."""
        h = self.propose_share
        return h * self.verified_tokens + (1.0 - h)


def memory_needed(setup: ServingSetup, batch) -> tuple[float, float]:
    """(weights, KV cache) bytes of target and draft for b sequences of n tokens."""
    target, draft = setup.target, setup.draft_model
    weights = target.weight_bytes
    per_sequence = target.kv_bytes_per_token * setup.context
    if draft is not None and not setup.draft.self_draft:
        weights += draft.weight_bytes
    if draft is not None:
        kept = setup.context if setup.draft.kv_budget is None else setup.draft.kv_budget
        per_sequence += draft.kv_bytes_per_token * min(setup.context, kept)
    return weights, float(np.max(batches(batch))) * per_sequence


def check_fits(setup: ServingSetup, batch) -> None:
    """Refuse a setup whose weights and KV cache exceed the chips' memory (both sizes)."""
    weights, cache = memory_needed(setup, batch)
    hw = setup.hardware
    if weights + cache > hw.total_memory:
        b = int(np.max(batches(batch)))
        raise InvalidParameterError(
            f"{setup.target.label} with the {setup.draft.label} needs "
            f"{(weights + cache) / GB:,.1f} GB ({weights / GB:,.1f} GB of weights and "
            f"{cache / GB:,.1f} GB of KV cache for {b:,} x {setup.context:,} tokens), but "
            f"{hw.label} has {hw.total_memory / GB:,.1f} GB. Use more GPUs, a smaller model, "
            "fewer bytes per weight, a smaller batch or a shorter context."
        )


def max_batch(setup: ServingSetup) -> int:
    """The largest batch (at most MAX_BATCH) whose weights and KV cache fit."""
    weights, per_sequence = memory_needed(setup, 1)
    room = setup.hardware.total_memory - weights
    return int(min(MAX_BATCH, max(1, math.floor(room / per_sequence))))


# ----------------------------------------------------------------------------- c, v, speedup
def plain_step(setup: ServingSetup, batch):
    """Seconds of one target step without speculation (m = 1)."""
    return step_time(setup.target, setup.hardware, batch, 1, setup.context, prefill=setup.prefill)


def verify_step(setup: ServingSetup, tokens: float, batch):
    """Seconds of the target's pass over ``tokens`` per sequence (a chain: K + 1)."""
    return step_time(
        setup.target, setup.hardware, batch, tokens, setup.context, prefill=setup.prefill
    )


def draft_step(setup: ServingSetup, batch):
    """Seconds of one draft step at the same batch (fixed c: c x target step).

    The draft runs on ``setup.draft_chips`` chips and reads at most its ``kv_budget``
    tokens of cache; new prompts are prefilled by the target only.
    """
    model = setup.draft_model
    if model is None:
        return setup.draft.fixed_c * plain_step(setup, batch)
    return step_time(
        model,
        setup.hardware,
        batch,
        1,
        setup.context,
        tp=setup.draft_chips,
        kv_budget=setup.draft.kv_budget,
    )


def verify_cost(setup: ServingSetup, k: int, batch):
    """v(K, b) = time(b, K + 1, n) / time(b, 1, n): a chain's verify in plain steps."""
    return verify_step(setup, check_k(k) + 1, batch) / plain_step(setup, batch)


def attention_ratio(setup: ServingSetup, tokens: float) -> float:
    """r(m) = one layer's attention over m tokens per sequence / over one, per chip.

    = efficiency(1) / efficiency(m) of the hardware's kernel (serving_kernels), the same at
    every batch and context. A longer context adds r times as much to the verify as to a
    plain step, so it pulls v(m, b) towards r: up where v < r, down where v > r.
    """
    hw, model = setup.hardware, setup.target
    one = attention_s(model, hw, 1.0, 1, setup.context, hw.chips)
    return float(attention_s(model, hw, 1.0, check_tokens(tokens), setup.context, hw.chips) / one)


def draft_cost(setup: ServingSetup, batch):
    """c(b) = draft step / target step at the same batch b (Leviathan et al.'s c)."""
    return draft_step(setup, batch) / plain_step(setup, batch)


def speedup_from_costs(alpha, k, c, v):
    """E / (K c + v) with E = (1 - alpha^(K+1)) / (1 - alpha) (theory.expected_tokens).

    Leviathan et al. 2023, Thm 3.8, with the verify of K + 1 tokens costing v target steps
    instead of 1. Vectorised over c and v.
    """
    k = check_k(k)
    e = expected_tokens(check_alpha(alpha), k)
    c_arr, v_arr = np.asarray(c, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if np.any(~np.isfinite(c_arr) | (c_arr < 0)) or np.any(~np.isfinite(v_arr) | (v_arr <= 0)):
        raise InvalidParameterError("c must be a finite number >= 0 and v a finite number > 0.")
    return e / (k * c_arr + v_arr)


def round_costs(setup: ServingSetup, acceptance: Acceptance, batch):
    """(c, v) of a round at each batch: draft step / plain step, verify / plain step."""
    plain = plain_step(setup, batch)
    verify = verify_step(setup, acceptance.effective_verified, batch)
    return draft_step(setup, batch) / plain, verify / plain


def engine_work_steps(setup: ServingSetup, batch):
    """w(b) = W / plain step: the engine's work per round in plain steps (module doc)."""
    return setup.engine_work_s / plain_step(setup, batch)


def round_cost(setup: ServingSetup, acceptance: Acceptance, batch):
    """d c h + v(m_eff) + w: a round's time in plain steps at each batch (module doc)."""
    c, v = round_costs(setup, acceptance, batch)
    return acceptance.k * c * acceptance.propose_share + v + engine_work_steps(setup, batch)


def round_speedup(setup: ServingSetup, acceptance: Acceptance, batch):
    """tau_eff / (d c h + v(m_eff) + w) at each batch (module doc), vectorised over ``batch``."""
    return acceptance.effective_tokens / round_cost(setup, acceptance, batch)


def prefill_shares(setup: ServingSetup, acceptance: Acceptance, batch):
    """(prompt ratio, all-token ratio) of speculation when P prompt tokens share each step.

    A round takes d c h + v + w plain steps and carries P prompt tokens, as one plain step
    does, so prompts move 1 / (d c h + v + w) as fast; decoded tokens move tau_eff / (d c h
    + v + w) as fast. All tokens together (b decoded + P prompt per step): (b tau_eff + P) /
    ((b + P)(d c h + v + w)). With P = 0 the second is the speedup itself.
    """
    cost = round_cost(setup, acceptance, batch)
    b, p = batches(batch), float(setup.prefill)
    return 1.0 / cost, (b * acceptance.effective_tokens + p) / ((b + p) * cost)


def serving_speedup(setup: ServingSetup, alpha, k: int, batch):
    """A chain of K drafts with i.i.d. alpha: E / (K c(b) + v(K, b)), vectorised."""
    return round_speedup(setup, Acceptance(k, alpha=alpha), batch)


def best_k(setup: ServingSetup, alpha, batch, *, k_max: int = 8):
    """The K in 1..k_max with the highest predicted speedup at each batch (smallest on ties)."""
    k_max = check_k(k_max)
    grid = np.stack([serving_speedup(setup, alpha, k, batch) for k in range(1, k_max + 1)])
    best = np.argmax(grid, axis=0) + 1  # (batches,) argmax takes the first maximum
    return int(best) if best.ndim == 0 else best


def break_even_batch(setup: ServingSetup, acceptance: Acceptance, b_max: int | None = None):
    """The smallest b from which speculation is slower than plain decoding up to ``b_max``.

    Every batch in [b, b_max] has speedup < 1; None when the speedup at ``b_max`` (default:
    the largest batch that fits) is still at least 1. Computed on every whole b.
    """
    top = max_batch(setup) if b_max is None else whole_in("b_max", b_max, 1, MAX_BATCH)
    slower = round_speedup(setup, acceptance, np.arange(1, top + 1)) < 1.0  # (top,)
    if not slower[-1]:
        return None
    paying = np.flatnonzero(~slower)
    return int(paying[-1] + 2) if paying.size else 1


def compute_bound_batch(setup: ServingSetup, new_tokens: float) -> int | None:
    """The smallest batch at which the target's linear layers are compute-bound."""
    b = np.arange(1, max_batch(setup) + 1)
    cost = step_cost(
        setup.target, setup.hardware, b, new_tokens, setup.context, prefill=setup.prefill
    )
    hits = np.flatnonzero(cost.linear_compute_bound)
    return int(b[hits[0]]) if hits.size else None


@dataclass(frozen=True)
class BatchSweep:
    """The model over a grid of batch sizes (arrays of one length), for the charts.

    ``best_k`` and ``best_speedup`` are None when the acceptance is a measured tau (no
    alpha to try other K with).
    """

    acceptance: Acceptance
    batch: np.ndarray  # (B,) whole numbers
    plain_s: np.ndarray  # target step, no speculation
    draft_s: np.ndarray  # one draft step
    verify_s: np.ndarray  # target pass over m tokens per sequence
    speedup: np.ndarray
    best_k: np.ndarray | None
    best_speedup: np.ndarray | None
    chips: int
    engine_work_s: float = 0.0  # W, seconds of engine work per round

    @property
    def k(self) -> int:
        return self.acceptance.k

    @property
    def alpha(self) -> float | None:
        return self.acceptance.alpha

    @property
    def expected(self) -> float:
        """Tokens per round, rounds without drafts included (E(alpha, K) for a chain)."""
        return self.acceptance.effective_tokens

    @property
    def c(self) -> np.ndarray:
        return self.draft_s / self.plain_s

    @property
    def v(self) -> np.ndarray:
        return self.verify_s / self.plain_s

    @property
    def w(self) -> np.ndarray:
        """The engine's work per round in plain steps: W / plain step."""
        return self.engine_work_s / self.plain_s

    @property
    def round_steps(self) -> np.ndarray:
        """A round in plain steps: d c h + v + w (its speedup is tokens per round / this)."""
        h = self.acceptance.propose_share
        return self.acceptance.k * self.c * h + self.v + self.w

    @property
    def plain_latency_s(self) -> np.ndarray:
        """Per-sequence seconds per token without speculation: one step."""
        return self.plain_s

    @property
    def spec_latency_s(self) -> np.ndarray:
        """Per-sequence seconds per token with speculation: plain / speedup."""
        return self.plain_s / self.speedup

    @property
    def plain_tokens_per_chip(self) -> np.ndarray:
        """Tokens per second per chip: b / step / chips."""
        return self.batch / self.plain_latency_s / self.chips

    @property
    def spec_tokens_per_chip(self) -> np.ndarray:
        return self.batch / self.spec_latency_s / self.chips


def batch_grid(b_max: int, points: int = 48) -> np.ndarray:
    """About ``points`` whole batch sizes from 1 to ``b_max``, evenly spaced on a log axis."""
    b_max = whole_in("largest batch", b_max, 1, MAX_BATCH)
    return np.unique(np.round(np.geomspace(1, b_max, points)).astype(np.int64))


def _best(setup: ServingSetup, acceptance: Acceptance, b: np.ndarray, k_max: int):
    """(best K, its speedup) at each batch for a chain with alpha, or (None, None)."""
    if acceptance.alpha is None:
        return None, None
    ks = np.arange(1, check_k(k_max) + 1)
    grid = np.stack(
        [
            round_speedup(
                setup,
                Acceptance(int(j), alpha=acceptance.alpha, propose_share=acceptance.propose_share),
                b,
            )
            for j in ks
        ]
    )  # (k_max, B)
    return ks[np.argmax(grid, axis=0)], grid.max(axis=0)


def batch_sweep(setup: ServingSetup, acceptance: Acceptance, batches_, *, k_max: int = 8):
    """Step times, c, v, speedup and the best K at each batch size in ``batches_``."""
    b = np.atleast_1d(np.asarray(batches_))
    check_fits(setup, b)
    best, best_speedup = _best(setup, acceptance, b, k_max)
    plain = plain_step(setup, b)
    verify = verify_step(setup, acceptance.effective_verified, b)
    return BatchSweep(
        acceptance,
        b.astype(np.int64),
        plain,
        draft_step(setup, b),
        verify,
        round_speedup(setup, acceptance, b),
        best,
        best_speedup,
        setup.hardware.chips,
        setup.engine_work_s,
    )


# ----------------------------------------------------------------------------- this server
@dataclass(frozen=True)
class ServerCosts:
    """What the Model pair lab measures on the machine the app runs on (one CPU process).

    ``step_s`` one plain target step, ``c`` draft step / target step, ``v`` the verify of
    K + 1 tokens in target steps, all at batch 1 (specdec_core.lm.timing).
    """

    label: str
    k: int
    step_s: float
    c: float
    v: float
    source: str = "measured by the Model pair lab (specdec_core.lm.timing) on this server"

    def __post_init__(self) -> None:
        check_k(self.k)
        finite_in("this server: target step", self.step_s, 1e-9, 60.0, "s")
        finite_in("this server: c", self.c, 0.0, 100.0)
        finite_in("this server: v(K)", self.v, 1e-3, 100.0)

    def speedup(self, alpha) -> float:
        """E(alpha, K) / (K c + v) with the measured c and v."""
        return float(speedup_from_costs(alpha, self.k, self.c, self.v))
