"""The Serving lab under load (specdec_core.serving_load): a QPS point by hand, the shape of
latency and gain against QPS, memory against batch, the switch-off rule, the limits."""

import math

import numpy as np
import pytest

from specdec_core import serving as sv
from specdec_core import serving_load as sl
from specdec_core.errors import InvalidParameterError
from specdec_core.serving_kernels import AttentionKernel
from specdec_core.serving_models import ModelSpec

# A toy server whose step is easy to price by hand: 1 chip, 1 TB/s and 1 PFLOP/s reached in
# full, no overhead; a model of 10 layers of 99.9 M weights and a 1,000 x 1,000 tied head
# (1e9 parameters, 2e9 bytes), one KV head of 100 values: 10 x 2 x 100 x 2 = 4,000 bytes
# of cache per token.
# Its attention kernel reads the cache at the full bandwidth (the presets read at 0.94 or
# 0.73 of it) and the toy engine does no work between passes (W = 0; the default is 1.9 ms).
TOY_KERNEL = AttentionKernel("toy", "toy kernel", 1.0, 1.0, 1.0, None, "this test")
TOY_HW = sv.Hardware(
    "toy chip", 1e12, 1e15, 80e9, overhead_s=0.0, bw_fraction=1.0, flops_fraction=1.0
).with_kernel(TOY_KERNEL)
TOY = ModelSpec("toy model", 1e9, 10, 1, 1, 100, 1_000, 1_000, 99.9e6, tied=True)
FREE_DRAFT = sv.DraftSpec("free draft", fixed_c=0.0)
TOY_WORK = sl.Workload(800, 400)  # mean context 800 + 400 / 2 = 1,000 tokens


def toy_setup(draft=FREE_DRAFT) -> sv.ServingSetup:
    return sv.ServingSetup(TOY_HW, TOY, draft, 1_000, engine_work_s=0.0)


def _solve(step, tau: float = 1.0) -> float:
    """Little's law b = 4,000 /s x T(b) / tau, by iterating (T grows slowly with b)."""
    b = 4.0
    for _ in range(200):
        b = 4_000 * step(b) / tau
    return b


def test_a_qps_point_by_hand():
    """At 10 requests/s of 800 prompt and 400 output tokens.

    Step at batch b with P prompt tokens in it (context n = 1,000, L = 10 layers):
      linear layers: weights 10 x 99.9e6 x 2 B + head 1e6 x 2 B = 2e9 B -> 2.000 ms of memory
        and 2 x 1e9 FLOPs per token -> 2 us x (b + P) of arithmetic, blended
        (serving_kernels.blend, p = 2): hypot(2 ms, 2 us x (b + P));
      KV cache: b x 1,000 tokens x 4,000 B = 4e6 B per sequence -> 4 us each (the decode
        read hides its arithmetic);
      the prompt tokens' attention: 4 P n d_attn L = P x 4e6 FLOPs -> P x 4 ns.
    Prompts: 10 /s x 800 x T = 17 per step (T about 2.03 ms). Little's law, b = 4,000 x T(b):
      b = 8.1329, TPOT = 2.0332 ms.
    With a free draft, K = 3, alpha = 0.5: tau = (1 - 0.5^4) / 0.5 = 1.875; the verify of
    m = 4 tokens per sequence: 4 b tokens in the linear layers, and the cache read at
    1 / (1 + m g / ridge) = 1 / 1.004 of the bandwidth (the toy kernel's shares are 1;
    ridge 1e15 / 1e12 = 1,000, g = 1); b = 4,000 x T(b) / 1.875 -> 4.3062, TPOT 1.0766 ms;
    gain 1.8887.
    """

    def plain_step(b: float) -> float:
        return math.hypot(2e-3, 2e-6 * (b + 17)) + 4e-6 * b + 17 * 4e-9

    def verify(b: float) -> float:
        return math.hypot(2e-3, 2e-6 * (4 * b + 17)) + 4e-6 * 1.004 * b + 17 * 4e-9

    plain = sl.steady_batch(sl.plain_setup(toy_setup()), None, TOY_WORK, 10.0)
    b_plain = _solve(plain_step)
    assert b_plain == pytest.approx(8.1329, abs=1e-4)
    assert plain.batch == pytest.approx(b_plain, rel=1e-5)
    assert plain.tpot_s == pytest.approx(plain_step(b_plain), rel=1e-5)
    assert plain.prefill == 17 and not plain.overloaded
    assert plain.tokens_per_s == pytest.approx(4_000.0)
    spec = sl.steady_batch(toy_setup(), sv.Acceptance(3, alpha=0.5), TOY_WORK, 10.0)
    b_spec = _solve(verify, 1.875)
    assert spec.prefill == 17
    assert spec.batch == pytest.approx(b_spec, rel=1e-5)
    assert spec.tpot_s == pytest.approx(verify(b_spec) / 1.875, rel=1e-5)
    gain = sl.load_gain(toy_setup(), sv.Acceptance(3, alpha=0.5), TOY_WORK, 10.0)
    assert gain == pytest.approx(plain_step(b_plain) / (verify(b_spec) / 1.875), rel=1e-5)
    assert gain == pytest.approx(1.8887, abs=1e-4)


def test_below_one_sequence_a_request_runs_alone_at_batch_ones_step():
    point = sl.steady_batch(sl.plain_setup(toy_setup()), None, TOY_WORK, 0.1)
    # batch 1's step with one prompt token: hypot(2 ms, 2 us x 2) + 4 us + 4 ns = 2.004008 ms;
    # 0.1 /s x 400 tokens x 2.004008 ms = 0.0801603 sequences on average
    assert point.prefill == 1
    assert point.tpot_s == pytest.approx(2.004008e-3, rel=1e-6)
    assert point.batch == pytest.approx(0.0801603, rel=1e-6)


SETUP_70B = sv.ServingSetup(
    sv.GPUS["4x-h100"], sv.TARGETS["llama-3.1-70b"], sv.DRAFTS["llama-3.2-1b"], 1_024
)
ACC = sv.Acceptance(4, alpha=0.7)
WORK = sl.Workload(256, 256)
SWEEP = sl.load_sweep(SETUP_70B, ACC, WORK, sl.qps_grid(60, 40))


def test_latency_grows_with_qps_until_the_server_cannot_keep_up():
    for tpot in (SWEEP.plain_tpot_s, SWEEP.spec_tpot_s):
        kept = tpot[~np.isnan(tpot)]
        assert kept.size > 10 and np.all(np.diff(kept) > 0)
        first_nan = np.flatnonzero(np.isnan(tpot))
        assert first_nan.size and np.all(np.isnan(tpot[first_nan[0] :]))  # none comes back
    assert SWEEP.plain_capacity == pytest.approx(
        SWEEP.qps[~np.isnan(SWEEP.plain_tpot_s)][-1], rel=0.15
    )


def test_speculations_gain_falls_with_qps_and_crosses_one():
    gain = SWEEP.gain[~np.isnan(SWEEP.gain)]
    assert gain[0] > 1.5 and gain[-1] < 1.0
    # non-increasing, up to the whole prompt tokens per step (a rounding of 0.1 %)
    assert np.all(np.diff(gain) <= 2e-3 * gain[:-1])
    cross = sl.crossover_qps(SETUP_70B, ACC, WORK, 60)
    assert SWEEP.qps[0] < cross < 60
    assert sl.load_gain(SETUP_70B, ACC, WORK, cross * 0.99) >= 1.0
    assert sl.load_gain(SETUP_70B, ACC, WORK, cross) < 1.0
    # speculation sustains fewer requests once its verify is bound by arithmetic
    assert SWEEP.spec_capacity < SWEEP.plain_capacity


def test_throughput_follows_the_qps_up_to_each_capacity():
    qps = SWEEP.qps
    assert np.allclose(
        SWEEP.plain_tokens_per_s[qps <= SWEEP.plain_capacity],
        256 * qps[qps <= SWEEP.plain_capacity],
    )
    assert SWEEP.spec_tokens_per_s.max() == pytest.approx(256 * SWEEP.spec_capacity)


def test_a_bigger_draft_lowers_the_largest_batch_most_at_long_contexts():
    setup_8b = sv.ServingSetup(
        sv.GPUS["h100-sxm"], sv.TARGETS["llama-3.1-8b"], sv.DRAFTS["llama-3.2-1b"], 1_024
    )
    plain = sl.plain_setup(setup_8b)
    small = sv.ServingSetup(
        sv.GPUS["h100-sxm"], sv.TARGETS["llama-3.1-8b"], sv.DRAFTS["llama-68m"], 1_024
    )
    for n in (1_024, 8_192, 32_768):
        assert (
            sl.largest_batch(plain, n) >= sl.largest_batch(small, n) > sl.largest_batch(setup_8b, n)
        )
    # by hand at 8,192 tokens: 80 GB - 16.06 GB (8B) - 2.47 GB (1B) = 61.47 GB for
    # (131,072 + 32,768) B per token x 8,192 = 1.342 GB per sequence -> 45 sequences
    assert sl.largest_batch(setup_8b, 8_192) == 45
    curve = sl.memory_curve(setup_8b, sl.Workload(512, 512))
    assert np.all(np.diff(curve.with_draft) <= 0) and np.all(
        curve.with_draft <= curve.without_draft
    )
    assert curve.binds_from is not None
    assert (
        sl.largest_batch(setup_8b, curve.binds_from, 0.9)
        < 256
        <= sl.largest_batch(setup_8b, curve.binds_from - 1, 0.9)
    )


def test_the_kv_cache_caps_the_batch_below_max_num_seqs_at_long_prompts():
    long = sl.Workload(30_000, 1_000)
    assert sl.batch_cap(SETUP_70B, long) < 256
    assert sl.batch_cap(SETUP_70B, long) <= sl.batch_cap(sl.plain_setup(SETUP_70B), long)


def test_the_switch_off_rule_keeps_speculation_below_its_batch_and_plain_above():
    on, tpot = sl.switch_off(SWEEP, 32)
    assert on[0] and not on[-1]
    assert np.all(SWEEP.spec_batch[on] <= 32)
    assert np.allclose(tpot[on], SWEEP.spec_tpot_s[on])
    assert np.array_equal(tpot[~on], SWEEP.plain_tpot_s[~on], equal_nan=True)
    # switched off at the batch where speculation stops paying, it never loses much
    at = sl.at_mean_context(SETUP_70B, WORK)  # the sweep's setup (mean context 384 tokens)
    cross = sl.steady_batch(at, ACC, WORK, sl.crossover_qps(SETUP_70B, ACC, WORK, 60))
    on, tpot = sl.switch_off(SWEEP, int(cross.batch))
    kept = ~np.isnan(SWEEP.plain_tpot_s)
    assert np.all(tpot[kept] <= SWEEP.plain_tpot_s[kept] * 1.05)
    always, _ = sl.switch_off(SWEEP, None)
    assert always.all()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: sl.check_qps(0.0), "QPS = 0 is out of range; allowed: 0.001 to 10000"),
        (lambda: sl.check_qps(float("nan")), "QPS = nan is out of range"),
        (lambda: sl.Workload(100_000, 40_000), "prompt tokens + output tokens per request"),
        (lambda: sl.Workload(0, 10), "prompt tokens per request = 0 is out of range"),
        (lambda: sl.Workload(10, 10, max_seqs=0), "most sequences per step (max_num_seqs) = 0"),
        (lambda: sl.Workload(10, 10, memory_share=0.0), "share of memory for weights"),
        (lambda: sl.qps_grid(1e6), "highest QPS = 1e+06 is out of range"),
        (lambda: sl.load_sweep(SETUP_70B, ACC, WORK, np.ones(500)), "give 1 to 200"),
        (lambda: sl.switch_off(SWEEP, 0), "speculative_disable_by_batch_size = 0"),
        (lambda: sl.largest_batch(SETUP_70B, 0), "context length = 0 is out of range"),
    ],
)
def test_limits_are_refused_by_name(make, message):
    with pytest.raises(InvalidParameterError, match=None) as err:
        make()
    assert message in str(err.value)


def test_a_server_with_no_room_for_one_sequence_says_so():
    tiny = sl.Workload(60_000, 60_000, memory_share=0.5)  # 0.5 x 320 GB < 141 GB + cache
    with pytest.raises(InvalidParameterError, match="not one sequence of 90,000 tokens fits"):
        sl.steady_batch(SETUP_70B, ACC, tiny, 1.0)


def test_without_chunked_prefill_prompt_passes_stretch_every_step():
    chunked = sl.steady_batch(SETUP_70B, None, WORK, 5.0)
    apart = sl.steady_batch(SETUP_70B, None, sl.Workload(256, 256, chunked=False), 5.0)
    rho = sl.prefill_share(SETUP_70B, WORK, 5.0)
    assert 0 < rho < 1 and apart.prefill == 0
    assert apart.tpot_s > chunked.tpot_s
