"""Statistical losslessness of the Monte Carlo, and the power to catch bugs.

All tests are seeded (deterministic). Significance 1e-3; sample sizes are
chosen so that every broken variant is caught by a wide margin.
"""

import numpy as np
import pytest
from scipy.stats import kstest

import specdec_core as sc
from specdec_core import rules

P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
PAIRS = {
    "seed-000": (P, Q, 4),
    "far-apart": (np.array([0.7, 0.2, 0.1, 0.0]), np.array([0.1, 0.2, 0.3, 0.4]), 3),
    "q-misses-a-token": (np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4, 0.0]), 6),
    "one-hot-target": (np.array([0.0, 1.0, 0.0]), np.array([0.5, 0.25, 0.25]), 2),
}
BROKEN = [r.name for r in rules.rules_of_kind(rules.RuleKind.BUG_OF, lab="losslessness")]


@pytest.mark.parametrize("name", PAIRS)
def test_correct_sampler_is_lossless(name):
    p, q, k = PAIRS[name]
    result = sc.simulate_rounds(p, q, k, 50_000, rng=np.random.default_rng(11))
    report = sc.losslessness_test(result)
    assert report.passed, (report.tokens.p_value, report.tokens_per_round.p_value)
    freq = result.emitted_counts / result.emitted_counts.sum()
    np.testing.assert_allclose(freq, p, atol=0.01)


def test_per_position_rows_are_lossless_position_by_position():
    rng = np.random.default_rng(5)
    k, v = 3, 6
    p_rows = rng.dirichlet(np.ones(v), size=k + 1)
    q_rows = rng.dirichlet(np.ones(v), size=k)
    result = sc.simulate_rounds(p_rows, q_rows, k, 60_000, rng=np.random.default_rng(6))
    assert sc.losslessness_test(result).passed
    for j in range(k + 1):
        if result.reached[j] > 2000:
            freq = result.position_counts[j] / result.reached[j]
            np.testing.assert_allclose(freq, p_rows[j], atol=0.03)


def test_tokens_per_round_law_and_its_mean():
    alpha = sc.acceptance_rate(P, Q)
    result = sc.simulate_rounds(P, Q, 4, 100_000, rng=np.random.default_rng(3))
    hist = np.bincount(result.n_accepted, minlength=5) / result.n_rounds
    law = np.array([alpha**n * (1 - alpha) for n in range(4)] + [alpha**4])
    np.testing.assert_allclose(hist, law, atol=0.006)
    se = result.tokens_per_round.std() / np.sqrt(result.n_rounds)
    assert abs(result.tokens_per_round.mean() - sc.expected_tokens(alpha, 4)) < 4 * se
    assert result.drafted_accepted_fraction == pytest.approx(alpha, abs=0.005)


@pytest.mark.parametrize("variant", BROKEN)
def test_every_broken_variant_is_caught(variant):
    p, q, k = PAIRS["seed-000"]
    result = sc.simulate_rounds(p, q, k, 50_000, rng=np.random.default_rng(11), variant=variant)
    report = sc.losslessness_test(result)
    assert not report.passed
    worst = min(report.tokens.p_value, report.tokens_per_round.p_value)
    assert worst < 1e-12  # caught by a wide margin, not by luck


def test_no_bonus_is_unbiased_but_fails_the_round_length_law():
    result = sc.simulate_rounds(P, Q, 4, 50_000, rng=np.random.default_rng(2), variant="no_bonus")
    report = sc.losslessness_test(result)
    assert report.tokens.p_value > 1e-3
    assert report.tokens_per_round.p_value < 1e-12
    assert result.tokens_per_round.max() == 4


def test_false_alarm_rate_is_calibrated():
    """Over 40 seeds the correct sampler's p-values look uniform (the test is honest)."""
    p_values = [
        sc.losslessness_test(
            sc.simulate_rounds(P, Q, 3, 5_000, rng=np.random.default_rng(s))
        ).tokens.p_value
        for s in range(40)
    ]
    assert min(p_values) > 1e-3
    assert kstest(p_values, "uniform").pvalue > 1e-3


def test_simulation_is_reproducible_and_reports_progress():
    seen = []
    a = sc.simulate_rounds(P, Q, 2, 150_000, rng=np.random.default_rng(9), progress=seen.append)
    b = sc.simulate_rounds(P, Q, 2, 150_000, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a.position_counts, b.position_counts)
    assert seen[-1] == 1.0 and len(seen) == 3 and seen == sorted(seen)


def test_large_vocabulary_uses_the_same_sampler():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(100)), rng.dirichlet(np.ones(100))
    result = sc.simulate_rounds(p, q, 2, 40_000, rng=np.random.default_rng(1))
    assert sc.losslessness_test(result).passed
    broken = sc.simulate_rounds(
        p, q, 2, 40_000, rng=np.random.default_rng(1), variant="resample_from_p"
    )
    assert not sc.losslessness_test(broken).passed


def test_chi_square_test_handles_impossible_and_sparse_cells():
    impossible = sc.chi_square_test([10, 5, 1], [0.5, 0.5, 0.0])
    assert impossible.statistic == float("inf") and impossible.p_value == 0.0
    sparse = sc.chi_square_test([50, 48, 1, 1], [0.49, 0.49, 0.01, 0.01])
    # The two cells with E < 5 are pooled (E = 2, still < 5) into the smallest large cell.
    assert sparse.dof == 1 and sparse.statistic == pytest.approx(1 / 49 + 1 / 51)
    assert sc.chi_square_test([3], [1.0]).p_value == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_rounds": 0}, "n_rounds = 0 is out of range; allowed: 1 to 2,000,000"),
        ({"n_rounds": 10**9}, "n_rounds = 1000000000 is out of range"),
        ({"n_rounds": 1.5}, "n_rounds must be a whole number"),
        ({"variant": "oops"}, "variant 'oops' is unknown"),
        ({"k": 0}, "K = 0 is out of range"),
        ({"p": [0.5, 0.5]}, "p has 2 entries but q has 5"),
    ],
)
def test_simulation_input_errors(kwargs, message):
    args = {"p": P, "q": Q, "k": 2, "n_rounds": 100, **kwargs}
    with pytest.raises(sc.SpecDecError) as err:
        sc.simulate_rounds(
            args.pop("p"),
            args.pop("q"),
            args.pop("k"),
            args.pop("n_rounds"),
            rng=np.random.default_rng(0),
            **args,
        )
    assert message in str(err.value)
