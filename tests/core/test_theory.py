"""Closed-form speed: expected tokens, speedup, ms per token, optimal K."""

import numpy as np
import pytest

import specdec_core as sc


def test_expected_tokens_is_the_geometric_sum():
    for alpha in (0.0, 0.1, 0.5, 0.7, 0.99):
        for k in (1, 2, 5, 8):
            assert sc.expected_tokens(alpha, k) == pytest.approx(
                sum(alpha**i for i in range(k + 1))
            )


def test_expected_tokens_is_smooth_and_finite_near_one():
    alphas = 1 - np.logspace(-16, -1, 200)
    e = sc.expected_tokens(alphas, 7)
    assert np.all(np.isfinite(e)) and np.all(np.diff(e) <= 1e-9)  # decreasing in 1 - alpha
    assert e[0] == pytest.approx(8.0, abs=1e-9)
    assert sc.expected_tokens(1.0, 7) == 8.0


def test_theory_functions_vectorise_over_the_explorer_grid():
    alpha = np.linspace(0, 1, 200)[:, None]  # (200, 1)
    k = np.arange(1, 65)[None, :]  # (1, 64)
    s = sc.speedup(alpha, k, 1.0, 20.0)
    assert s.shape == (200, 64) and np.all(np.isfinite(s))
    np.testing.assert_allclose(s[-1], 20 * (k[0] + 1) / (k[0] + 20))  # ceiling at alpha = 1
    np.testing.assert_allclose(s[0], 20 / (k[0] + 20))  # floor at alpha = 0
    t = sc.time_per_token(alpha, k, 1.0, 20.0)
    np.testing.assert_allclose(t * s, 20.0)  # speedup = c_p / time per token


def test_optimal_k_picks_the_smallest_on_ties_and_vectorises():
    assert sc.optimal_k(0.0, 1.0, 10.0) == 1
    assert sc.optimal_k(0.0, 0.0, 10.0) == 1  # every K gives speedup 1: smallest wins
    assert sc.optimal_k(1.0, 0.0, 10.0, k_max=12) == 12
    got = sc.optimal_k(np.array([0.5, 0.7, 0.9]), 5.0, 40.0)
    assert got.tolist() == [
        int(np.argmax(sc.speedup(a, np.arange(1, 17), 5.0, 40.0))) + 1 for a in (0.5, 0.7, 0.9)
    ]


def test_corollary_3_9_bound_holds_on_a_grid():
    """Leviathan et al. 2023, Cor 3.9: if alpha > c, some K reaches (1 + alpha) / (1 + c)."""
    for alpha in np.linspace(0.05, 0.95, 19):
        for c in np.linspace(0.0, 0.9, 10):
            if alpha > c:
                best = sc.speedup(alpha, np.arange(1, 65), c, 1.0).max()
                assert best >= (1 + alpha) / (1 + c) - 1e-12


def test_tokens_per_round_law():
    law = sc.tokens_per_round_distribution([0.7] * 4)
    np.testing.assert_allclose(law, [0.3, 0.21, 0.147, 0.1029, 0.2401])
    assert law.sum() == pytest.approx(1.0)
    assert (np.arange(1, 6) * law).sum() == pytest.approx(sc.expected_tokens(0.7, 4))
    np.testing.assert_allclose(sc.tokens_per_round_distribution([1.0, 0.5]), [0, 0.5, 0.5])


@pytest.mark.parametrize(
    ("alpha", "c_q", "c_p", "limit"),
    [
        (1.0, 1.0, 10.0, 10.0),  # c = 0.1: the cap 1/c the Speedup explorer names
        (1.0, 0.0, 10.0, float("inf")),  # a free draft: K + 1 without limit
        (0.5, 0.0, 10.0, 2.0),  # free draft, alpha < 1: E -> 1 / (1 - alpha)
        (0.9, 5.0, 40.0, 0.0),  # a costly draft: the best K is finite
    ],
)
def test_speedup_limit_is_where_speedup_goes_as_k_grows(alpha, c_q, c_p, limit):
    assert sc.speedup_limit(alpha, c_q, c_p) == pytest.approx(limit)
    far = sc.speedup(alpha, 256, c_q, c_p)  # K = 256, the theory's largest K
    if limit == 0:  # falls like 1/K: below a slowdown already, and still falling
        assert far < sc.speedup(alpha, 128, c_q, c_p) < 1.0
    elif np.isfinite(limit):
        assert far == pytest.approx(limit, rel=0.05)
    else:
        assert far == 257.0
    if alpha == 1.0 and c_q > 0:  # a cap, approached from below and never passed
        assert sc.speedup(alpha, np.arange(1, 257), c_q, c_p).max() < limit


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sc.expected_tokens(1.2, 3), "alpha must lie in [0, 1]"),
        (lambda: sc.expected_tokens(float("nan"), 3), "alpha must lie in [0, 1]"),
        (lambda: sc.expected_tokens(0.5, 0), "K is out of range; allowed: 1 to 256"),
        (lambda: sc.expected_tokens(0.5, 2.5), "K must be a whole number"),
        (lambda: sc.speedup(0.5, 3, -1.0, 10.0), "c_q (cost of one draft step) must be"),
        (lambda: sc.speedup(0.5, 3, 1.0, 0.0), "c_p (cost of one target pass) must be"),
        (lambda: sc.optimal_k(0.5, 1.0, 10.0, k_max=1000), "k_max = 1000 is out of range"),
        (lambda: sc.speedup_limit(1.5, 1.0, 10.0), "alpha must lie in [0, 1]"),
        (lambda: sc.speedup_limit(0.5, 1.0, 0.0), "c_p (cost of one target pass) must be"),
    ],
)
def test_theory_input_errors(call, message):
    with pytest.raises(sc.InvalidParameterError) as err:
        call()
    assert message in str(err.value)
