"""The serving cost model: hand-checked steps, properties, published checks, bad input."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core import serving as sv

H100 = sv.GPUS["h100-sxm"]
H100_BARE = H100.with_overhead(0.0)
LLAMA_8B = sv.TARGETS["llama-3.1-8b"]
LLAMA_70B = sv.TARGETS["llama-3.1-70b"]
ONE_B = sv.DRAFTS["llama-3.2-1b"]
NGRAM = sv.DRAFTS["ngram"]


def _setup(hw=H100, target=LLAMA_8B, draft=ONE_B, context=1_024):
    return sv.ServingSetup(hw, target, draft, context)


# ----------------------------------------------------------------------------- by hand
def test_8b_on_an_h100_at_batch_1_reads_16_gb_in_4_8_ms_and_is_memory_bound():
    assert LLAMA_8B.weight_bytes == pytest.approx(16.06e9)
    t = float(sv.step_time(LLAMA_8B, H100_BARE, 1, 1, context=1))
    assert t == pytest.approx(16.06e9 / 3.35e12, rel=1e-4)  # the KV cache of 1 token: 131 kB
    assert 1e3 * t == pytest.approx(4.79, abs=0.01)
    assert not sv.is_compute_bound(LLAMA_8B, H100_BARE, 1, 1, 1)
    # the arithmetic: 2 x 8.03e9 FLOPs per token at 989 TFLOP/s is 0.016 ms, 300x less
    assert float(sv.step_flops(LLAMA_8B, 1, 1, 1)) / 989e12 == pytest.approx(1.62e-5, rel=1e-2)
    # the fixed overhead is added on top: 0.3 ms by default
    assert float(sv.step_time(LLAMA_8B, H100, 1, 1, 1)) == pytest.approx(t + 3e-4)


def test_kv_cache_bytes_per_token_follow_the_config():
    # 32 layers x 2 x 8 KV heads x 128 x 2 bytes = 131,072 bytes per token
    assert LLAMA_8B.kv_bytes_per_token == 131_072
    assert LLAMA_70B.kv_bytes_per_token == 80 * 2 * 8 * 128 * 2
    assert float(sv.step_bytes(LLAMA_8B, 4, 1_000)) == pytest.approx(16.06e9 + 4 * 1_000 * 131_072)


def test_attention_flops_use_kaplans_formula():
    # FLOPs per token = 2 N + 2 n_layer n_ctx d_attn (Kaplan et al. 2020, Table 1)
    n = 2_048
    per_token = 2 * 8.03e9 + 2 * 32 * n * 4096
    assert float(sv.step_flops(LLAMA_8B, 3, 5, n)) == pytest.approx(3 * 5 * per_token)


def test_v_is_one_at_batch_1_and_grows_with_the_batch_until_compute_bound():
    setup = _setup(H100_BARE, context=1)
    assert float(sv.verify_cost(setup, 4, 1)) == pytest.approx(1.0)  # 5 tokens: still free
    # by hand: b x 5 x 2N / 989e12 >= 2N / 3.35e12 from b = 989 / (5 x 3.35) = 59.04
    assert sv.compute_bound_batch(setup, 5) == 60
    assert sv.H100_SXM.ridge == pytest.approx(295.2, abs=0.1)
    v = sv.verify_cost(setup, 4, np.array([1, 30, 59, 60, 120, 240, 480, 1_000]))
    np.testing.assert_allclose(v[:3], 1.0)  # memory-bound: the weights set the time
    assert np.all(np.diff(v[2:6]) > 0)  # the verify is compute-bound, the plain step not yet
    # from b = 296 both are compute-bound: time is proportional to the tokens, v = K + 1
    np.testing.assert_allclose(v[6:], 5.0)
    # there even a 1B draft that is always right (E = K + 1) cannot pay: K c + v >= K + 1
    assert np.all(sv.serving_speedup(setup, 1.0, 4, np.array([480, 1_000])) < 1.0)


def test_tensor_parallel_multiplies_bandwidth_flops_and_memory():
    four = sv.GPUS["4x-h100"]
    assert (four.chips, four.label) == (4, "4 x H100 SXM")
    assert four.total_bandwidth == 4 * 3.35e12 and four.total_memory == 320e9
    t = float(sv.step_time(LLAMA_70B, four.with_overhead(0.0), 1, 1, 1))
    assert t == pytest.approx(70.55e9 * 2 / (4 * 3.35e12), rel=1e-4)  # 10.5 ms


def test_speedup_is_e_over_k_c_plus_v():
    setup = _setup()
    c, v = float(sv.draft_cost(setup, 8)), float(sv.verify_cost(setup, 4, 8))
    e = sc.expected_tokens(0.75, 4)
    assert float(sv.serving_speedup(setup, 0.75, 4, 8)) == pytest.approx(e / (4 * c + v))
    # c of the 1B draft: (2.47 GB / 3.35 TB/s + 0.3 ms) / (16.06 GB / 3.35 TB/s + 0.3 ms)
    c1 = (1.236e9 * 2 / 3.35e12 + 3e-4) / (16.06e9 * 2 / 2 / 3.35e12 + 3e-4)
    assert float(sv.draft_cost(_setup(context=1), 1)) == pytest.approx(c1, rel=1e-3)
    assert float(sv.draft_cost(_setup(draft=NGRAM), 64)) == 0.0
    assert sv.speedup_from_costs(0.75, 4, 0.0, 1.0) == pytest.approx(e)


def test_eagle_head_is_one_layer_plus_a_small_lm_head():
    head = sv.eagle_head(LLAMA_8B)
    # 8.03e9 / 32 + 3 x 4096^2 + 32,000 x 4096
    assert head.params == pytest.approx(8.03e9 / 32 + 3 * 4096**2 + 32_000 * 4096)
    assert head.layers == 1 and 0.4e9 < head.params < 0.45e9
    c = float(sv.draft_cost(_setup(draft=sv.DRAFTS["eagle-head"]), 1))
    assert 0.05 < c < float(sv.draft_cost(_setup(), 1))  # cheaper than the 1B model


def test_best_k_is_the_argmax_over_k():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    batches = np.array([1, 64, 256, 400])
    grid = np.stack([sv.serving_speedup(setup, 0.8, k, batches) for k in range(1, 9)])
    np.testing.assert_array_equal(sv.best_k(setup, 0.8, batches), np.argmax(grid, axis=0) + 1)
    assert sv.best_k(setup, 0.8, 1) >= sv.best_k(setup, 0.8, 400)  # less to gain under load


def test_break_even_batch_is_where_speculation_starts_to_lose():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    b = sv.break_even_batch(setup, 0.75, 4)
    assert b == 272
    assert float(sv.serving_speedup(setup, 0.75, 4, b)) < 1.0
    assert float(sv.serving_speedup(setup, 0.75, 4, b - 1)) >= 1.0
    assert float(sv.serving_speedup(setup, 0.75, 4, 1)) == pytest.approx(2.59, abs=0.01)
    # 8B with a 1B draft at 1,024 tokens: memory runs out (366 sequences) before it loses
    assert sv.max_batch(_setup()) == 366 and sv.break_even_batch(_setup(), 0.75, 4) is None
    # a draft that is never accepted loses at once
    assert sv.break_even_batch(setup, 0.0, 4) == 1


def test_batch_sweep_matches_the_pointwise_functions():
    setup = _setup(sv.GPUS["4x-h100"], LLAMA_70B)
    sweep = sv.batch_sweep(setup, 0.75, 4, sv.batch_grid(sv.max_batch(setup), 20))
    assert sweep.batch[0] == 1 and sweep.batch[-1] == sv.max_batch(setup)
    np.testing.assert_allclose(sweep.v, sv.verify_cost(setup, 4, sweep.batch))
    np.testing.assert_allclose(sweep.speedup, sv.serving_speedup(setup, 0.75, 4, sweep.batch))
    np.testing.assert_array_equal(sweep.best_k, sv.best_k(setup, 0.75, sweep.batch))
    # latency x speedup = plain latency; throughput per chip = b / latency / chips
    np.testing.assert_allclose(sweep.spec_latency_s * sweep.speedup, sweep.plain_latency_s)
    np.testing.assert_allclose(
        sweep.plain_tokens_per_chip, sweep.batch / sweep.plain_s / 4, rtol=1e-12
    )


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
)


@st.composite
def targets(draw):
    q = draw(st.sampled_from([8, 16, 32, 64]))
    return sv.ModelSpec(
        "random target",
        draw(st.floats(1e8, 1e11)),
        draw(st.integers(4, 96)),
        q,
        draw(st.sampled_from([h for h in (1, 2, 4, 8, 16, 32, 64) if h <= q])),
        draw(st.sampled_from([64, 128])),
    )


@st.composite
def model_drafts(draw, target):
    return sv.DraftSpec(
        "random draft",
        model=sv.ModelSpec("draft model", draw(st.floats(1e6, target.params / 2)), 2, 8, 8, 64),
    )


@st.composite
def setups(draw, fixed_c: bool | None = None):
    target = draw(targets())
    use_c = draw(st.booleans()) if fixed_c is None else fixed_c
    if use_c:
        draft = sv.DraftSpec("fixed c", fixed_c=draw(st.floats(0.0, 1.0)))
    else:
        draft = draw(model_drafts(target))
    return sv.ServingSetup(draw(hardware), target, draft, draw(st.integers(1, 8_192)))


def _batches(setup, top=1_024):
    return np.arange(1, min(sv.max_batch(setup), top) + 1)


@settings(max_examples=60, deadline=None)
@given(setups(), st.integers(1, 8))
def test_v_never_falls_as_the_batch_grows_and_stays_in_1_to_k_plus_1(setup, k):
    v = sv.verify_cost(setup, k, _batches(setup))
    assert np.all(np.diff(v) >= -1e-12)
    assert np.all(v >= 1 - 1e-12) and np.all(v <= k + 1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(setups(fixed_c=True), st.floats(0.0, 1.0), st.integers(1, 8))
def test_speedup_falls_as_b_grows_and_strictly_once_the_verify_is_compute_bound(setup, a, k):
    b = _batches(setup)
    s = sv.serving_speedup(setup, a, k, b)
    assert np.all(np.diff(s) <= 1e-12)  # never rises with the batch
    start = sv.compute_bound_batch(setup, k + 1)
    if start is not None and start < b[-1] and setup.hardware.overhead_s > 1e-5:
        tail = s[start - 1 :]
        assert np.all(np.diff(tail) < 0)  # compute-bound: every extra sequence costs


@settings(max_examples=60, deadline=None)
@given(setups(fixed_c=False), st.floats(0.0, 1.0), st.integers(1, 8))
def test_once_the_target_is_compute_bound_a_draft_model_never_pays(setup, a, k):
    """t_verify = (K + 1) x FLOPs + o and the draft costs at least o, so K c + v >= K + 1."""
    b = _batches(setup)
    bound = sv.is_compute_bound(setup.target, setup.hardware, b, 1, setup.context)
    if not bound.any():
        return
    s = sv.serving_speedup(setup, a, k, b[bound])
    assert np.all(s <= sc.expected_tokens(a, k) / (k + 1) * (1 + 1e-9))
    assert np.all(s <= 1 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(setups(), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(1, 8))
def test_the_break_even_batch_moves_up_with_alpha(setup, a1, a2, k):
    low, high = sorted((a1, a2))
    top = min(sv.max_batch(setup), 1_024)
    b_low = sv.break_even_batch(setup, low, k, top)
    b_high = sv.break_even_batch(setup, high, k, top)
    never = top + 1  # None: speculation still pays at the largest batch
    assert (b_high or never) >= (b_low or never)


def test_break_even_means_from_there_on_not_the_first_losing_batch():
    """An EAGLE head's c falls with the batch (its weights are shared by more sequences
    while the target's KV cache grows), so at a low alpha the speedup starts below 1,
    rises above it and falls again: the break-even batch is where it stays below 1."""
    setup = _setup(H100, LLAMA_8B, sv.DRAFTS["eagle-head"], 128)
    b = np.arange(1, sv.max_batch(setup) + 1)
    s = sv.serving_speedup(setup, 0.3, 4, b)
    assert s[0] < 1 and s.max() > 1  # loses at batch 1, pays later
    be = sv.break_even_batch(setup, 0.3, 4)
    assert be == 64
    assert np.all(s[be - 1 :] < 1) and s[be - 2] >= 1


# ----------------------------------------------------------------------------- fit and input
def test_a_model_that_does_not_fit_is_refused_with_both_sizes():
    with pytest.raises(sc.InvalidParameterError) as err:
        _setup(H100, LLAMA_70B)
    assert str(err.value) == (
        "Llama-3.1-70B (bf16) with the Llama-3.2-1B draft needs 143.9 GB (143.6 GB of weights "
        "and 0.4 GB of KV cache for 1 x 1,024 tokens), but H100 SXM has 80.0 GB. Use more "
        "GPUs, a smaller model, a smaller batch or a shorter context."
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
        (lambda: dataclasses.replace(LLAMA_8B, kv_heads=64), "64 KV heads but 32 query heads"),
        (lambda: dataclasses.replace(LLAMA_8B, layers=0), "layers = 0 is out of range"),
        (lambda: dataclasses.replace(LLAMA_8B, params=1e14), "parameters = 1e+14"),
        (lambda: sv.DraftSpec("both", fixed_c=0.1, eagle=True), "exactly one of"),
        (lambda: sv.DraftSpec("slow", fixed_c=3.0), "c = 3 is out of range"),
        (lambda: sv.step_time(LLAMA_8B, H100, 0), "batch size is out of range"),
        (lambda: sv.step_time(LLAMA_8B, H100, 5_000), "allowed: 1 to 4,096"),
        (lambda: sv.step_time(LLAMA_8B, H100, 2.5), "batch size must be a whole number"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 1, 0), "context length = 0"),
        (lambda: sv.step_time(LLAMA_8B, H100, 1, 1, 200_000), "allowed: 1 to 131072"),
        (lambda: sv.serving_speedup(_setup(), 1.5, 4, 1), "alpha = 1.5 is out of range"),
        (lambda: sv.serving_speedup(_setup(), 0.5, 17, 1), "K = 17 is out of range"),
        (lambda: sv.serving_speedup(_setup(), 0.5, 0, 1), "K = 0 is out of range"),
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


# ----------------------------------------------------------------------------- published
def test_published_checks_pin_the_papers_settings_and_the_models_predictions():
    rows = sv.published_checks()
    got = [(r.source.split(",")[0], r.quantity, r.published, round(r.predicted, 2)) for r in rows]
    assert got == [
        ("Leviathan et al. 2023", "speedup", 3.4, 3.13),
        ("Leviathan et al. 2023", "speedup", 1.7, 2.77),
        ("Leviathan et al. 2023", "speedup", 2.6, 2.24),
        ("Leviathan et al. 2023", "speedup", 3.1, 2.39),
        ("Leviathan et al. 2023", "speedup", 2.3, 1.88),
        ("Chen et al. 2023", "speedup", 1.92, 2.09),
        ("Chen et al. 2023", "ms per token", 14.1, 7.66),
        ("vLLM blog", "speedup", 1.5, 2.44),
        ("vLLM blog", "speedup", pytest.approx(1 / 1.4), 0.98),
        ("SGLang documentation", "ms per token", pytest.approx(6.316, abs=1e-3), 5.13),
    ]
    first = rows[0]
    assert "gamma = 7" in first.setting and "alpha = 0.75" in first.setting
    assert first.c_published == 0.02 and first.c_predicted == pytest.approx(0.021, abs=1e-3)
    assert first.v_predicted == pytest.approx(1.0)  # a verify of 8 tokens is free at batch 1
    assert "TPU v4" in first.assumed  # the hardware is not a page preset: said so
    chen = rows[5]
    assert chen.c_published == pytest.approx(0.128, abs=1e-3) and "16 TPU v4" in chen.assumed
    assert rows[8].v_predicted > 2.5 and "batch 256" in rows[8].assumed
    for row in rows:
        assert row.note and row.assumed
        assert row.error == pytest.approx(row.predicted - row.published)
        assert row.relative_error == pytest.approx(row.error / row.published)


def test_the_published_t5_rows_agree_with_the_papers_own_formula_at_v_1():
    """At batch 1 the model's v is 1, so its speedup is Thm 3.8 with the model's c."""
    papers = sv.leviathan_rows()
    assert [(p["k"], p["alpha"], p["measured"]) for p in papers] == [
        (7, 0.75, 3.4),
        (7, 0.82, 1.7),
        (7, 0.62, 2.6),
        (5, 0.65, 3.1),
        (5, 0.53, 2.3),
    ]
    rows = sv.published_checks()[: len(papers)]
    for row, paper in zip(rows, papers, strict=True):
        by_formula = sc.speedup(paper["alpha"], paper["k"], row.c_predicted, 1.0)
        assert row.predicted == pytest.approx(by_formula, rel=1e-6)
