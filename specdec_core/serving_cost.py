"""The time of one decoding step, layer by layer (a per-layer roofline with kernels).

For b sequences that each add m tokens after n tokens of context, on t chips in tensor
parallel, a step's time per chip is (Williams, Waterman & Patterson 2009, "Roofline",
CACM 52(4), applied per operation as in the JAX scaling book, "How to Scale Your Model",
its inference chapter, jax-ml.github.io/scaling-book/inference; the kernels' shares and the
overlap fitted on this project's H200 table, benchmarks/results_gpu.md):

    time = L x [ attention + linear + 2 all-reduces ] + LM head + overhead

    attention  = KV bytes / (BW_spec x read_share(m)) + attn FLOPs / (F_spec x flops_share(m))
                 + prompt FLOPs / F                                     per layer
        KV bytes        = b x n x 2 x ceil(kv_heads / t) x head_dim x 2 bytes
        attn FLOPs      = 4 x b x m x n x d_attn / t         (QK^T and PV: 2 n d_attn each)
    linear     = blend(layer weights x bytes / t / BW, 2 x layer weights x T / t / F)
    LM head    = blend(vocab d x bytes / t / BW, 2 x vocab d x b m / t / F)
    all-reduce = latency + 2 (t - 1) / t x T x d_model x 2 bytes / link bandwidth  (t > 1)

with blend(x, y) = (x^2 + y^2)^(1/2) (:func:`specdec_core.serving_kernels.blend`: the
larger far from the ridge, sqrt(2) x the larger at it), T = b m + P tokens in the step (P:
prompt tokens of new requests sharing it, chunked prefill; they also attend over n tokens),
BW and F the *achieved* bandwidth and FLOP/s per chip (spec x share,
:mod:`specdec_core.serving_hardware`), and read_share / flops_share those of the hardware's
attention kernel (:mod:`specdec_core.serving_kernels`: one query token reads the cache near
memory speed; several pay their arithmetic on top, so the verify's attention costs more per
byte than the plain step's). The linear layers share their weights across the batch and
turn compute-bound once T passes the ridge point. The input embedding is a lookup, not
streamed. KV heads are replicated once t passes kv_heads (each chip keeps
ceil(kv_heads / t) of them). The ring all-reduce moves 2 (t - 1) / t of the data per chip
(NCCL's bus bandwidth, nccl-tests doc/PERFORMANCE.md); Megatron-style tensor parallelism
needs two per layer (after the attention's output projection and after the MLP).

Left out: elementwise kernels (norms, rotary, residuals) except through the overhead; the
sampler and the gather of the LM head's logits across chips; a tree's attention mask
(priced as m dense query tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .serving_checks import MAX_PREFILL, batches, check_context, check_tokens, whole_in
from .serving_hardware import Hardware
from .serving_kernels import blend
from .serving_models import KV_BYTES, ModelSpec

ACT_BYTES = 2.0  # bf16 activations in the all-reduces


@dataclass(frozen=True)
class StepCost:
    """One forward pass per chip, in seconds, split into its parts (arrays over the batch)."""

    attention_s: np.ndarray  # L x (KV bytes / kernel's rate + attention FLOPs / kernel's rate)
    linear_s: np.ndarray  # L x blend(weight bytes / BW, linear FLOPs / F)
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
    attention = attention_s(model, hw, b, m, n_read, t) + 4.0 * p * n * model.d_attn / t / flops
    weights = model.layer_params * model.bytes_per_param / t
    lin_memory, lin_compute = weights / bw, 2.0 * model.layer_params * tokens / t / flops
    head = blend(
        model.head_params * model.bytes_per_param / t / bw,
        2.0 * model.head_params * b * m / t / flops,
    )
    return StepCost(
        model.layers * attention,
        model.layers * blend(lin_memory, lin_compute),
        head,
        2 * model.layers * all_reduce_s(hw, t, tokens * model.d_model * ACT_BYTES),
        hw.overhead_s,
        lin_compute >= lin_memory,
    )


def attention_s(model: ModelSpec, hw: Hardware, b, m: float, n: int, tp: int):
    """One layer's attention over the cache on one chip, seconds (module doc):

    KV bytes / (BW_spec x read_share(m)) + 4 b m n d_attn / t / (F_spec x flops_share(m)),
    the kernel's shares from ``hw.kernel`` (specdec_core.serving_kernels).
    """
    kernel = hw.kernel
    kv_bytes = b * n * 2 * kv_heads_per_chip(model, tp) * model.head_dim * KV_BYTES
    memory = kv_bytes / (hw.bandwidth * kernel.read_share(m))
    share = kernel.flops_share(m, model.q_heads // model.kv_heads)
    if share == 0.0:
        return memory
    return memory + 4.0 * b * m * n * model.d_attn / tp / (hw.peak_flops * share)


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
