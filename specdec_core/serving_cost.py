"""The time of one decoding step, layer by layer (a per-layer roofline).

For b sequences that each add m tokens after n tokens of context, on t chips in tensor
parallel, a step's time per chip is (Williams, Waterman & Patterson 2009, "Roofline",
CACM 52(4): a kernel takes the longer of its memory traffic and its arithmetic; applied
per operation as in the JAX scaling book, "How to Scale Your Model", its inference
chapter, jax-ml.github.io/scaling-book/inference):

    time = L x [ attention + linear + 2 all-reduces ] + LM head + overhead

    attention  = max(KV bytes / BW, attention FLOPs / F)            per layer
        KV bytes        = b x n x 2 x ceil(kv_heads / t) x head_dim x 2 bytes
        attention FLOPs = 4 x b x m x n x d_attn / t         (QK^T and PV: 2 n d_attn each)
    linear     = max(layer weights x bytes / t / BW, 2 x layer weights x T / t / F)
    LM head    = max(vocab d x bytes / t / BW, 2 x vocab d x b m / t / F)
    all-reduce = latency + 2 (t - 1) / t x T x d_model x 2 bytes / link bandwidth  (t > 1)

with T = b m + P tokens in the step (P: prompt tokens of new requests sharing it, chunked
prefill; they also attend over n tokens), BW and F the *achieved* bandwidth and FLOP/s per
chip (spec x share, :mod:`specdec_core.serving_hardware`). Attention reads each
sequence's own KV cache, so its bytes grow with b: it stays bound by memory at every batch
(its arithmetic intensity is m x q_heads / kv_heads FLOPs per byte, whatever b), while the
linear layers share their weights across the batch and turn compute-bound once T passes
the ridge point. The input embedding is a lookup, not streamed. KV heads are replicated
once t passes kv_heads (each chip keeps ceil(kv_heads / t) of them). The ring all-reduce
moves 2 (t - 1) / t of the data per chip (NCCL's bus bandwidth, nccl-tests
doc/PERFORMANCE.md); Megatron-style tensor parallelism needs two per layer (after the
attention's output projection and after the MLP).

Left out: elementwise kernels (norms, rotary, residuals) except through the overhead;
the overlap of memory and arithmetic near the ridge (max, not sum); the sampler and the
gather of the LM head's logits across chips.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .serving_checks import MAX_PREFILL, batches, check_context, check_tokens, whole_in
from .serving_hardware import Hardware
from .serving_models import KV_BYTES, ModelSpec

ACT_BYTES = 2.0  # bf16 activations in the all-reduces


@dataclass(frozen=True)
class StepCost:
    """One forward pass per chip, in seconds, split into its parts (arrays over the batch)."""

    attention_s: np.ndarray  # L x max(KV bytes / BW, attention FLOPs / F)
    linear_s: np.ndarray  # L x max(weight bytes / BW, linear FLOPs / F)
    head_s: np.ndarray  # the LM head
    comm_s: np.ndarray  # 2 L all-reduces (0 on one chip)
    overhead_s: float  # fixed per pass
    linear_compute_bound: np.ndarray  # bool: the linear layers' arithmetic sets their time

    @property
    def total_s(self) -> np.ndarray:
        return self.attention_s + self.linear_s + self.head_s + self.comm_s + self.overhead_s

    @property
    def attention_share(self) -> np.ndarray:
        """attention / total: how much of the step is reading the KV cache."""
        return self.attention_s / self.total_s


def kv_heads_per_chip(model: ModelSpec, tp: int) -> int:
    """ceil(kv_heads / t): past t = kv_heads every chip keeps a whole (replicated) head."""
    return math.ceil(model.kv_heads / tp)


def step_cost(
    model: ModelSpec,
    hw: Hardware,
    batch,
    new_tokens: float = 1.0,
    context: int = 1,
    *,
    tp: int | None = None,
    kv_budget: int | None = None,
    prefill: int = 0,
) -> StepCost:
    """The parts of one step (module doc), vectorised over ``batch``.

    ``tp``: chips the model is split over (default ``hw.chips``); ``kv_budget``: the model
    reads at most this many cached tokens per sequence (a draft's StreamingLLM window);
    ``prefill``: prompt tokens of new requests in the same step.
    """
    b = batches(batch)
    m, n = check_tokens(new_tokens), check_context(context)
    t = hw.chips if tp is None else whole_in("tensor-parallel chips", tp, 1, hw.chips)
    p = whole_in("prefill tokens per step", prefill, 0, MAX_PREFILL)
    n_read = n if kv_budget is None else min(n, kv_budget)
    bw, flops = hw.achieved_bandwidth, hw.achieved_flops
    tokens = b * m + p  # (B,) tokens through the linear layers
    kv_bytes = b * n_read * 2 * kv_heads_per_chip(model, t) * model.head_dim * KV_BYTES
    attn_flops = 4.0 * (b * m * n_read + p * n) * model.d_attn / t
    attention = np.maximum(kv_bytes / bw, attn_flops / flops)
    weights = model.layer_params * model.bytes_per_param / t
    lin_memory, lin_compute = weights / bw, 2.0 * model.layer_params * tokens / t / flops
    head = np.maximum(
        model.head_params * model.bytes_per_param / t / bw,
        2.0 * model.head_params * b * m / t / flops,
    )
    return StepCost(
        model.layers * attention,
        model.layers * np.maximum(lin_memory, lin_compute),
        head,
        2 * model.layers * all_reduce_s(hw, t, tokens * model.d_model * ACT_BYTES),
        hw.overhead_s,
        lin_compute >= lin_memory,
    )


def all_reduce_s(hw: Hardware, tp: int, nbytes):
    """One ring all-reduce of ``nbytes`` per chip: latency + 2 (t - 1) / t bytes / link."""
    if tp == 1:
        return np.zeros_like(np.asarray(nbytes, dtype=np.float64))
    return hw.link_latency_s + 2.0 * (tp - 1) / tp * np.asarray(nbytes) / hw.link_bandwidth


def step_time(
    model: ModelSpec, hw: Hardware, batch, new_tokens: float = 1.0, context: int = 1, **how
):
    """Seconds of one step (the sum of :func:`step_cost`'s parts), vectorised over ``batch``."""
    return step_cost(model, hw, batch, new_tokens, context, **how).total_s


def is_compute_bound(model: ModelSpec, hw: Hardware, batch, new_tokens: float, context: int, **how):
    """Whether the linear layers' arithmetic, not their weights' bytes, sets their time."""
    return step_cost(model, hw, batch, new_tokens, context, **how).linear_compute_bound
