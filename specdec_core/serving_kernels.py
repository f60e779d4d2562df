"""Attention kernels as a step pays them: one query token (decode) and several (the verify).

Attention over the KV cache for b sequences, each with m query tokens after n cached ones,
on a model with g = q_heads / kv_heads query heads per KV head, costs per layer and chip:

    attention = KV bytes / (BW_spec x read_share(m)) + FLOPs / (F_spec x flops_share(m))
        KV bytes = b n 2 kv_heads head_dim 2,     FLOPs = 4 b m n d_attn  (QK^T and PV)

the memory and the arithmetic *added* (a kernel over one sequence's cache streams it and
multiplies in the same loop, but for m > 1 neither hides the other in the kernels timed
here). Its efficiency, the KV bytes it moves per second divided by the spec bandwidth, is
``efficiency(m, n)``: for one token (n m FLOPs per byte, tiny) it is the decode kernel's
read share at every context; for several it falls as m grows, at every n alike, because
the arithmetic grows with m x n as the bytes grow with n. So a longer context adds more
time to the verify than to the plain step wherever the verify's efficiency is lower: with
these kernels v(K, b) *rises* with the context (the H200 table: 1.98 at 1,024 tokens and
2.29 at 4,096, batch 64, K = 4).

Two presets:

- ``TORCH_H200`` ("torch, as measured"): fitted on the project's H200 table
  (benchmarks/results_gpu.md, specdec_core.serving_measured: an 8B-shaped step, batch 1-128,
  context 1,024 and 4,096, 1-9 tokens per sequence, the faster of torch's SDPA and two
  batched GEMMs at each shape, as an engine picks a decode and a verify kernel). SDPA's
  flash-decoding kernel read the cache at 0.94 of the spec bandwidth for one token; for
  several, the faster kernel read it at 0.73 and did the attention's arithmetic at 0.076 of
  the dense bf16 peak (75 TFLOP/s: small matrix products that keep the tensor cores idle).
  Fit: least squares of the log step time (benchmarks/serving_model_vs_published.py).
- ``TUNED``: an engine's verify kernel (FlashInfer, Ye et al. 2025, arXiv 2501.01005:
  its decode kernel with ``use_tensor_cores`` and its prefill/append kernels for several
  query tokens per request, docs.flashinfer.ai; FlashAttention-3, Shah et al. 2024, arXiv
  2407.08608, whose Hopper matrix instructions work on tiles of 64 query rows). The g query
  heads of a KV head and the m tokens share one pass over the cache: it reads at the decode
  kernel's share for any m, and multiplies at the hardware's achieved FLOP/s share times the
  tile's filled rows, min(1, m g / 64). Not measured here (no such kernel was timed): an
  assumption that follows the kernels' design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .serving_checks import share_in, whole_in

TILE_ROWS = 64  # query rows per tensor-core tile on Hopper (FlashAttention-3, Sec. 3)


@dataclass(frozen=True)
class AttentionKernel:
    """How an attention kernel pays for the KV cache: shares of the spec-sheet peaks.

    ``decode_read_share``: share of the spec bandwidth at which one query token per sequence
    reads the cache; ``verify_read_share`` the same for several tokens; ``verify_flops_share``
    the share of the dense peak FLOP/s the attention's arithmetic reaches for several tokens,
    at a full tile. ``tile_rows``: None for a fixed share, else the share is scaled by
    min(1, m g / tile_rows) (g query heads per KV head).
    """

    key: str
    label: str
    decode_read_share: float
    verify_read_share: float
    verify_flops_share: float
    tile_rows: int | None
    source: str

    def __post_init__(self) -> None:
        share_in(f"{self.label}: read share for one token", self.decode_read_share)
        share_in(f"{self.label}: read share for several tokens", self.verify_read_share)
        share_in(f"{self.label}: arithmetic share for several tokens", self.verify_flops_share)
        if self.tile_rows is not None:
            whole_in(f"{self.label}: rows per tile", self.tile_rows, 1, 1_024)

    def read_share(self, m: float) -> float:
        """The share of the spec bandwidth at which m tokens per sequence read the cache."""
        return self.decode_read_share if m <= 1.0 else self.verify_read_share

    def flops_share(self, m: float, group: int):
        """Share of the dense peak for the attention's arithmetic (0 for one token: the
        decode kernel's n FLOPs per byte are hidden in its read)."""
        if m <= 1.0:
            return 0.0
        if self.tile_rows is None:
            return self.verify_flops_share
        return self.verify_flops_share * min(1.0, m * group / self.tile_rows)

    def efficiency(self, m: float, *, group: int, ridge: float) -> float:
        """KV bytes per second over the spec bandwidth for m tokens per sequence, any n.

        = 1 / (1 / read_share + (FLOPs / byte) / (ridge x flops_share)), FLOPs per KV byte
        = 4 m n d_attn / (2 n kv_heads head_dim 2 bytes) = m g; ``ridge`` = peak FLOP/s /
        spec bandwidth. The same at every context n: bytes and FLOPs both grow with n (a
        fixed start cost per sequence was fitted too and came out 0).
        """
        share = self.flops_share(m, group)
        per_byte = 0.0 if share == 0.0 else (m * group) / (ridge * share)
        return 1.0 / (1.0 / self.read_share(m) + per_byte)


TORCH_H200 = AttentionKernel(
    "torch-h200",
    "torch kernels, as measured on the H200",
    0.94,
    0.73,
    0.076,
    None,
    "fitted on this project's H200 table (benchmarks/results_gpu.md): torch 2.11's SDPA "
    "flash-decoding for one token, the faster of SDPA and two batched GEMMs for several",
)
TUNED = AttentionKernel(
    "tuned",
    "a tuned engine kernel (FlashInfer / FlashAttention-3 style)",
    0.94,
    0.94,
    0.50,
    TILE_ROWS,
    "FlashInfer (Ye et al. 2025, arXiv 2501.01005; docs.flashinfer.ai: decode with "
    "use_tensor_cores, prefill/append kernels for several tokens) and FlashAttention-3 (Shah "
    "et al. 2024, arXiv 2407.08608: 64-row tiles): one pass over the cache for every token "
    "and grouped head, arithmetic on tensor cores; assumed, not timed here",
)
KERNELS: dict[str, AttentionKernel] = {k.key: k for k in (TORCH_H200, TUNED)}
DEFAULT_KERNEL = TORCH_H200
OVERLAP_P = 2.0  # linear layers: (memory^p + arithmetic^p)^(1/p), fitted on the H200 table


def blend(memory, arithmetic, p: float = OVERLAP_P):
    """(memory^p + arithmetic^p)^(1/p): the larger of the two far from the ridge, more than
    it near the ridge (sqrt(2) x at the ridge for p = 2; the sum is p = 1, the roofline's max
    p = infinity). p = 2 fits the H200's linear layers alone (benchmarks/results_gpu.md,
    part 2): the sum over-prices a 160- to 640-token step by 30-50 %."""
    return (np.asarray(memory) ** p + np.asarray(arithmetic) ** p) ** (1.0 / p)
