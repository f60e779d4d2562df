"""Variants at one position: multi-draft, one-hot drafts, greedy, typical acceptance."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core.sampling import RESIDUAL_TOLERANCE

P000 = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # seed 000's target
Q000 = np.array([0.30, 0.30, 0.15, 0.15, 0.10])  # seed 000's draft
A, B, C, D, E = range(5)


@st.composite
def simplices(draw, v):
    """A probability vector (V,) with possible exact zeros."""
    w = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=v, max_size=v)))
    if w.sum() == 0:
        w[draw(st.integers(0, v - 1))] = 1.0
    return w / w.sum()


@st.composite
def pairs(draw):
    v = draw(st.integers(1, 8))
    return draw(simplices(v)), draw(simplices(v))


# --- multidraft_step: worked examples -------------------------------------------------


def test_worked_example_first_rejected_second_kept_on_the_residual():
    """Seed 000's p, q; candidates B then A, coins 0.90 then 0.50.

    Candidate 1, B: a = min(1, 0.25 / 0.30) = 0.8333; coin 0.90 >= 0.8333: rejected.
    Residual: max(0, p - q) = [0.10, 0, 0.05, 0, 0], mass 0.15 -> p_2 = [2/3, 0, 1/3, 0, 0].
    Candidate 2, A: a = min(1, p_2(A) / q(A)) = min(1, 0.6667 / 0.30) = min(1, 2.222) = 1;
    coin 0.50 < 1: kept. Emitted: A, kept index 1.
    """
    r = vr.multidraft_step(P000, Q000, [B, A], uniforms=[0.90, 0.50])
    assert [s.accepted for s in r.steps] == [False, True]
    assert r.steps[0].acceptance_probability == pytest.approx(0.25 / 0.30)
    np.testing.assert_allclose(r.targets[1], [2 / 3, 0, 1 / 3, 0, 0])
    assert r.steps[1].p_x == pytest.approx(2 / 3)
    assert r.steps[1].ratio == pytest.approx((2 / 3) / 0.30)
    assert r.steps[1].acceptance_probability == 1.0
    assert (r.kept_index, r.emitted_token, r.final_distribution) == (1, A, None)


def test_worked_example_all_rejected_emits_the_last_residual():
    """Candidates B then D, coins 0.90 then 0.50.

    B rejected as above: p_2 = [2/3, 0, 1/3, 0, 0]. D: p_2(D) = 0, a = 0: rejected.
    p_3 = norm(max(0, p_2 - q)) = norm([0.6667 - 0.30, 0, 0.3333 - 0.15, 0, 0])
        = norm([0.36667, 0, 0.18333, 0, 0]) (mass 0.55) = [2/3, 0, 1/3, 0, 0].
    Final uniform 0.70: CDF [0.667, 0.667, 1, 1, 1]; 0.70 falls in C's interval -> C.
    """
    r = vr.multidraft_step(P000, Q000, [B, D], uniforms=[0.90, 0.50], rng=FixedRng(0.70))
    assert r.kept_index is None
    assert r.steps[1].acceptance_probability == 0.0
    assert len(r.targets) == 3
    np.testing.assert_allclose(r.targets[2], [2 / 3, 0, 1 / 3, 0, 0])
    np.testing.assert_allclose(r.final_distribution, r.targets[2])
    assert (r.emitted_token, r.final_coin) == (C, 0.70)


def test_worked_example_two_candidates_rescue_a_draft_one_cannot():
    """p = [0.7, 0.3, 0, 0] (confident target), q flat 0.25 (poor draft); candidates C, A.

    C: p(C) = 0 -> a = 0, rejected whatever the coin (0.10).
    p_2 = norm(max(0, p - q)) = norm([0.45, 0.05, 0, 0]) = [0.9, 0.1, 0, 0].
    A: a = min(1, 0.9 / 0.25) = 1: kept (coin 0.99). One candidate (C) alone would have
    emitted a residual sample; the second one is a kept draft.
    """
    p, q = [0.7, 0.3, 0, 0], [0.25] * 4
    r = vr.multidraft_step(p, q, [C, A], uniforms=[0.10, 0.99])
    np.testing.assert_allclose(r.targets[1], [0.9, 0.1, 0, 0])
    assert (r.kept_index, r.emitted_token) == (1, A)


def test_per_candidate_draft_rows_are_used_for_ratio_and_residual():
    """Candidate 2 comes from its own q_2 = onehot(A): a = min(1, p_2(A) / 1) = p_2(A) = 2/3."""
    q_rows = [Q000, [1, 0, 0, 0, 0]]
    r = vr.multidraft_step(P000, q_rows, [B, A], uniforms=[0.90, 0.70], rng=FixedRng(0.5))
    assert r.steps[1].acceptance_probability == pytest.approx(2 / 3)
    assert r.kept_index is None  # 0.70 >= 2/3
    # p_3 = norm(max(0, p_2 - onehot(A))) = C only
    np.testing.assert_allclose(r.targets[2], [0, 0, 1, 0, 0])
    assert r.emitted_token == C


class FixedRng:
    """Stands in for a Generator that returns one fixed uniform."""

    def __init__(self, u):
        self.u = u

    def random(self):
        return self.u


# --- multidraft_step: properties ------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(pairs(), st.integers(0, 2**31 - 1), st.floats(0, 0.999999))
def test_one_candidate_is_one_position_of_verify_round(pq, seed, coin):
    p, q = pq
    x = int(np.flatnonzero(q > 0)[seed % int((q > 0).sum())])
    one = vr.multidraft_step(p, q, [x], uniforms=[coin], rng=np.random.default_rng(seed))
    ref = sc.verify_round(
        np.stack([p, p]), q[None, :], [x], uniforms=[coin], rng=np.random.default_rng(seed)
    )
    step = ref.steps[0]
    assert one.steps[0].accepted == step.accepted
    assert one.steps[0].acceptance_probability == step.acceptance_probability
    if step.accepted:
        assert one.emitted_token == x == ref.emitted_tokens[0]
    else:
        np.testing.assert_allclose(one.final_distribution, ref.final_distribution)
        assert one.emitted_token == ref.final_token


@settings(max_examples=200, deadline=None)
@given(pairs(), st.integers(1, 6))
def test_multidraft_emits_exactly_p(pq, m):
    p, q = pq
    np.testing.assert_allclose(vr.multidraft_emitted(p, q, m), p, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_beta_is_alpha_at_one_and_non_decreasing(pq):
    p, q = pq
    beta = vr.multidraft_acceptance(p, q, np.arange(1, 11))
    assert beta[0] == pytest.approx(sc.acceptance_rate(p, q), abs=1e-12)
    assert np.all(np.diff(beta) >= -1e-12)
    assert np.all((beta >= 0) & (beta <= 1 + 1e-12))


def test_beta_worked_values_and_the_disjoint_plateau():
    """Seed 000: alpha_1 = 0.85; p_2 = [2/3, 0, 1/3, 0, 0], alpha_2 = 0.30 + 0.15 = 0.45;
    beta_2 = 1 - 0.15 * 0.55 = 0.9175.
    Disjoint: p = [0.3, 0.3, 0.4], q = [0.5, 0.5, 0]: alpha = 0.6, p_2 = [0, 0, 1] has no
    overlap with q, so beta_m = 0.6 for every m."""
    assert vr.multidraft_acceptance(P000, Q000, 2) == pytest.approx(0.9175)
    np.testing.assert_allclose(vr.chain_alphas(P000, Q000, 2), [0.85, 0.45])
    flat = vr.multidraft_acceptance([0.3, 0.3, 0.4], [0.5, 0.5, 0], np.arange(1, 9))
    np.testing.assert_allclose(flat, 0.6)


def test_beta_approaches_one_when_q_covers_p():
    beta = vr.multidraft_acceptance([0.7, 0.3, 0, 0], [0.25] * 4, np.array([1, 2, 3, 8]))
    # alpha_1 = 0.5, alpha_2 = 0.35, alpha_3 = 0.25 -> beta_2 = 0.675, beta_3 = 0.75625
    np.testing.assert_allclose(beta[:3], [0.5, 0.675, 0.75625])
    assert beta[3] > 0.9


@pytest.mark.parametrize(
    "call, error, fragment",
    [
        (lambda: vr.multidraft_step(P000, Q000, []), sc.InvalidParameterError, "1 to 16"),
        (lambda: vr.multidraft_step(P000, Q000, [7]), sc.InvalidParameterError, "0 to 4"),
        (lambda: vr.multidraft_step(P000, [1, 0, 0, 0, 0], [1]), sc.InvalidParameterError, "q = 0"),
        (
            lambda: vr.multidraft_step(P000, Q000, [1], uniforms=[1.0]),
            sc.InvalidParameterError,
            "[0, 1)",
        ),
        (
            lambda: vr.multidraft_step(P000, Q000, [1], uniforms=[0.1, 0.2]),
            sc.InvalidParameterError,
            "2 coins",
        ),
        (lambda: vr.multidraft_step(P000, Q000, [1, 2]), sc.InvalidParameterError, "no rng"),
        (
            lambda: vr.multidraft_step(P000, Q000, [1], uniforms=["half"]),
            sc.InvalidParameterError,
            "not a list of numbers",
        ),
        (
            lambda: vr.typical_step(P000, 4, after_rejection="truncated_sample", uniform=1.5),
            sc.InvalidParameterError,
            "coin 1 is 1.5",
        ),
        (
            lambda: vr.multidraft_step(P000, Q000[:3] / Q000[:3].sum(), [1]),
            sc.InvalidDistributionError,
            "must match",
        ),
        (
            lambda: vr.multidraft_step(P000, [Q000], [1, 2]),
            sc.InvalidDistributionError,
            "one row per candidate",
        ),
        (
            lambda: vr.multidraft_step(P000, Q000, [1], uniforms=[0.99], final_token=3),
            sc.InvalidParameterError,
            "probability 0",
        ),
        (lambda: vr.multidraft_acceptance(P000, Q000, 0), sc.InvalidParameterError, "1..64"),
        (lambda: vr.multidraft_acceptance(P000, Q000, 1.5), sc.InvalidParameterError, "whole"),
    ],
)
def test_bad_inputs_raise_named_errors(call, error, fragment):
    with pytest.raises(error, match=fragment.replace("[", r"\[").replace(")", r"\)")):
        call()


def test_given_final_token_replays_a_rejection():
    r = vr.multidraft_step(P000, Q000, [B], uniforms=[0.99], final_token=A)
    assert (r.kept_index, r.emitted_token, r.final_coin) == (None, A, None)


# --- deterministic (one-hot) drafts --------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8).flatmap(lambda v: st.tuples(simplices(v), st.integers(0, v - 1))))
@example((np.array([2.2e-16, 1.0]) / (1.0 + 2.2e-16), 1))  # a mismatch of mass below 1e-12
@example((np.array([1.0 - 2.0**-52, 2.0**-52]), 0))  # the same, found by Hypothesis on main
def test_one_hot_general_rule_equals_sampling_and_matching(px):
    p, x = px
    general, match = vr.onehot_general_rule(p, x), vr.onehot_match_rule(p, x)
    assert general.keep_probability == pytest.approx(p[x]) == pytest.approx(match.keep_probability)
    np.testing.assert_allclose(general.replacement, match.replacement, atol=1e-12)
    if 1 - p[x] > RESIDUAL_TOLERANCE:  # else a rejection is no event: both fall back to p
        assert general.replacement[x] == 0
    np.testing.assert_allclose(general.emitted(), p, atol=1e-9)
    np.testing.assert_allclose(match.emitted(), p, atol=1e-9)


def test_one_hot_worked_example_and_verify_round_agree():
    """Seed 000's p, prompt lookup proposes B (q = onehot(B)).
    keep = min(1, 0.25 / 1) = 0.25; replacement = [0.40, 0, 0.20, 0.10, 0.05] / 0.75
    = [0.5333, 0, 0.2667, 0.1333, 0.0667]."""
    rule = vr.onehot_general_rule(P000, B)
    assert rule.keep_probability == pytest.approx(0.25)
    np.testing.assert_allclose(
        rule.replacement, [0.4 / 0.75, 0, 0.2 / 0.75, 0.1 / 0.75, 0.05 / 0.75]
    )
    ref = sc.verify_round(
        np.stack([P000, P000]),
        [vr.one_hot(5, B)],
        [B],
        uniforms=[0.3],
        rng=np.random.default_rng(0),
    )
    assert not ref.steps[0].accepted  # 0.3 >= 0.25
    np.testing.assert_allclose(ref.final_distribution, rule.replacement)


def test_match_step_keeps_iff_the_sample_is_the_draft():
    """CDF of seed 000's p: [0.40, 0.65, 0.85, 0.95, 1]. u = 0.5 samples B: draft B kept;
    draft A with u = 0.5 is not kept and B is emitted instead."""
    assert vr.onehot_match_step(P000, B, uniform=0.5).accepted
    step = vr.onehot_match_step(P000, A, uniform=0.5)
    assert (step.accepted, step.sampled, step.emitted_token) == (False, B, B)


def test_match_step_frequencies_follow_p():
    rng = np.random.default_rng(5)
    kept = sum(vr.onehot_match_step(P000, C, rng=rng).accepted for _ in range(20_000))
    assert abs(kept / 20_000 - 0.20) < 5 * math.sqrt(0.2 * 0.8 / 20_000)


def test_greedy_rule_keeps_only_the_argmax():
    assert vr.greedy_rule(P000, A).keep_probability == 1.0
    rule = vr.greedy_rule(P000, C)
    assert rule.keep_probability == 0.0
    np.testing.assert_allclose(rule.emitted(), [1, 0, 0, 0, 0])


# --- typical acceptance -----------------------------------------------------------------


def test_typical_threshold_worked_examples():
    """Flat p over 5: H = ln 5, exp(-H) = 0.2, delta * 0.2 = 0.06 < epsilon = 0.09 -> tau = 0.06.
    Peaked p = [0.9, 0.05, 0.03, 0.02]: H = 0.0948 + 0.1498 + 0.1052 + 0.0782 = 0.4281,
    exp(-H) = 0.6518, delta * 0.6518 = 0.1955 > 0.09 -> tau = 0.09."""
    assert vr.entropy([0.2] * 5) == pytest.approx(math.log(5))
    assert vr.typical_threshold([0.2] * 5) == pytest.approx(0.06)
    peaked = [0.9, 0.05, 0.03, 0.02]
    assert vr.entropy(peaked) == pytest.approx(0.42805, abs=1e-4)
    assert vr.typical_threshold(peaked) == pytest.approx(0.09)
    step = vr.typical_step(peaked, B)  # p(B) = 0.05 <= 0.09: rejected, argmax A emitted
    assert (step.accepted, step.emitted_token) == (False, A)
    assert vr.typical_step([0.2] * 5, E).accepted  # 0.2 > 0.06
    assert (step.entropy, step.threshold) == (vr.entropy(peaked), vr.typical_threshold(peaked))


def test_typical_step_checks_every_option_also_when_the_draft_is_kept():
    """The options are checked once, at the boundary, whichever way the step goes."""
    assert vr.typical_step([0.2] * 5, E).accepted
    with pytest.raises(sc.InvalidParameterError, match="after_rejection 'x' is unknown"):
        vr.typical_step([0.2] * 5, E, after_rejection="x")
    with pytest.raises(sc.InvalidParameterError, match="coin 1 is 1.5"):
        vr.typical_step([0.2] * 5, E, uniform=1.5)


def test_typical_emitted_worked_example_and_tv():
    """Seed 000: H = 1.4185, delta exp(-H) = 0.0729 < 0.09 -> tau = 0.0729: A-D pass, E fails.
    e = q on A-D + q(E) = 0.10 moved to argmax A: [0.40, 0.30, 0.15, 0.15, 0].
    TV(e, p) = (0 + 0.05 + 0.05 + 0.05 + 0.05) / 2 = 0.10."""
    e = sc.emitted_distribution("typical_acceptance", P000, Q000)
    np.testing.assert_allclose(e, [0.40, 0.30, 0.15, 0.15, 0.0])
    assert vr.total_variation(e, P000) == pytest.approx(0.10)
    assert vr.typical_keep_rate(P000, Q000) == pytest.approx(0.90)


def test_typical_is_biased_on_a_flat_p_and_its_truncated_correction():
    """Flat p: every token passes (0.2 > 0.06), so every draft is kept and e = q."""
    q = [0.6, 0.1, 0.1, 0.1, 0.1]
    e = sc.emitted_distribution("typical_acceptance", [0.2] * 5, q)
    np.testing.assert_allclose(e, q)
    assert vr.total_variation(e, [0.2] * 5) == pytest.approx(0.4)
    trunc = vr.typical_correction([0.5, 0.45, 0.05], after_rejection="truncated_sample")
    # H = 0.8487, 0.3 exp(-H) = 0.128 > 0.09 -> tau = 0.09: C (0.05) removed, A, B renormalised
    np.testing.assert_allclose(trunc, [0.5 / 0.95, 0.45 / 0.95, 0])


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_argmax_always_passes_the_typical_threshold(pq):
    p, _ = pq
    assert p.max() >= vr.typical_threshold(p) - 1e-15


# --- emitted_distribution for every variant ------------------------------------------


@settings(max_examples=150, deadline=None)
@given(pairs(), st.integers(1, 4))
def test_lossless_variants_emit_p(pq, m):
    p, q = pq
    for variant, options in (
        ("correct", {}),
        ("multi_draft", {"n_candidates": m}),
        ("tree", {"branching": (m, 2)}),
    ):
        np.testing.assert_allclose(sc.emitted_distribution(variant, p, q, **options), p, atol=1e-9)
    x = int(np.argmax(q))
    np.testing.assert_allclose(
        sc.emitted_distribution("deterministic", p, vr.one_hot(p.size, x)), p, atol=1e-9
    )


def test_lossy_variants_differ_from_p():
    lenient = sc.emitted_distribution("accept_if_p_ge_q", P000, Q000)
    # kept where p >= q: A (0.30), C (0.15); 1 - 0.45 = 0.55 to the residual [2/3, 0, 1/3, 0, 0]
    np.testing.assert_allclose(lenient, [0.30 + 0.55 * 2 / 3, 0, 0.15 + 0.55 / 3, 0, 0])
    assert vr.total_variation(lenient, P000) > 0.2
    np.testing.assert_allclose(sc.emitted_distribution("greedy", P000, Q000), [1, 0, 0, 0, 0])


@pytest.mark.parametrize(
    "args, options, fragment",
    [
        (("nope", P000, Q000), {}, "unknown"),
        (("correct", P000, Q000), {"n_candidates": 2}, "do not apply"),
        (("deterministic", P000, Q000), {}, "one-hot"),
        (("typical_acceptance", P000, Q000), {"epsilon": 0}, r"\(0, 1\]"),
        (("typical_acceptance", P000, Q000), {"after_rejection": "x"}, "unknown"),
        (("tree", P000, Q000), {"branching": ()}, "at least one level"),
    ],
)
def test_emitted_distribution_rejects_bad_options(args, options, fragment):
    with pytest.raises(sc.SpecDecError, match=fragment):
        sc.emitted_distribution(*args, **options)


def test_expected_tokens_with_candidates_and_typical():
    """m = 1: (1 - 0.85^4) / 0.15 = 3.5478 (seed 000, K = 3). m = 2: beta = 0.9175,
    1 + 0.9175 + 0.9175^2 + 0.9175^3 = 3.6335. Typical: r = 0.9, 1 + 0.9 + 0.81 + 0.729."""
    got = vr.multidraft_expected_tokens(P000, Q000, 3, np.array([1, 2]))
    np.testing.assert_allclose(got, [(1 - 0.85**4) / 0.15, 1 + 0.9175 + 0.9175**2 + 0.9175**3])
    assert got[0] == pytest.approx(sc.expected_tokens(0.85, 3))
    assert vr.typical_expected_tokens(P000, Q000, 3) == pytest.approx(3.439)


def test_draft_candidates_are_seeded_and_follow_q():
    a = vr.draft_candidates(Q000, 5, np.random.default_rng(3))
    assert a == vr.draft_candidates(Q000, 5, np.random.default_rng(3)) and len(a) == 5
    many = vr.draft_candidates([0, 1, 0], 16, np.random.default_rng(0))
    assert set(many) == {1}


def test_no_residual_bug_law_worked_example():
    """Seed 000, m = 2: alpha = 0.85 for both tries, min(p, q) = [0.30, 0.25, 0.15, 0.10,
    0.05], residual [2/3, 0, 1/3, 0, 0]. e = (1 + 0.15) min(p, q) + 0.15^2 residual
    = [0.345 + 0.015, 0.2875, 0.1725 + 0.0075, 0.115, 0.0575]
    = [0.36, 0.2875, 0.18, 0.115, 0.0575]; |e - p| = 0.04 + 0.0375 + 0.02 + 0.015 + 0.0075
    = 0.12, TV = 0.06."""
    e = sc.emitted_distribution("multi_draft_no_residual", P000, Q000, n_candidates=2)
    np.testing.assert_allclose(e, [0.36, 0.2875, 0.18, 0.115, 0.0575])
    assert e.sum() == pytest.approx(1.0)
    assert vr.total_variation(e, P000) == pytest.approx(0.06)
    one = sc.emitted_distribution("multi_draft_no_residual", P000, Q000, n_candidates=1)
    np.testing.assert_allclose(one, P000)  # with one candidate the bug cannot show
