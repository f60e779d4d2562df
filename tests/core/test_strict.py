"""Strict verification (exact match): one step, its exact laws and its Monte Carlo."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core.rules import RULES, RuleKind, rules_of_kind

P000 = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # seed 000's target
Q000 = np.array([0.30, 0.30, 0.15, 0.15, 0.10])  # seed 000's draft
A, B, C, D, E = range(5)
LEVEL = 1e-4  # significance of the chi-square tests here
PAIRS = {
    "seed-000": (P000, Q000, 4),
    "far-apart": (np.array([0.7, 0.2, 0.1, 0.0]), np.array([0.1, 0.2, 0.3, 0.4]), 3),
    "q-misses-a-token": (np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4, 0.0]), 6),
    "one-hot-target": (np.array([0.0, 1.0, 0.0]), np.array([0.5, 0.25, 0.25]), 2),
    "p-equals-q": (P000, P000, 3),
}


@st.composite
def pairs(draw):
    """p, q over the same vocabulary of 1..8 tokens, with possible exact zeros."""
    v = draw(st.integers(1, 8))
    out = []
    for _ in range(2):
        w = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=v, max_size=v)))
        if w.sum() == 0:
            w[draw(st.integers(0, v - 1))] = 1.0
        out.append(w / w.sum())
    return tuple(out)


# --- exact acceptance and emitted law ----------------------------------------------------


def test_seed_000_keeps_a_draft_with_0_245_instead_of_0_85():
    """0.4*0.3 + 0.25*0.3 + 0.2*0.15 + 0.1*0.15 + 0.05*0.1 = 0.12 + 0.075 + 0.03 + 0.015 + 0.005."""
    assert vr.strict_acceptance(P000, Q000) == pytest.approx(0.245, abs=1e-15)
    assert sc.acceptance_rate(P000, Q000) == pytest.approx(0.85)


def test_p_equals_q_keeps_with_the_sum_of_squares():
    assert vr.strict_acceptance(P000, P000) == pytest.approx(float(np.sum(P000**2)))  # 0.235
    assert vr.strict_acceptance([0, 1, 0], [0, 1, 0]) == 1.0  # only a one-hot p keeps all


@settings(max_examples=150, deadline=None)
@given(pairs())
def test_strict_never_keeps_more_than_the_probabilistic_rule_and_emits_p(pq):
    p, q = pq
    assert vr.strict_acceptance(p, q) <= sc.acceptance_rate(p, q) + 1e-12
    np.testing.assert_allclose(vr.strict_emitted(p, q), p, atol=1e-12)
    np.testing.assert_allclose(sc.emitted_distribution("strict", p, q), p, atol=1e-12)


def test_the_fresh_sample_bug_emits_another_law():
    """e = p q + (1 - 0.245) p: tokens with q > 0.245 (A, B) come out too often."""
    bug = vr.strict_emitted(P000, Q000, fresh_after_mismatch=True)
    np.testing.assert_allclose(bug, [0.422, 0.26375, 0.181, 0.0905, 0.04275], atol=1e-12)
    np.testing.assert_allclose(sc.emitted_distribution("strict_fresh_sample", P000, Q000), bug)
    assert vr.total_variation(bug, P000) == pytest.approx(0.03575)
    # Flat q on p's support: the fresh sample is harmless (e = p q + (1 - beta) p = p).
    flat = vr.strict_emitted([0.5, 0.3, 0.2], [1 / 3] * 3, fresh_after_mismatch=True)
    np.testing.assert_allclose(flat, [0.5, 0.3, 0.2], atol=1e-12)


def test_expected_tokens_per_round_is_e_of_beta():
    """E(0.245, 4) = 1 + 0.245 + 0.245^2 + 0.245^3 + 0.245^4 = 1.3233341..."""
    expected = sum(0.245**i for i in range(5))
    assert vr.strict_expected_tokens(P000, Q000, 4) == pytest.approx(expected, rel=1e-12)
    assert vr.strict_expected_tokens(P000, Q000, 4) < sc.expected_tokens(0.85, 4)


# --- one step ----------------------------------------------------------------------------


def test_step_keeps_iff_the_target_samples_the_draft():
    """CDF of seed 000's p: [0.40, 0.65, 0.85, 0.95, 1]; u = 0.5 samples B."""
    kept = vr.strict_step(P000, Q000, B, uniform=0.5)
    assert (kept.accepted, kept.sampled, kept.emitted_token) == (True, B, B)
    missed = vr.strict_step(P000, Q000, A, uniform=0.5)
    assert (missed.token, missed.accepted, missed.sampled, missed.emitted_token) == (A, False, B, B)
    assert missed.coin == 0.5


def test_step_frequencies_match_beta_and_p():
    rng = np.random.default_rng(12)
    n = 40_000
    steps = [vr.strict_step(P000, Q000, int(rng.choice(5, p=Q000)), rng=rng) for _ in range(n)]
    kept = sum(s.accepted for s in steps)
    assert abs(kept / n - 0.245) < 5 * math.sqrt(0.245 * 0.755 / n)
    emitted = np.bincount([s.emitted_token for s in steps], minlength=5)
    assert sc.chi_square_test(emitted, P000).p_value > LEVEL


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((P000, [0.5, 0.5, 0, 0, 0], C), {"uniform": 0.1}, "draft token 2 has q = 0"),
        ((P000, Q000, 7), {"uniform": 0.1}, "draft token is 7; token ids run from 0 to 4"),
        ((P000, Q000[:3] / Q000[:3].sum(), A), {"uniform": 0.1}, "p has 5 entries but q has 3"),
        ((P000, Q000, A), {}, "is needed but was not given"),
        ((P000, Q000, A), {"uniform": 1.0}, "[0, 1)"),
    ],
)
def test_step_input_errors(args, kwargs, message):
    with pytest.raises(sc.SpecDecError) as err:
        vr.strict_step(*args, **kwargs)
    assert message in str(err.value)


# --- many rounds: simulate_rounds(variant="strict") ------------------------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_strict_rounds_pass_the_chi_square(name):
    p, q, k = PAIRS[name]
    result = sc.simulate_rounds(p, q, k, 60_000, rng=np.random.default_rng(31), variant="strict")
    report = sc.losslessness_test(result, significance=LEVEL)
    assert report.passed, (report.tokens.p_value, report.tokens_per_round.p_value)
    np.testing.assert_allclose(result.alphas, [vr.strict_acceptance(p, q)] * k)


@pytest.mark.parametrize("name", ["seed-000", "far-apart", "p-equals-q"])
def test_the_same_test_fails_the_fresh_sample_bug(name):
    p, q, k = PAIRS[name]
    result = sc.simulate_rounds(
        p, q, k, 60_000, rng=np.random.default_rng(31), variant="strict_fresh_sample"
    )
    report = sc.losslessness_test(result, significance=LEVEL)
    assert not report.passed
    assert report.tokens.p_value < 1e-12  # the tokens are off, by a wide margin
    assert report.tokens_per_round.p_value > LEVEL  # the keep rule itself is right


def test_strict_per_position_rows_are_lossless():
    rng = np.random.default_rng(4)
    k = 3
    p_rows = rng.dirichlet(np.ones(4), size=k + 1)
    q_rows = rng.dirichlet(np.ones(4), size=k)
    result = sc.simulate_rounds(
        p_rows, q_rows, k, 80_000, rng=np.random.default_rng(5), variant="strict"
    )
    assert sc.losslessness_test(result, significance=LEVEL).passed
    np.testing.assert_allclose(result.alphas, (p_rows[:k] * q_rows).sum(axis=1))


def test_strict_rounds_are_shorter_and_match_e_of_beta():
    n, k = 100_000, 4
    strict = sc.simulate_rounds(P000, Q000, k, n, rng=np.random.default_rng(3), variant="strict")
    correct = sc.simulate_rounds(P000, Q000, k, n, rng=np.random.default_rng(3))
    se = strict.tokens_per_round.std() / math.sqrt(n)
    assert abs(strict.mean_tokens_per_round - vr.strict_expected_tokens(P000, Q000, k)) < 4 * se
    assert strict.mean_tokens_per_round < correct.mean_tokens_per_round - 2.0  # 1.32 vs 3.71
    assert strict.drafted_accepted_fraction == pytest.approx(0.245, abs=0.005)
    metrics = sc.metrics_from_accepted_histogram(strict.n_accepted_counts)
    assert metrics.fitted_alpha == pytest.approx(0.245, abs=0.005)


def test_strict_runs_are_reproducible_across_chunks():
    a = sc.simulate_rounds(P000, Q000, 2, 150_000, rng=np.random.default_rng(9), variant="strict")
    b = sc.simulate_rounds(P000, Q000, 2, 150_000, rng=np.random.default_rng(9), variant="strict")
    np.testing.assert_array_equal(a.position_counts, b.position_counts)
    assert a.tokens_per_round_counts.sum() == 150_000


def test_the_registry_marks_strict_lossless_and_its_bug_not():
    strict, bug = RULES["strict"], RULES["strict_fresh_sample"]
    assert strict.lossless and strict.keep_rule == "strict"
    assert not bug.lossless and bug.keep_rule == "strict" and bug.breaks == "strict"
    menu = [r.name for r in rules_of_kind(lab="losslessness")]
    assert "strict" in menu and "strict_fresh_sample" in menu
    assert bug.kind is RuleKind.BUG_OF
