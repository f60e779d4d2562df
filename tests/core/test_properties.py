"""Property tests over random simplices (hypothesis) and the edge cases."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc


@st.composite
def simplices(draw, v=None, allow_zeros=True):
    """A probability vector (V,) with optional exact zeros."""
    v = v or draw(st.integers(1, 12))
    lo = 0.0 if allow_zeros else 1e-3
    w = np.array(draw(st.lists(st.floats(lo, 1.0), min_size=v, max_size=v)))
    if w.sum() == 0:
        w[draw(st.integers(0, v - 1))] = 1.0
    return w / w.sum()


@st.composite
def pairs(draw):
    v = draw(st.integers(1, 12))
    return draw(simplices(v)), draw(simplices(v))


@settings(max_examples=300, deadline=None)
@given(pairs())
def test_decomposition_identity_reconstructs_p(pq):
    """q(x) min(1, p(x)/q(x)) + (1 - alpha) residual(x) = p(x), for every x."""
    p, q = pq
    alpha = sc.acceptance_rate(p, q)
    kept = q * sc.acceptance_probability(p, q)  # (V,) mass kept at the draft
    np.testing.assert_allclose(kept + (1 - alpha) * sc.residual_distribution(p, q), p, atol=1e-9)


@settings(max_examples=300, deadline=None)
@given(pairs())
def test_alpha_and_residual_are_valid(pq):
    p, q = pq
    alpha = sc.acceptance_rate(p, q)
    assert 0.0 <= alpha <= 1.0
    assert alpha == pytest.approx(1 - 0.5 * np.abs(p - q).sum(), abs=1e-12)  # 1 - TV
    r = sc.residual_distribution(p, q)
    assert np.all(r >= 0) and r.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.isfinite(r))
    assert np.all(r[p <= q] == 0) or sc.residual_mass(p, q) <= 1e-12


def test_residual_is_exactly_zero_where_p_equals_q_up_to_rounding():
    """p = (0, 2, 2, 1, 2)/7 sums to 1 - 1.1e-16 in floats; normalising it again moved
    p(x) one unit in the last place above q(x) = 2/7, which gave a residual of 4e-16
    to tokens where p = q (a falsifying example hypothesis found)."""
    p = np.array([0, 2, 2, 1, 2.0]) / 7
    q = np.array([0, 2, 2, 2, 1.0]) / 7
    np.testing.assert_array_equal(sc.residual_distribution(p, q), [0, 0, 0, 0, 1])
    assert sc.residual_mass(p, q) == pytest.approx(1 / 7, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_acceptance_probability_is_a_probability(p_x, q_x):
    a = sc.acceptance_probability(p_x, q_x)
    assert 0.0 <= a <= 1.0
    if p_x == 0:
        assert a == 0.0
    elif q_x <= p_x:
        assert a == 1.0


def test_edge_case_equal_distributions():
    p = np.array([0.25, 0.25, 0.5])
    assert sc.acceptance_rate(p, p) == 1.0
    assert sc.residual_mass(p, p) == 0.0
    np.testing.assert_array_equal(sc.residual_distribution(p, p), p)  # documented fallback


def test_edge_case_disjoint_supports():
    p, q = np.array([0.5, 0.5, 0, 0]), np.array([0, 0, 0.3, 0.7])
    assert sc.acceptance_rate(p, q) == 0.0
    np.testing.assert_allclose(sc.residual_distribution(p, q), p)
    np.testing.assert_array_equal(sc.acceptance_probability(p, q), [1.0, 1.0, 0.0, 0.0])


def test_edge_case_one_hot_vectors():
    e0, e1 = np.eye(3)[0], np.eye(3)[1]
    assert sc.acceptance_rate(e0, e0) == 1.0
    assert sc.acceptance_rate(e0, e1) == 0.0
    np.testing.assert_array_equal(sc.residual_distribution(e0, e1), e0)  # greedy: target's argmax


def test_edge_case_q_zero_where_p_positive():
    p, q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    np.testing.assert_array_equal(sc.acceptance_probability(p, q), [0.5, 1.0])
    np.testing.assert_array_equal(sc.residual_distribution(p, q), [0.0, 1.0])


def test_tiny_residual_mass_uses_the_fallback_not_noise():
    p = np.array([0.5, 0.5])
    q = np.array([0.5 + 1e-15, 0.5 - 1e-15])
    r = sc.residual_distribution(p, q)
    np.testing.assert_array_equal(r, p)


def test_acceptance_probability_rejects_non_probabilities():
    with pytest.raises(sc.InvalidParameterError, match=r"q\(x\) must be a probability"):
        sc.acceptance_probability(0.5, 1.5)
    with pytest.raises(sc.InvalidParameterError, match=r"p\(x\) must be a probability"):
        sc.acceptance_probability(float("nan"), 0.5)


def test_mismatched_lengths_are_named():
    with pytest.raises(sc.InvalidDistributionError, match="p has 2 entries but q has 3"):
        sc.acceptance_rate([0.5, 0.5], [0.2, 0.3, 0.5])
