"""Vectorised simulation of the variants: chi-square losslessness, bias of typical acceptance."""

import math

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import variants as vr
from specdec_core.rules import RULES, rules_of_kind

P000 = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q000 = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
FLAT = np.full(5, 0.2)
Q_PEAKED = np.array([0.6, 0.1, 0.1, 0.1, 0.1])


def _run(variant, p=P000, q=Q000, k=3, n=100_000, seed=0, **options):
    return sc.simulate_rounds(
        p, q, k, n, rng=np.random.default_rng(seed), variant=variant, **options
    )


@pytest.mark.parametrize("m", [1, 2, 4])
def test_multi_draft_is_lossless_and_its_round_lengths_follow_beta(m):
    result = _run("multi_draft", n_candidates=m)
    report = sc.losslessness_test(result, significance=1e-3)
    assert report.passed, (report.tokens.p_value, report.tokens_per_round.p_value)
    beta = vr.multidraft_acceptance(P000, Q000, m)
    np.testing.assert_allclose(result.alphas, beta)
    assert result.tokens_per_round.mean() == pytest.approx(sum(beta**i for i in range(4)), abs=0.02)


def test_multi_draft_with_one_candidate_matches_the_basic_simulator_in_law():
    """m = 1 is the basic algorithm: same mean tokens per round as simulate_rounds."""
    ours = _run("multi_draft", n_candidates=1, n=200_000)
    basic = sc.simulate_rounds(P000, Q000, 3, 200_000, rng=np.random.default_rng(1))
    se = math.sqrt(ours.tokens_per_round.var() / 200_000 + basic.tokens_per_round.var() / 200_000)
    assert abs(ours.tokens_per_round.mean() - basic.tokens_per_round.mean()) < 5 * se


def test_broken_multi_draft_fails_the_same_test():
    result = _run("multi_draft_no_residual", n_candidates=3)
    report = sc.losslessness_test(result, significance=1e-3)
    assert report.tokens.p_value < 1e-6


def test_typical_acceptance_is_detected_as_lossy_and_faster():
    typical = _run("typical_acceptance", p=FLAT, q=Q_PEAKED, n=50_000)
    report = sc.losslessness_test(typical, significance=1e-3)
    assert report.tokens.p_value < 1e-6
    assert typical.tokens_per_round.mean() == 4.0  # flat p: every draft passes, K + 1 always
    basic = sc.simulate_rounds(FLAT, Q_PEAKED, 3, 50_000, rng=np.random.default_rng(2))
    assert basic.tokens_per_round.mean() < 3.0  # alpha = 0.6: (1 - 0.6^4) / 0.4 = 2.18


@pytest.mark.parametrize("after", ["argmax", "truncated_sample"])
def test_typical_measured_tv_is_within_noise_of_the_exact(after):
    """Position 1 of every round is a drafted position: its tokens follow the exact law e."""
    n = 200_000
    result = _run("typical_acceptance", n=n, after_rejection=after)
    exact = sc.emitted_distribution("typical_acceptance", P000, Q000, after_rejection=after)
    measured = result.position_counts[0] / n
    noise = np.sqrt(exact * (1 - exact) / n).sum()  # sd of sum |e_hat - e|, roughly
    tv_exact = vr.total_variation(exact, P000)
    assert abs(0.5 * np.abs(measured - P000).sum() - tv_exact) < 4 * noise
    assert sc.chi_square_test(result.position_counts[0], exact).p_value > 1e-3


def test_typical_default_parameters_are_medusas():
    assert (vr.MEDUSA_EPSILON, vr.MEDUSA_DELTA) == (0.09, 0.3)
    result = _run("typical_acceptance", n=1000)
    np.testing.assert_allclose(result.alphas, vr.typical_keep_rate(P000, Q000))


def test_results_have_the_shape_of_simulate_rounds():
    result = _run("multi_draft", n=1000, n_candidates=3)
    assert result.emitted_counts.shape == (5,)
    assert result.tokens_per_round.shape == (1000,)
    assert result.emitted_counts.sum() == result.tokens_per_round.sum()
    same = _run("multi_draft", n=1000, n_candidates=3)
    np.testing.assert_array_equal(result.position_counts, same.position_counts)  # seeded


def test_depth_dependent_rows_and_progress():
    p_rows = np.array([P000, FLAT, P000, FLAT])
    q_rows = np.array([Q000, Q_PEAKED, Q000])
    seen = []
    result = sc.simulate_rounds(
        p_rows,
        q_rows,
        3,
        70_000,
        rng=np.random.default_rng(4),
        variant="multi_draft",
        n_candidates=2,
        progress=seen.append,
    )
    assert sc.losslessness_test(result).passed
    assert seen[-1] == 1.0 and len(seen) >= 2


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"variant": "nope"}, "unknown"),
        ({"n_candidates": 0}, "1 to 16"),
        ({"epsilon": 2.0, "variant": "typical_acceptance"}, r"\(0, 1\]"),
        ({"k": 0}, "K = 0"),
        ({"n": 0}, "n_rounds"),
        ({"q": Q000[:4] / Q000[:4].sum()}, "must match"),
        ({"epsilon": 0.1}, "do not apply to variant 'multi_draft'"),
        ({"variant": "correct", "n_candidates": 2}, "allowed: none"),
    ],
)
def test_bad_arguments_raise_named_errors(kwargs, fragment):
    args = {"variant": "multi_draft", "p": P000, "q": Q000, "k": 3, "n": 10} | kwargs
    with pytest.raises(sc.SpecDecError, match=fragment):
        sc.simulate_rounds(
            args["p"],
            args["q"],
            args["k"],
            args["n"],
            rng=np.random.default_rng(0),
            variant=args["variant"],
            **{k: v for k, v in kwargs.items() if k in ("n_candidates", "epsilon")},
        )


def test_the_lab_menu_is_untouched():
    lab = [r.name for r in rules_of_kind(lab="losslessness")]
    assert {"multi_draft", "multi_draft_no_residual", "typical_acceptance"}.isdisjoint(lab)
    assert RULES["multi_draft"].lossless and not RULES["typical_acceptance"].lossless
    assert RULES["multi_draft_no_residual"].breaks == "multi_draft"


def test_multi_draft_and_correct_share_the_chunk_loop_and_its_memory_bound():
    """2^16-round chunks: a run just past one chunk still counts every round once."""
    n = (1 << 16) + 7
    result = _run("multi_draft", n=n, n_candidates=2)
    assert result.tokens_per_round_counts.sum() == n
    assert result.position_counts[0].sum() == n


def test_per_position_widths_simulate_a_token_tree():
    """Widths (3, 1): E = 1 + beta_3 + beta_3 * alpha (tree_expected_tokens), still lossless."""
    from specdec_core import variants_tree as vt

    result = _run("multi_draft", k=2, n=100_000, n_candidates=(3, 1))
    assert sc.losslessness_test(result).passed
    expected = vt.tree_expected_tokens(P000, Q000, (3, 1))
    se = result.tokens_per_round.std() / np.sqrt(100_000)
    assert abs(result.tokens_per_round.mean() - expected) < 4 * se
    with pytest.raises(sc.InvalidParameterError, match="one per position"):
        _run("multi_draft", k=2, n=10, n_candidates=(3, 1, 1))


def _column_samples(dist_rows, u):
    """Column j of ``u`` (n, J) through the run's sampler of row j (how the chunks read it)."""
    from specdec_core import montecarlo as mc

    sampler = mc.row_sampler(dist_rows)
    columns = [sampler.column(j, np.ascontiguousarray(col)) for j, col in enumerate(u.T)]
    return np.stack(columns, axis=1)


def _binary_search_samples(dist_rows, u):
    """Reference inverse CDF: min(#{t : cdf[t] <= u * total}, last positive token)."""
    cdf = np.cumsum(dist_rows, axis=1)
    out = np.empty(u.shape, dtype=np.intp)
    for j, c in enumerate(cdf):
        last = np.flatnonzero(dist_rows[j] > 0)[-1]
        out[:, j] = np.minimum(np.searchsorted(c, u[:, j] * c[-1], side="right"), last)
    return out


@pytest.mark.parametrize("v", [1, 3, 64, 500])
def test_lookup_sampler_gives_the_binary_search_token_for_every_uniform(v):
    """The candidates' fast sampler is the same map u -> token as a CDF search.

    Rows with zeros (also trailing), a one-hot row, and uniforms at 0, just
    below 1 and exactly on bucket edges k / 2^LOOKUP_BITS.
    """
    from specdec_core import montecarlo as mc

    rng = np.random.default_rng(v)
    rows = rng.dirichlet(np.full(v, 0.3), size=5)  # (5, V)
    rows[:, rng.random(v) < 0.3] = 0.0
    rows[:, 0] += 1e-12
    rows[2] = 0.0
    rows[2, v // 2] = 1.0
    rows /= rows.sum(axis=1, keepdims=True)
    u = rng.random((4000, 5))
    u[:3], u[3:6] = 0.0, np.nextafter(1.0, 0.0)
    u[6:1000] = np.floor(rng.random((994, 5)) * 2**mc.LOOKUP_BITS) / 2**mc.LOOKUP_BITS
    np.testing.assert_array_equal(_column_samples(rows, u), _binary_search_samples(rows, u))
    if v > 1:  # the check can fail: shifted uniforms give other tokens
        shifted = np.minimum(u + 1e-3, np.nextafter(1.0, 0.0))
        assert (_column_samples(rows, shifted) != _binary_search_samples(rows, u)).any()
