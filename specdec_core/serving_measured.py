"""Measured on one H200 for this project: an 8B-shaped decode step, step by step.

The lead ran ``benchmarks/gpu_decoder_step.py`` on one NVIDIA H200 (141 GB HBM3e, driver
580.159.04, torch 2.11.0+cu130, CUDA graphs on): a Llama-3.1-8B-shaped decode step (per
layer RMSNorm, fused QKV, the new K/V written, grouped-query attention over the cache, O,
RMSNorm, fused gate/up, SiLU, down; final norm, LM head, argmax; the embedding lookup not
timed; every layer reads its own weights and KV slice), the median of 15 CUDA-graph
replays, and the Llama-3.2-1B draft the same way. Two runs differ only in the attention
kernel: ``two_gemm`` (two batched GEMMs with a float32 softmax) and ``sdpa`` (torch's
scaled_dot_product_attention with GQA: a flash-decoding kernel for one query token, a
slower one for several). The raw results are ``benchmarks/gpu/h200_*.json``; the app never
reads them (this module holds the numbers it shows, and a test checks they match).

An engine picks a decode kernel and a separate verify kernel, so the measured curve uses
the faster of the two at each shape (``kernel="best"``). Batch 256 at 4,096 tokens needs
128 GiB of KV cache plus 16 GB of weights, more than one H200 holds: the script reused KV
slices to time it (:data:`DOES_NOT_FIT`).
"""

from __future__ import annotations

import numpy as np

from .serving_cost import step_time
from .serving_hardware import H200
from .serving_models import LLAMA_3_2_1B, TARGETS

TWO, SDPA, BEST = "two_gemm", "sdpa", "best"
KERNELS = (TWO, SDPA)
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CONTEXTS = (1_024, 4_096)
TOKENS = (1, 2, 3, 4, 5, 9)  # tokens per sequence: 1 (plain) and K + 1 for K = 1, 2, 3, 4, 8
MEASURED_K = tuple(m - 1 for m in TOKENS[1:])
DOES_NOT_FIT = ((256, 4_096),)  # (batch, context) that one H200's memory cannot hold
GPU = "one NVIDIA H200 (141 GB HBM3e), torch 2.11 with CUDA 13, CUDA graphs on"
PEAKS = {  # achieved ceilings measured on the same machine (both runs)
    "copy_tb_s": (4.10, 4.19),  # device-to-device copy, bytes read + written
    "gemm_8192_tflops": (741, 748),  # bf16 GEMM 8192^3 (spec: 989 dense)
    "gemm_256x4096x28672_tflops": (495, 509),
    "gemm_1280x4096x28672_tflops": (673, 710),
}

TARGET_MS = {  # (kernel, context, tokens per sequence) -> ms at BATCHES
    (TWO, 1024, 1): (5.4390, 5.6858, 5.7939, 5.9423, 6.3548, 7.0826, 8.6569, 11.5300, 18.1829),
    (TWO, 1024, 2): (5.7419, 5.8366, 5.9238, 6.1443, 6.6101, 7.6193, 9.6897, 14.4790, 26.1861),
    (TWO, 1024, 3): (5.7760, 5.8635, 5.9762, 6.2536, 6.8549, 8.0800, 11.2720, 18.6619, 34.7266),
    (TWO, 1024, 4): (5.7860, 5.8949, 6.0143, 6.3544, 7.0297, 8.4753, 12.5955, 22.4365, 43.0400),
    (TWO, 1024, 5): (5.8154, 5.9293, 6.0798, 6.5155, 7.2801, 9.1302, 14.9670, 27.4852, 52.0618),
    (TWO, 1024, 9): (5.8652, 6.0198, 6.4756, 6.9680, 8.2052, 13.1318, 23.5060, 43.7584, 85.9073),
    (TWO, 4096, 1): (5.5876, 5.9111, 6.4136, 6.8924, 8.3384, 10.9534, 16.1945, 26.9138, 48.6752),
    (TWO, 4096, 2): (5.8977, 6.0905, 6.5833, 7.4633, 9.0898, 12.3505, 19.4829, 33.7408, 63.3668),
    (TWO, 4096, 3): (5.9521, 6.1630, 6.7650, 7.8015, 9.7048, 14.0340, 22.9859, 41.1892, 79.2423),
    (TWO, 4096, 4): (5.9739, 6.2302, 6.8670, 8.0852, 10.3457, 15.5491, 26.2261, 48.3055, 94.2811),
    (TWO, 4096, 5): (6.0741, 6.3692, 7.1012, 8.3412, 11.1449, 17.1957, 30.2173, 56.5655, 110.2769),
    (TWO, 4096, 9): (6.2801, 6.8909, 7.7503, 9.7617, 14.3366, 24.8381, 45.8308, 87.6570, 173.5629),
    (SDPA, 1024, 1): (5.1277, 5.2830, 5.4026, 5.5762, 5.7682, 6.4069, 7.5654, 9.9814, 16.0125),
    (SDPA, 1024, 2): (5.5805, 5.6388, 5.7210, 6.1942, 7.1400, 8.9651, 13.3130, 23.1426, 43.4741),
    (SDPA, 1024, 3): (5.6087, 5.6614, 5.7366, 6.2480, 7.2464, 9.2818, 14.7178, 26.0587, 50.2099),
    (SDPA, 1024, 4): (5.6156, 5.6865, 5.7609, 6.2917, 7.2527, 9.7166, 15.8831, 29.1004, 56.4471),
    (SDPA, 1024, 5): (5.6462, 5.6955, 5.8116, 6.3728, 7.4105, 10.2522, 17.5894, 32.6364, 63.4726),
    (SDPA, 1024, 9): (5.6557, 5.7806, 5.9399, 6.5352, 8.1449, 13.5743, 23.9103, 45.0808, 91.0716),
    (SDPA, 4096, 1): (5.2573, 5.4950, 5.7503, 6.2929, 7.2025, 9.2308, 13.2035, 21.3357, 38.6780),
    (SDPA, 4096, 2): (6.6855, 6.7428, 6.8316, 8.4800, 11.7500, 19.0808, 33.9649, 64.9107, 126.6861),
    (SDPA, 4096, 3): (6.7015, 6.7827, 6.8536, 8.5434, 11.9436, 19.5763, 35.7029, 68.7401, 133.7349),
    (SDPA, 4096, 4): (6.7084, 6.7962, 6.8757, 8.5947, 12.1221, 20.0756, 37.0228, 70.4509, 139.4229),
    (SDPA, 4096, 5): (6.7349, 6.8008, 6.9196, 8.6675, 12.4329, 20.5818, 38.5462, 74.1822, 147.6220),
    (SDPA, 4096, 9): (6.7563, 6.8789, 7.0512, 8.8452, 13.2724, 23.9908, 44.9996, 87.2213, 173.5994),
}
LINEAR_ONLY_MS = {  # (kernel, tokens) -> ms at BATCHES, context 1,024, no attention
    (TWO, 1): (4.6466, 4.7985, 4.8090, 4.8475, 4.8934, 5.0078, 5.1876, 5.6447, 8.5536),
    (TWO, 5): (4.8319, 4.8579, 4.9355, 5.0802, 5.2819, 6.0837, 9.7587, 17.5697, 32.9934),
    (SDPA, 1): (4.7816, 4.8588, 4.8846, 4.9071, 4.9562, 5.0706, 5.2286, 5.7804, 8.5822),
    (SDPA, 5): (4.8863, 4.9194, 4.9931, 5.1428, 5.3522, 6.2793, 9.9558, 18.2164, 32.9971),
}
DRAFT_MS = {  # (kernel, context) -> ms at BATCHES: Llama-3.2-1B, one token
    (TWO, 1024): (1.5426, 1.5664, 1.6046, 1.6501, 1.7975, 1.9927, 2.4762, 3.3401, 5.1163),
    (TWO, 4096): (1.5518, 1.6734, 1.7773, 1.9522, 2.3893, 3.1844, 4.8826, 8.2090, 14.6584),
    (SDPA, 1024): (1.2928, 1.3471, 1.3776, 1.4196, 1.4741, 1.6031, 1.8888, 2.5144, 3.7342),
    (SDPA, 4096): (1.3313, 1.4006, 1.4685, 1.6002, 1.8803, 2.3221, 3.3157, 5.3436, 9.4402),
}
EAGER_MS = {  # (kernel, batch, tokens) -> ms without CUDA graphs, context 1,024
    (TWO, 1, 1): 9.4130,
    (TWO, 1, 5): 10.2890,
    (TWO, 64, 1): 9.7528,
    (TWO, 64, 5): 15.6902,
    (SDPA, 1, 1): 6.4896,
    (SDPA, 1, 5): 6.7609,
    (SDPA, 64, 1): 8.0705,
    (SDPA, 64, 5): 17.8773,
}


def target_ms(tokens: int, context: int, kernel: str = BEST) -> np.ndarray:
    """The 8B step in ms at each of :data:`BATCHES` (``best``: the faster kernel per shape)."""
    if kernel == BEST:
        return np.minimum(target_ms(tokens, context, TWO), target_ms(tokens, context, SDPA))
    return np.array(TARGET_MS[(kernel, context, tokens)])


def draft_ms(context: int, kernel: str = BEST) -> np.ndarray:
    """The Llama-3.2-1B draft step (one token) in ms at each of :data:`BATCHES`."""
    if kernel == BEST:
        return np.minimum(draft_ms(context, TWO), draft_ms(context, SDPA))
    return np.array(DRAFT_MS[(kernel, context)])


def measured_v(k: int, context: int, kernel: str = BEST) -> np.ndarray:
    """v(K, b) = step(K + 1 tokens) / step(1 token), measured, at each of :data:`BATCHES`."""
    if k not in MEASURED_K:
        raise KeyError(f"K = {k} was not measured; measured: {MEASURED_K}")
    return target_ms(k + 1, context, kernel) / target_ms(1, context, kernel)


def measured_c(context: int, kernel: str = BEST) -> np.ndarray:
    """c(b) = draft step / target step (one token each), measured."""
    return draft_ms(context, kernel) / target_ms(1, context, kernel)


def model_ms(tokens: int, context: int, hw=H200) -> np.ndarray:
    """The per-layer model's 8B step on ``hw`` (default: the H200 preset) at :data:`BATCHES`."""
    return 1e3 * step_time(TARGETS["llama-3.1-8b"], hw, np.array(BATCHES), tokens, context)


def model_draft_ms(context: int, hw=H200) -> np.ndarray:
    """The model's Llama-3.2-1B step on ``hw`` at :data:`BATCHES`."""
    return 1e3 * step_time(LLAMA_3_2_1B, hw, np.array(BATCHES), 1, context)


def model_v(k: int, context: int, hw=H200) -> np.ndarray:
    """The model's v(K, b) for the 8B on ``hw`` at :data:`BATCHES`."""
    return model_ms(k + 1, context, hw) / model_ms(1, context, hw)


def step_errors(context: int, hw=H200) -> dict[int, np.ndarray]:
    """(model - measured) / measured of the 8B step, per tokens in :data:`TOKENS`."""
    return {m: model_ms(m, context, hw) / target_ms(m, context) - 1.0 for m in TOKENS}


def fits(batch: int, context: int) -> bool:
    """Whether one H200 holds this batch's KV cache and the weights (see the module doc)."""
    return (batch, context) not in DOES_NOT_FIT
