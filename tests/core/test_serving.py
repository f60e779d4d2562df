"""The serving cost model: hand-checked steps, properties, trees, tensor parallelism, input."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core import serving as sv
from specdec_core import serving_cost as scost
from specdec_core import serving_models as smod

H100 = sv.GPUS["h100-sxm"]
H100_BARE = H100.with_overhead(0.0)
LLAMA_8B = sv.TARGETS["llama-3.1-8b"]
LLAMA_70B = sv.TARGETS["llama-3.1-70b"]
ONE_B = sv.DRAFTS["llama-3.2-1b"]
NGRAM = sv.DRAFTS["ngram"]
BW = 3.35e12 * 0.67  # the H100's achieved bandwidth with the default share
FLOPS = 989e12 * 0.50
KV_BW = 3.35e12 * 0.94  # one query token reads the cache at the torch kernel's 0.94 share


def _blend(memory, arithmetic):
    """sqrt(memory^2 + arithmetic^2): the linear layers near the ridge (serving_kernels)."""
    return math.hypot(memory, arithmetic)


def _setup(hw=H100, target=LLAMA_8B, draft=ONE_B, context=1_024, **kw):
    return sv.ServingSetup(hw, target, draft, context, **kw)


def _chain(alpha=0.75, k=4, **kw):
    return sv.Acceptance(k, alpha=alpha, **kw)


# ----------------------------------------------------------------------------- by hand
def test_8b_on_an_h100_at_batch_1_layer_by_layer():
    """Per layer: 436.2 MB of linear weights read at 0.67 x 3.35 TB/s (blended with their
    2 N FLOPs at 0.5 x 989 TFLOP/s), 4.19 MB of KV cache (1,024 tokens) at the decode
    kernel's 0.94 x 3.35 TB/s; then the 1.05 GB LM head and 0.5 ms per pass."""
    assert LLAMA_8B.layer_params == 218_103_808  # 4096 (2 x 4096 + 2 x 1024) + 3 x 4096 x 14336
    layer_bytes = 436_207_616
    kv_bytes = 1_024 * 2 * 8 * 128 * 2  # 4,194,304: n x (K, V) x KV heads x head size x bf16
    cost = sv.step_cost(LLAMA_8B, H100, 1, 1, 1_024)
    linear = _blend(layer_bytes / BW, 2 * 218_103_808 / FLOPS)
    assert float(cost.linear_s) == pytest.approx(32 * linear)
    assert float(cost.attention_s) == pytest.approx(32 * kv_bytes / KV_BW)
    head = 128_256 * 4096
    assert float(cost.head_s) == pytest.approx(_blend(head * 2 / BW, 2 * head / FLOPS))
    per_layer = linear + kv_bytes / KV_BW
    assert 1e6 * per_layer == pytest.approx(195.7, abs=0.05)  # microseconds
    assert float(cost.comm_s) == 0.0 and cost.overhead_s == 5e-4
    assert 1e3 * float(cost.total_s) == pytest.approx(7.230, abs=1e-3)
    assert not bool(cost.linear_compute_bound)


def test_the_embedding_is_a_lookup_not_streamed():
    """8.03 B parameters (16.06 GB) in memory, 7.50 B (15.01 GB) read per step: the input
    embedding (128,256 x 4,096, 0.53 B) is one row per token."""
    assert LLAMA_8B.params == pytest.approx(8.03e9, rel=1e-3)
    assert LLAMA_8B.weight_bytes == pytest.approx(16.06e9, rel=1e-3)
    assert LLAMA_8B.streamed_bytes == pytest.approx(15.009e9, rel=1e-4)
    assert LLAMA_8B.weight_bytes - LLAMA_8B.streamed_bytes == pytest.approx(128_256 * 4096 * 2)
    t = float(sv.step_time(LLAMA_8B, H100_BARE, 1, 1, 1))
    weights = LLAMA_8B.streamed_bytes / BW  # the arithmetic of one token adds 1 part in 4,000
    assert t == pytest.approx(weights + LLAMA_8B.kv_bytes_per_token / KV_BW, rel=1e-3)
    # a tied model (Llama-3.2-1B) reads its one embedding matrix once, as the LM head
    assert sv.LLAMA_3_2_1B.tied and sv.LLAMA_3_2_1B.streamed_params == sv.LLAMA_3_2_1B.params


def test_attention_flops_are_4_l_n_d_attn_per_token_added_to_the_read():
    """QK^T and PV each cost 2 n d_attn per query token: 4 L n d_attn in all, paid on top of
    the read at the verify kernel's arithmetic share (torch as measured: 0.076 of 989 TFLOP/s;
    the read at 0.73 of the bandwidth)."""
    b, m, n = 3, 5, 2_048
    cost = sv.step_cost(LLAMA_8B, H100_BARE, b, m, n)
    flops = 4 * 32 * b * m * n * 4096
    kv = 32 * b * n * 8 * 128 * 2 * 2
    expected = kv / (3.35e12 * 0.73) + flops / (989e12 * 0.076)
    assert float(cost.attention_s) == pytest.approx(expected)
    tuned = sv.step_cost(LLAMA_8B, H100_BARE.with_kernel(sv.TUNED), b, m, n)
    fill = min(1.0, m * 4 / 64)  # 5 tokens x 4 query heads per KV head fill 20 of 64 rows
    expected = kv / (3.35e12 * 0.94) + flops / (989e12 * 0.5 * fill)
    assert float(tuned.attention_s) == pytest.approx(expected)


def test_a_verify_at_4096_tokens_and_batch_64_by_hand():
    """The 8B on one H200, K = 4 (5 tokens), 4,096 tokens, batch 64, torch as measured.
    Per layer: KV 64 x 4,096 x 4,096 B = 1.074 GB; plain: 1.074 GB / (0.94 x 4.8 TB/s) =
    0.238 ms; verify: 1.074 GB / (0.73 x 4.8) = 0.306 ms + 4 x 64 x 5 x 4,096 x 4,096 FLOPs
    = 21.5 GFLOP / (0.076 x 989 TFLOP/s) = 0.286 ms. Linear: 436.2 MB / 3.216 TB/s = 0.1356
    ms blended with 2 x 218.1 M x T / 494.5 TFLOP/s (T = 64: 0.0565 ms; T = 320: 0.2823 ms).
    The H200 measured 13.20 and 30.22 ms: v = 2.29."""
    h200 = sv.H200
    kv = 64 * 4_096 * 4_096
    plain_attn = kv / (4.8e12 * 0.94)
    verify_attn = kv / (4.8e12 * 0.73) + 4 * 64 * 5 * 4_096 * 4_096 / (989e12 * 0.076)
    mem = 436_207_616 / (4.8e12 * 0.67)
    lin1 = _blend(mem, 2 * 218_103_808 * 64 / (989e12 * 0.5))
    lin5 = _blend(mem, 2 * 218_103_808 * 320 / (989e12 * 0.5))
    head = 128_256 * 4096
    head1 = _blend(head * 2 / (4.8e12 * 0.67), 2 * head * 64 / (989e12 * 0.5))
    head5 = _blend(head * 2 / (4.8e12 * 0.67), 2 * head * 320 / (989e12 * 0.5))
    plain = 32 * (lin1 + plain_attn) + head1 + 5e-4
    verify = 32 * (lin5 + verify_attn) + head5 + 5e-4
    assert 1e3 * plain == pytest.approx(13.17, abs=0.01)
    assert 1e3 * verify == pytest.approx(30.22, abs=0.01)
    assert float(sv.step_time(LLAMA_8B, h200, 64, 1, 4_096)) == pytest.approx(plain)
    assert float(sv.step_time(LLAMA_8B, h200, 64, 5, 4_096)) == pytest.approx(verify)
    assert verify / plain == pytest.approx(2.29, abs=0.01)  # measured: 2.29


def test_kv_cache_bytes_per_token_follow_the_config_and_stay_bf16():
    assert LLAMA_8B.kv_bytes_per_token == 131_072  # 32 x 2 x 8 x 128 x 2 bytes
    assert LLAMA_70B.kv_bytes_per_token == 80 * 2 * 8 * 128 * 2
    assert LLAMA_8B.quantized(0.5, "int4").kv_bytes_per_token == 131_072  # weights only


def test_leviathans_t5_v1_1_shapes_give_the_papers_sizes():
    """Sec. 4.1: T5-small 77M, T5-base 250M, T5-large 800M, T5-XXL 11B (v1.1 configs)."""
    from specdec_core import serving_published as sp

    got = [round(m.params / 1e6) for m in (sp.T5_SMALL, sp.T5_BASE, sp.T5_LARGE, sp.T5_XXL)]
    assert got == [77, 248, 783, 11_135]
    # a decoding step runs the decoder only: its encoder and the cross-attention's K and V
    # projections (computed once per prompt) are half of T5-XXL's weights
    assert sp.T5_XXL.streamed_params / sp.T5_XXL.params == pytest.approx(0.50, abs=0.01)


def test_v_is_one_at_batch_1_and_grows_once_the_linear_layers_are_compute_bound():
    setup = _setup(H100_BARE, context=1)
    assert float(sv.verify_cost(setup, 4, 1)) == pytest.approx(1.0, abs=1e-3)  # nearly free
    # linear layers: b x 5 x 2 N_layer / F >= N_layer x 2 bytes / BW from b = F / (5 BW)
    ridge = FLOPS / BW
    assert H100.achieved_ridge == pytest.approx(ridge)
    assert ridge == pytest.approx(220.3, abs=0.1)  # FLOPs per byte (spec sheet: 295)
    assert sv.compute_bound_batch(setup, 5) == math.ceil(ridge / 5)
    v = sv.verify_cost(setup, 4, np.array([1, 10, 44, 45, 100, 221, 400, 3_000]))
    assert v[0] == pytest.approx(1.0, abs=1e-3) and v[1] < 1.03  # the weights' bytes set it
    assert np.all(np.diff(v) > 0)  # near the ridge the arithmetic adds to the reads
    assert v[3] == pytest.approx(math.hypot(1, 45 * 5 / ridge) / math.hypot(1, 45 / ridge), 0.01)
    assert v[-1] == pytest.approx(5.0, rel=0.02)  # both compute-bound: time ~ tokens


def test_the_kv_cache_is_read_at_the_decode_kernels_speed_at_every_batch():
    """One query token per sequence: the KV cache at 0.94 of the bandwidth, whatever the
    batch; at batch 64 and 4,096 tokens attention is more than half the 8B's step. The
    verify pays its attention arithmetic on top, so v(4) = 1.93 here, not 1.13 (the max of
    memory and arithmetic said that)."""
    setup = _setup(H100, context=4_096)
    cost = sv.step_cost(LLAMA_8B, H100, 64, 1, 4_096)
    kv = 64 * 4_096 * LLAMA_8B.kv_bytes_per_token
    assert float(cost.attention_s) == pytest.approx(kv / KV_BW)
    assert 0.55 < float(cost.attention_share) < 0.7
    assert float(sv.verify_cost(setup, 4, 64)) == pytest.approx(1.93, abs=0.01)


def test_speedup_is_tau_over_d_c_plus_v():
    setup = _setup()
    c, v = float(sv.draft_cost(setup, 8)), float(sv.verify_cost(setup, 4, 8))
    w = setup.engine_work_s / float(sv.plain_step(setup, 8))  # 1.9 ms per round
    e = sc.expected_tokens(0.75, 4)
    assert float(sv.serving_speedup(setup, 0.75, 4, 8)) == pytest.approx(e / (4 * c + v + w))
    bare = dataclasses.replace(setup, engine_work_s=0.0)
    assert float(sv.serving_speedup(bare, 0.75, 4, 8)) == pytest.approx(e / (4 * c + v))
    # c of the 1B draft at batch 1 by hand: its 2.47 GB (tied: no extra embedding) + 0.5 ms
    one_b = sv.step_time(sv.LLAMA_3_2_1B, H100, 1, 1, 1)
    by_hand = sv.LLAMA_3_2_1B.streamed_bytes / BW + sv.LLAMA_3_2_1B.kv_bytes_per_token / KV_BW
    assert float(one_b) == pytest.approx(by_hand + 5e-4, rel=1e-3)
    assert float(sv.draft_cost(_setup(draft=NGRAM), 64)) == 0.0
    assert sv.speedup_from_costs(0.75, 4, 0.0, 1.0) == pytest.approx(e)


def test_a_tree_with_a_measured_tau_verifies_its_size_and_drafts_its_depth():
    """EAGLE-style: a tree of 32 tokens drafted in 5 steps keeps tau = 4 per round:
    speedup = tau / (5 c + v(32)), with v(32) the verify of 32 tokens per sequence."""
    setup = _setup(draft=sv.DRAFTS["eagle-head"])
    tree = sv.Acceptance(5, tau=4.0, verified=32)
    c = float(sv.draft_cost(setup, 16))
    v32 = float(sv.verify_step(setup, 32, 16) / sv.plain_step(setup, 16))
    w = float(sv.engine_work_steps(setup, 16))
    assert float(sv.round_speedup(setup, tree, 16)) == pytest.approx(4.0 / (5 * c + v32 + w))
    chain = sv.Acceptance(5, tau=4.0)  # the same tau from a chain checks only 6 tokens
    assert float(sv.round_speedup(setup, chain, 256)) > float(sv.round_speedup(setup, tree, 256))


def test_a_lookup_that_finds_no_match_proposes_nothing_in_those_rounds():
    """h = 0.2: a fifth of the rounds verify K + 1 tokens and keep E(alpha, K); the rest are
    plain steps of one token. tau_eff = h E + 1 - h over v(h (K + 1) + 1 - h)."""
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B, NGRAM)
    acc = sv.Acceptance(4, alpha=0.9, propose_share=0.2)
    e = sc.expected_tokens(0.9, 4)
    assert acc.effective_tokens == pytest.approx(0.2 * e + 0.8)
    assert acc.effective_verified == pytest.approx(0.2 * 5 + 0.8)
    v = sv.verify_step(setup, 1.8, 256) / sv.plain_step(setup, 256)
    w = sv.engine_work_steps(setup, 256)
    assert float(sv.round_speedup(setup, acc, 256)) == pytest.approx((0.2 * e + 0.8) / float(v + w))
    # not the same as a low alpha in every round: a low-alpha chain pays the full verify
    low = sv.Acceptance(4, alpha=0.2)
    assert low.effective_verified == 5


def test_best_k_is_the_argmax_over_k():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    batches = np.array([1, 64, 256, 400])
    grid = np.stack([sv.serving_speedup(setup, 0.8, k, batches) for k in range(1, 9)])
    np.testing.assert_array_equal(sv.best_k(setup, 0.8, batches), np.argmax(grid, axis=0) + 1)
    assert sv.best_k(setup, 0.8, 1) >= sv.best_k(setup, 0.8, 400)  # less to gain under load


def test_break_even_batch_is_where_speculation_starts_to_lose():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    b = sv.break_even_batch(setup, _chain())
    assert b == 133
    assert float(sv.serving_speedup(setup, 0.75, 4, b)) < 1.0
    assert float(sv.serving_speedup(setup, 0.75, 4, b - 1)) >= 1.0
    assert float(sv.serving_speedup(setup, 0.75, 4, 1)) == pytest.approx(2.25, abs=0.01)
    assert sv.max_batch(_setup()) == 366
    assert sv.break_even_batch(setup, _chain(alpha=0.0)) == 1  # never accepted: loses at once


def test_a_quantized_target_breaks_even_at_a_smaller_batch():
    """int4 weights: a quarter of the bytes for the same arithmetic, so the linear layers
    reach the compute roof at a quarter of the tokens and the verify stops being free."""
    bf16 = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    int4 = _setup(sv.GPUS["4x-h100"], LLAMA_70B.quantized(0.5, "int4"))
    assert int4.target.label == "Llama-3.1-70B (int4)"
    assert sv.break_even_batch(int4, _chain()) == 27 < sv.break_even_batch(bf16, _chain())
    assert sv.compute_bound_batch(int4, 5) < sv.compute_bound_batch(bf16, 5)
    # and the memory check counts the smaller weights: int4 70B fits one H100, bf16 does not
    _setup(H100, LLAMA_70B.quantized(0.5, "int4"))
    with pytest.raises(sc.InvalidParameterError, match="141.1 GB of weights"):
        _setup(H100, LLAMA_70B, NGRAM)


def test_tensor_parallelism_pays_two_all_reduces_per_layer():
    """Per chip: 1/t of the weights, and 2 L all-reduces of latency + 2 (t - 1) / t of the
    activations over the link."""
    t4 = sv.GPUS["4x-h100"]
    cost = sv.step_cost(LLAMA_70B, t4, 1, 1, 1)
    d_bytes = 8192 * 2  # one token's activations, bf16
    per = 8e-6 + 2 * 3 / 4 * d_bytes / 450e9
    assert float(cost.comm_s) == pytest.approx(2 * 80 * per)
    linear = _blend(LLAMA_70B.layer_params * 2 / 4 / BW, 2 * LLAMA_70B.layer_params / 4 / FLOPS)
    assert float(cost.linear_s) == pytest.approx(80 * linear)
    assert float(sv.step_cost(LLAMA_70B, t4, 1, 1, 1, tp=1).comm_s) == 0.0


@pytest.mark.parametrize("batch", [1, 64, 512])
def test_all_reduces_add_time_that_grows_with_the_number_of_chips(batch):
    comm = [
        float(sv.step_cost(LLAMA_70B, sv.tensor_parallel(H100, t), batch, 5, 1_024).comm_s)
        for t in (1, 2, 4, 8)
    ]
    assert comm[0] == 0.0 and all(b > a for a, b in zip(comm, comm[1:], strict=False))


def test_kv_heads_are_replicated_past_the_number_of_kv_heads():
    """8 KV heads on 16 chips: every chip keeps one whole head, so a chip reads as much KV
    cache as on 8 chips (the cache as a whole is stored twice)."""
    wide = dataclasses.replace(sv.tensor_parallel(H100, 16), memory=1e12)
    assert scost.kv_heads_per_chip(LLAMA_8B, 16) == 1
    assert scost.kv_heads_per_chip(LLAMA_8B, 4) == 2
    kv16 = float(sv.step_cost(LLAMA_8B, wide, 64, 1, 4_096, tp=16).attention_s)
    kv8 = float(sv.step_cost(LLAMA_8B, wide, 64, 1, 4_096, tp=8).attention_s)
    assert kv16 == pytest.approx(kv8)
    kv4 = float(sv.step_cost(LLAMA_8B, wide, 64, 1, 4_096, tp=4).attention_s)
    assert kv4 == pytest.approx(2 * kv8)


def test_the_drafts_tensor_parallel_degree_is_an_input():
    """The 1B draft beside the 70B on 4 x H100: split over the 4 chips its weights shrink but
    its 16 layers pay 32 all-reduces; on one chip it reads all 2.47 GB."""
    four = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    one = _setup(sv.GPUS["4x-h100"], LLAMA_70B, draft_tp=1)
    assert four.draft_chips == 4 and one.draft_chips == 1
    d4 = sv.step_cost(sv.LLAMA_3_2_1B, four.hardware, 1, 1, 1_024, tp=4)
    d1 = sv.step_cost(sv.LLAMA_3_2_1B, four.hardware, 1, 1, 1_024, tp=1)
    assert float(d4.comm_s) == pytest.approx(32 * (8e-6 + 2 * 3 / 4 * 2048 * 2 / 450e9))
    assert float(sv.draft_step(four, 1)) == pytest.approx(float(d4.total_s))
    assert float(sv.draft_step(one, 1)) == pytest.approx(float(d1.total_s))
    with pytest.raises(sc.InvalidParameterError, match="allowed: 1 or all 4 chips"):
        _setup(sv.GPUS["4x-h100"], LLAMA_70B, draft_tp=2)


def test_a_self_draft_with_a_small_cache_reads_only_its_window():
    """MagicDec: the target drafts for itself with 512 tokens of cache. At 32,000 tokens the
    KV cache is most of a step, so c falls as the batch grows."""
    setup = _setup(
        sv.tensor_parallel(sv.GPUS["a100-80gb"], 8), LLAMA_8B, sv.DRAFTS["self-512"], 32_000
    )
    c = sv.draft_cost(setup, np.array([1, 32, 128]))
    assert c[0] > c[1] > c[2]
    weights, cache = sv.memory_needed(setup, 1)
    assert weights == LLAMA_8B.weight_bytes  # the draft is the target: no second copy
    assert cache == pytest.approx(LLAMA_8B.kv_bytes_per_token * (32_000 + 512))


def test_prefill_of_new_requests_makes_every_step_slower_and_the_verify_cheaper():
    """Chunked prefill: P prompt tokens share each step. Both the plain step and the verify
    carry them, so v falls towards 1 while each step gets slower."""
    busy = _setup(prefill=2_048)
    quiet = _setup()
    assert float(sv.plain_step(busy, 16)) > float(sv.plain_step(quiet, 16))
    assert float(sv.verify_cost(busy, 4, 16)) < float(sv.verify_cost(quiet, 4, 64))


def test_batch_sweep_matches_the_pointwise_functions():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    sweep = sv.batch_sweep(setup, _chain(), sv.batch_grid(sv.max_batch(setup), 20))
    assert sweep.batch[0] == 1 and sweep.batch[-1] == sv.max_batch(setup)
    np.testing.assert_allclose(sweep.v, sv.verify_cost(setup, 4, sweep.batch))
    np.testing.assert_allclose(sweep.speedup, sv.serving_speedup(setup, 0.75, 4, sweep.batch))
    np.testing.assert_array_equal(sweep.best_k, sv.best_k(setup, 0.75, sweep.batch))
    np.testing.assert_allclose(sweep.spec_latency_s * sweep.speedup, sweep.plain_latency_s)
    np.testing.assert_allclose(
        sweep.plain_tokens_per_chip, sweep.batch / sweep.plain_s / 4, rtol=1e-12
    )
    tree = sv.batch_sweep(setup, sv.Acceptance(5, tau=4.0, verified=32), sweep.batch)
    assert tree.best_k is None and tree.best_speedup is None  # no alpha: no other K to try


def test_this_server_costs_give_the_same_formula():
    server = sv.ServerCosts("this server", 3, 370e-6, 0.19, 1.5)
    e = sc.expected_tokens(0.6, 3)
    assert server.speedup(0.6) == pytest.approx(e / (3 * 0.19 + 1.5))


# ----------------------------------------------------------------------------- properties
hardware = st.builds(
    sv.Hardware,
    label=st.just("random"),
    bandwidth=st.floats(1e11, 1e13),
    peak_flops=st.floats(1e13, 2e15),
    memory=st.just(1e13),
    chips=st.integers(1, 8),
    overhead_s=st.floats(0.0, 1e-3),
    bw_fraction=st.floats(0.3, 1.0),
    flops_fraction=st.floats(0.3, 1.0),
)


@st.composite
def targets(draw):
    q = draw(st.sampled_from([8, 16, 32, 64]))
    hd = draw(st.sampled_from([64, 128]))
    d = q * hd
    vocab = draw(st.sampled_from([32_000, 128_256]))
    layers = draw(st.integers(4, 96))
    embeddings = 2 * vocab * d
    extra = draw(st.floats(1e7, 1e10))
    return smod.model_from_params(
        "random target",
        embeddings + layers * extra,
        shape=(layers, d, q, draw(st.sampled_from([h for h in (1, 2, 4, 8, 16) if h <= q])), hd),
        vocab=vocab,
        tied=False,
        bytes_per_param=draw(st.sampled_from([0.5, 1.0, 2.0])),
    )


@st.composite
def setups(draw, fixed_c: bool | None = None):
    target = draw(targets())
    use_c = draw(st.booleans()) if fixed_c is None else fixed_c
    draft = (
        sv.DraftSpec("fixed c", fixed_c=draw(st.floats(0.0, 1.0)))
        if use_c
        else sv.DraftSpec("draft", model=sv.LLAMA_68M)
    )
    hw = draw(hardware)
    draft_tp = draw(st.sampled_from([1, hw.chips]))
    return sv.ServingSetup(hw, target, draft, draw(st.integers(1, 8_192)), draft_tp=draft_tp)


def _batches(setup, top=1_024):
    return np.arange(1, min(sv.max_batch(setup), top) + 1)


def _attention_ratio(setup, m):
    """r(m): one layer's attention over m tokens per sequence / over one, on one chip (the
    kernel's efficiency for 1 token over its efficiency for m; the same at every b and n)."""
    hw, t = setup.hardware, setup.target
    one, many = (scost.attention_s(t, hw, 1.0, x, 1_000, hw.chips) for x in (1, m))
    return float(many / one)


@settings(max_examples=60, deadline=None)
@given(setups(), st.integers(1, 8))
def test_v_stays_between_1_and_the_larger_of_k_plus_1_and_the_attention_ratio(setup, k):
    """Every part of a pass over K + 1 tokens costs at most K + 1 times a plain step's,
    except the attention, which costs r(K + 1) times (the kernel's efficiencies)."""
    v = sv.verify_cost(setup, k, _batches(setup))
    top = max(k + 1, _attention_ratio(setup, k + 1))
    assert np.all(v >= 1 - 1e-12) and np.all(v <= top + 1e-9)


@settings(max_examples=60, deadline=None)
@given(setups(), st.integers(1, 8), st.integers(1, 4_000), st.integers(1, 4))
def test_a_longer_context_raises_the_attention_share_and_pulls_v_to_the_kernels_ratio(
    setup, k, n, factor
):
    """A longer context adds attention to the plain step and to the verify, the verify's
    r(K + 1) times as much (its kernel pays the arithmetic on top of the read): the
    attention share of a step grows and v(K, b) moves towards r, never past it. With the
    torch kernels measured on the H200 r(5) = 2.5 for the 8B, so a long cache raises v;
    only a kernel with r below v would hold it down."""
    b = _batches(setup, top=256)
    short = dataclasses.replace(setup, context=n)
    long = dataclasses.replace(setup, context=min(n * (factor + 1), sv.MAX_CONTEXT))
    if sv.max_batch(long) < b[-1]:
        b = np.arange(1, sv.max_batch(long) + 1)
    share = [
        sv.step_cost(s.target, s.hardware, b, k + 1, s.context).attention_share
        for s in (short, long)
    ]
    assert np.all(share[1] >= share[0] - 1e-12)
    r = _attention_ratio(setup, k + 1)
    v_short, v_long = sv.verify_cost(short, k, b), sv.verify_cost(long, k, b)
    assert np.all(np.abs(v_long - r) <= np.abs(v_short - r) + 1e-9)
    assert np.all((v_long - r) * (v_short - r) >= -1e-9)  # on the same side of r


@settings(max_examples=60, deadline=None)
@given(setups(fixed_c=True), st.floats(0.0, 1.0), st.integers(1, 8))
def test_with_a_fixed_c_and_no_engine_work_speedup_never_rises_with_the_batch(setup, a, k):
    """(Engine work per round, W / plain step, shrinks as the batch grows: left out here.)"""
    setup = dataclasses.replace(setup, engine_work_s=0.0)
    s = sv.serving_speedup(setup, a, k, _batches(setup))
    assert np.all(np.diff(s) <= 1e-9)


@settings(max_examples=40, deadline=None)
@given(setups(), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(1, 8))
def test_the_break_even_batch_moves_up_with_alpha(setup, a1, a2, k):
    low, high = sorted((a1, a2))
    top = min(sv.max_batch(setup), 1_024)
    b_low = sv.break_even_batch(setup, _chain(low, k), top)
    b_high = sv.break_even_batch(setup, _chain(high, k), top)
    never = top + 1  # None: speculation still pays at the largest batch
    assert (b_high or never) >= (b_low or never)


def test_break_even_means_from_there_on_not_the_first_losing_batch():
    """MagicDec's self-draft reads a 512-token window of a 32,000-token cache: its c falls
    with the batch as the target's reads grow, so at alpha 0.65 the speedup starts below 1
    and ends above it: no break-even batch (None), though batch 1 loses. Up to a b_max
    where it still loses, the break-even batch is 1."""
    hw = sv.tensor_parallel(sv.GPUS["a100-80gb"], 8).with_kernel(sv.TUNED)
    setup = _setup(hw, LLAMA_8B, sv.DRAFTS["self-512"], 32_000)
    b = np.arange(1, sv.max_batch(setup) + 1)
    s = sv.serving_speedup(setup, 0.65, 3, b)
    assert s[0] < 1 and s[-1] > 1  # loses at batch 1, pays at the largest batch
    assert sv.break_even_batch(setup, _chain(0.65, 3)) is None
    first_paying = int(np.argmax(s >= 1)) + 1
    assert sv.break_even_batch(setup, _chain(0.65, 3), first_paying - 1) == 1


# ----------------------------------------------------------------------------- fit and input
def test_a_model_that_does_not_fit_is_refused_with_both_sizes():
    with pytest.raises(sc.InvalidParameterError) as err:
        _setup(H100, LLAMA_70B)
    assert str(err.value) == (
        "Llama-3.1-70B (bf16) with the Llama-3.2-1B draft needs 143.9 GB (143.6 GB of weights "
        "and 0.4 GB of KV cache for 1 x 1,024 tokens), but H100 SXM has 80.0 GB. Use more "
        "GPUs, a smaller model, fewer bytes per weight, a smaller batch or a shorter context."
    )
    with pytest.raises(sc.InvalidParameterError, match=r"KV cache for 400 x 1,024 tokens"):
        sv.check_fits(_setup(), 400)
    sv.check_fits(_setup(), 366)  # the largest batch that fits
    assert sv.max_batch(_setup()) == 366


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: dataclasses.replace(H100, bandwidth=-1.0),
            "bandwidth = -1 is out of range; allowed: 1e+08 to 1e+14 bytes/s",
        ),
        (lambda: dataclasses.replace(H100, peak_flops=float("nan")), "peak flops = nan"),
        (lambda: dataclasses.replace(H100, memory=float("inf")), "memory = inf"),
        (lambda: dataclasses.replace(H100, chips=0), "number of chips = 0 is out of range"),
        (lambda: dataclasses.replace(H100, chips=2.5), "chips must be a whole number"),
        (lambda: H100.with_overhead(-1e-3), "overhead per step"),
        (lambda: dataclasses.replace(H100, bandwidth="fast"), "bandwidth must be a number"),
        (
            lambda: H100.with_fractions(1.2, 0.5),
            "achieved share of peak bandwidth = 1.2 is out of range; allowed: more than 0",
        ),
        (lambda: H100.with_fractions(0.5, 0.0), "achieved share of peak FLOP/s = 0"),
        (lambda: dataclasses.replace(H100, link_latency_s=1.0), "link latency s = 1"),
        (lambda: dataclasses.replace(LLAMA_8B, kv_heads=64), "64 KV heads but 32 query heads"),
        (lambda: dataclasses.replace(LLAMA_8B, layers=0), "layers = 0 is out of range"),
        (lambda: dataclasses.replace(LLAMA_8B, params=1e14), "params = 1e+14"),
        (
            lambda: smod.model_from_params(
                "typed model", 0.5e9, shape=(16, 4096, 32, 8, 128), vocab=128_256, tied=False
            ),
            "typed model: 0.5 B parameters cannot hold its 128,256 x 4,096 embedding",
        ),
        (lambda: LLAMA_8B.quantized(0.1), "bytes per param = 0.1 is out of range"),
        (lambda: sv.DraftSpec("both", fixed_c=0.1, eagle=True), "exactly one of"),
        (lambda: sv.DraftSpec("slow", fixed_c=3.0), "c = 3 is out of range"),
        (lambda: sv.step_time(LLAMA_8B, H100, 0), "batch size is out of range"),
        (lambda: sv.step_time(LLAMA_8B, H100, 5_000), "allowed: 1 to 4,096"),
        (lambda: sv.step_time(LLAMA_8B, H100, 2.5), "batch size must be a whole number"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 1, 0), "context length = 0"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 1, 200_000), "allowed: 1 to 131072"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 2_000), "tokens per sequence in one pass"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 1, 1, prefill=-1), "prefill tokens per step"),
        (lambda: sv.serving_speedup(_setup(), 1.5, 4, 1), "alpha = 1.5 is out of range"),
        (lambda: sv.serving_speedup(_setup(), 0.5, 17, 1), "K = 17 is out of range"),
        (lambda: sv.serving_speedup(_setup(), 0.5, 0, 1), "K = 0 is out of range"),
        (lambda: sv.Acceptance(4, tau=6.0), "tau, tokens per round = 6 is out of range"),
        (lambda: sv.Acceptance(4, tau=0.5), "allowed: 1 to 5 (bonus included)"),
        (lambda: sv.Acceptance(4, alpha=0.5, tau=2.0), "exactly one of alpha and a measured tau"),
        (lambda: sv.Acceptance(4, tau=2.0, verified=3), "tokens verified per round = 3"),
        (lambda: sv.Acceptance(4, alpha=0.5, propose_share=1.5), "share of rounds that propose"),
        (lambda: sv.speedup_from_costs(0.5, 4, -0.1, 1.0), "c must be a finite number >= 0"),
        (lambda: sv.ServerCosts("x", 3, 0.0, 0.2, 1.2), "this server: target step"),
        (lambda: sv.ServerCosts("x", 3, 1e-3, 0.2, float("nan")), "this server: v"),
    ],
)
def test_bad_input_is_refused_with_a_precise_message(make, message):
    with pytest.raises(sc.InvalidParameterError) as err:
        make()
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_every_preset_has_a_source():
    for preset in [*sv.GPUS.values(), *sv.TARGETS.values(), sv.TPU_V4]:
        assert len(preset.source) > 30, preset.label
    for draft in sv.DRAFTS.values():
        assert len(draft.source) > 30 and draft.note, draft.label
    for hw in sv.GPUS.values():  # the measured defaults, said to be measured
        assert (hw.bw_fraction, hw.flops_fraction, hw.overhead_s) == (0.67, 0.5, 5e-4)
