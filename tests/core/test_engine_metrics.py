"""Engine acceptance metrics: AL, per-position rates, conditional rates, fitted alpha."""

import numpy as np
import pytest

import specdec_core as sc

P000 = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # seed 000's target
Q000 = np.array([0.30, 0.30, 0.15, 0.15, 0.10])  # seed 000's draft (alpha = 0.85)


# --- the published examples -----------------------------------------------------------


def test_llama_cpp_log_rates_give_al_2_92():
    """Serving notes: per-position rates 0.805, 0.632, 0.483 -> AL = 1 + 1.92 = 2.92."""
    m = sc.metrics_from_rates(sc.parse_rates("0.805, 0.632, 0.483"))
    assert m.k == 3 and m.rounds is None
    assert m.rates == (0.805, 0.632, 0.483)
    assert round(m.mean_acceptance_length, 2) == 2.92
    assert m.mean_acceptance_length == pytest.approx(2.92, abs=1e-12)
    assert m.draft_acceptance_rate == pytest.approx(1.92 / 3)
    assert m.conditional_rates == pytest.approx((0.805, 0.632 / 0.805, 0.483 / 0.632))
    # kept / checked: 1.92 kept per round, and 1 - 0.483 of the rounds checked one rejected draft
    assert m.fitted_alpha == pytest.approx(1.92 / (1.92 + 0.517))


def test_rates_typed_as_percentages_or_fractions_read_the_same():
    assert sc.parse_rates("80.5%; 63.2% 48.3%") == pytest.approx([0.805, 0.632, 0.483])
    assert sc.parse_rates("1/2, 1/4") == pytest.approx([0.5, 0.25])


def test_vllm_log_al_2_91_at_k_7_is_a_draft_acceptance_rate_of_0_273():
    assert round(sc.draft_acceptance_rate(2.91, 7), 3) == 0.273
    assert sc.draft_acceptance_rate(2.91, 7) == pytest.approx(1.91 / 7)
    # The same number from rates that add up to 1.91 over K = 7 positions.
    m = sc.metrics_from_rates([0.6, 0.4, 0.3, 0.25, 0.16, 0.12, 0.08])
    assert m.mean_acceptance_length == pytest.approx(2.91)
    assert round(m.draft_acceptance_rate, 3) == 0.273


# --- identities on hand-made vectors ---------------------------------------------------

HAND_MADE = [
    [1.0],
    [0.0],
    [0.9, 0.9, 0.9],
    [0.7, 0.3, 0.3, 0.1],
    [0.5, 0.0, 0.0],
    [1.0, 1.0, 0.2],
]


@pytest.mark.parametrize("rates", HAND_MADE)
def test_identities_of_any_rates(rates):
    m = sc.metrics_from_rates(rates)
    r = np.array(rates)
    assert m.mean_acceptance_length == pytest.approx(1.0 + r.sum())
    assert m.draft_acceptance_rate == pytest.approx((m.mean_acceptance_length - 1) / len(rates))
    assert m.fitted_alpha == pytest.approx(r.sum() / (r.sum() + 1 - r[-1]))
    assert 0.0 <= m.fitted_alpha <= 1.0
    # The conditional rates multiply back to the unconditional ones where they are defined.
    running = 1.0
    for rate, cond in zip(r, m.conditional_rates, strict=True):
        if cond is None:
            assert running == 0.0  # undefined only where no round reached the position
            continue
        running *= cond
        assert running == pytest.approx(rate)


def test_conditional_rate_is_none_after_a_zero_rate():
    m = sc.metrics_from_rates([0.5, 0.0, 0.0])
    assert m.conditional_rates == (0.5, 0.0, None)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5, 0.85, 0.99, 1.0])
@pytest.mark.parametrize("k", [1, 3, 7, 32])
def test_iid_rates_give_back_alpha_and_the_closed_form_length(alpha, k):
    """r_i = alpha^i: the fitted alpha is alpha exactly, AL = E(alpha, K), c_i = alpha."""
    m = sc.metrics_from_rates(alpha ** np.arange(1, k + 1))
    assert m.fitted_alpha == pytest.approx(alpha, abs=1e-12)
    assert m.mean_acceptance_length == pytest.approx(sc.expected_tokens(alpha, k), rel=1e-12)
    defined = [c for c in m.conditional_rates if c is not None]
    assert defined == pytest.approx([alpha] * len(defined))


def test_counts_histogram_and_per_round_give_the_metrics_of_their_rates():
    """Six rounds that kept 0, 1, 2, 3, 3, 0 drafts (K = 3), counted by hand.

    Kept at least 1: 4 rounds, at least 2: 3, all 3: 2 -> rates 4/6, 3/6, 2/6,
    AL = 1 + 9/6 = 2.5. Checked: the 9 kept plus one rejected in each of the 4 rounds
    that stopped early -> kept / checked = 9 / 13.
    """
    per_round = sc.metrics_from_accepted_per_round([0, 1, 2, 3, 3, 0], 3)
    histogram = sc.metrics_from_accepted_histogram([2, 1, 1, 2])
    counts = sc.metrics_from_position_counts([4, 3, 2], 6)
    assert per_round == histogram == counts
    assert counts.rounds == 6
    assert counts.rates == pytest.approx((4 / 6, 3 / 6, 2 / 6))
    assert counts.mean_acceptance_length == pytest.approx(2.5)
    assert counts.fitted_alpha == pytest.approx(9 / 13)
    assert counts.conditional_rates == pytest.approx((4 / 6, 3 / 4, 2 / 3))
    from_rates = sc.metrics_from_rates(counts.rates)
    assert from_rates.rounds is None
    for field in ("rates", "conditional_rates", "mean_acceptance_length", "fitted_alpha"):
        assert getattr(from_rates, field) == pytest.approx(getattr(counts, field))


def test_a_rate_above_the_one_before_within_rounding_is_accepted_and_capped():
    m = sc.metrics_from_rates([0.5, 0.5 + 0.5 * sc.RATE_TOLERANCE])
    assert m.rates == (0.5, 0.5) and m.conditional_rates == (0.5, 1.0)


# --- against the Monte Carlo ------------------------------------------------------------


def _within(rates, exact, n_rounds, z=5.0):
    """Each simulated rate within z binomial standard errors of its exact value."""
    exact = np.asarray(exact)
    se = np.sqrt(exact * (1 - exact) / n_rounds)
    return bool(np.all(np.abs(np.asarray(rates) - exact) <= z * se + 1e-12))


def test_monte_carlo_rates_match_alpha_to_the_i():
    n = 200_000
    result = sc.simulate_rounds(P000, Q000, 4, n, rng=np.random.default_rng(2024))
    m = sc.metrics_from_accepted_histogram(result.n_accepted_counts)
    alpha = sc.acceptance_rate(P000, Q000)
    assert m.rounds == n
    assert _within(m.rates, alpha ** np.arange(1, 5), n)
    assert m.conditional_rates == pytest.approx([alpha] * 4, abs=0.01)
    # Exact identities on the same counts: AL is the mean round length, alpha_hat is kept/checked.
    assert m.mean_acceptance_length == pytest.approx(result.mean_tokens_per_round, rel=1e-12)
    assert m.mean_acceptance_length == pytest.approx(result.tokens_per_round.mean(), rel=1e-12)
    assert m.fitted_alpha == pytest.approx(result.drafted_accepted_fraction, rel=1e-12)
    assert m.fitted_alpha == pytest.approx(alpha, abs=0.005)


def test_monte_carlo_rates_match_the_product_of_per_position_alphas():
    rng = np.random.default_rng(7)
    k, n = 3, 200_000
    p_rows = rng.dirichlet(np.ones(6), size=k + 1)
    q_rows = rng.dirichlet(np.ones(6), size=k)
    result = sc.simulate_rounds(p_rows, q_rows, k, n, rng=np.random.default_rng(8))
    m = sc.metrics_from_accepted_histogram(result.n_accepted_counts)
    alphas = np.minimum(p_rows[:k], q_rows).sum(axis=1)  # (K,)
    assert _within(m.rates, np.cumprod(alphas), n)


def test_the_rate_check_has_power_against_a_rule_that_keeps_at_another_rate():
    """The same check on a broken rule (keep iff p >= q: 0.45 per draft) fails."""
    n = 200_000
    broken = sc.simulate_rounds(
        P000, Q000, 4, n, rng=np.random.default_rng(2024), variant="accept_if_p_ge_q"
    )
    m = sc.metrics_from_accepted_histogram(broken.n_accepted_counts)
    assert not _within(m.rates, sc.acceptance_rate(P000, Q000) ** np.arange(1, 5), n)
    assert _within(m.rates, 0.45 ** np.arange(1, 5), n)


def test_per_round_counts_of_a_run_give_its_metrics():
    result = sc.simulate_rounds(P000, Q000, 3, 20_000, rng=np.random.default_rng(5))
    per_round = sc.metrics_from_accepted_per_round(result.n_accepted, 3)
    assert per_round == sc.metrics_from_accepted_histogram(result.n_accepted_counts)


# --- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.5, 0.7", "rates: position 2 (0.7) is above position 1 (0.5)"),
        ("0.5 abc", "rates: entry 2 ('abc') is not a number"),
        ("0.8, 1.2", "rates: entry 2 ('1.2') is 1.2; a rate is a share of rounds, between 0 and 1"),
        ("-0.1", "entry 1 ('-0.1') is -0.1; a rate is a share of rounds"),
        ("0.5, nan", "entry 2 ('nan') is not a finite number"),
        ("", "rates: is empty; type one rate per draft position"),
        (", ".join(["0.1"] * 33), "has 33 entries; at most 32 positions are allowed"),
        ("0.1" * 1000, "at most 2,000 are allowed"),
    ],
)
def test_parse_rates_messages(text, message):
    with pytest.raises(sc.SpecDecError) as err:
        sc.parse_rates(text)
    assert message in str(err.value)


def test_parse_counts_reads_an_engines_counters():
    counts = sc.parse_counts("805, 632; 483")
    assert counts.tolist() == [805.0, 632.0, 483.0]
    m = sc.metrics_from_position_counts(counts, 1000)
    assert m.rates == pytest.approx([0.805, 0.632, 0.483])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("805, 63.5", "counts: position 2 is 63.5; counts are whole numbers >= 0"),
        ("805, -1", "counts: position 2 is -1; counts are whole numbers >= 0"),
        ("805 many", "counts: entry 2 ('many') is not a number"),
        ("  ", "counts: is empty; type one count per draft position"),
        (" ".join(["1"] * 33), "has 33 entries; at most 32 positions are allowed"),
    ],
)
def test_parse_counts_messages(text, message):
    with pytest.raises(sc.SpecDecError) as err:
        sc.parse_counts(text)
    assert message in str(err.value)


def test_increasing_rates_are_refused_with_a_hint_about_conditional_rates():
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.metrics_from_rates([0.8, 0.7, 0.75])
    assert "position 3 (0.75) is above position 2 (0.7)" in str(err.value)
    assert "Conditional rates" in str(err.value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sc.metrics_from_rates([]), "rates: has 0 positions; between 1 and 32"),
        (lambda: sc.metrics_from_rates([[0.5]]), "one number per draft position"),
        (lambda: sc.metrics_from_rates(["x"]), "rates: not a list of numbers"),
        (lambda: sc.metrics_from_rates([0.5, np.inf]), "position 2 is inf"),
        (lambda: sc.metrics_from_rates([1.5]), "position 1 is 1.5; a rate is a share"),
        (lambda: sc.metrics_from_position_counts([5, 2], 0), "n_rounds = 0 is out of range"),
        (lambda: sc.metrics_from_position_counts([5, 2], 3.0), "n_rounds must be a whole"),
        (lambda: sc.metrics_from_position_counts([5, 2], 4), "position 1 is 5, more than the 4"),
        (lambda: sc.metrics_from_position_counts([2, 2.5], 4), "position 2 is 2.5; counts are"),
        (lambda: sc.metrics_from_position_counts([2, 3], 4), "position 2 (3) is above position"),
        (lambda: sc.metrics_from_accepted_histogram([3]), "one count per number of kept drafts"),
        (lambda: sc.metrics_from_accepted_histogram([0, 0]), "no rounds counted"),
        (lambda: sc.metrics_from_accepted_histogram([1, -1]), "entry 1 (rounds that kept 1"),
        (lambda: sc.metrics_from_accepted_per_round([0, 5], 4), "round 2 kept 5 drafts"),
        (lambda: sc.metrics_from_accepted_per_round([], 4), "at least one round"),
        (lambda: sc.metrics_from_accepted_per_round([1], 33), "K = 33 is out of range"),
        (lambda: sc.draft_acceptance_rate(9.0, 7), "between 1 and K + 1 = 8"),
        (lambda: sc.draft_acceptance_rate("2.9", 7), "must be a number"),
    ],
)
def test_bad_input_names_the_entry_and_what_is_allowed(call, message):
    with pytest.raises(sc.SpecDecError) as err:
        call()
    assert message in str(err.value)


# --- vLLM's four counters: accepted / draft tokens beside (AL - 1) / K -------------------


def test_vllm_counters_with_full_length_drafts_give_one_draft_acceptance_rate():
    """1,000 rounds of K = 3 drafts (3,000 draft tokens), 805 + 632 + 483 kept: vLLM's
    accepted / draft tokens = 1920 / 3000 = 0.64 = (AL - 1) / K."""
    m = sc.metrics_from_vllm_counters(1_000, 3_000, 1_920, [805, 632, 483])
    assert m.rounds == 1_000 and m.draft_tokens == 3_000 and m.accepted_tokens == 1_920
    assert m.mean_acceptance_length == pytest.approx(2.92)
    assert m.accepted_per_drafted == pytest.approx(0.64) == m.draft_acceptance_rate
    assert m.mean_drafted == 3.0


def test_vllm_counters_with_shorter_drafts_differ_from_al_minus_1_over_k():
    """An n-gram draft proposes 0..K tokens: 2,400 draft tokens in 1,000 rounds of K = 3.
    (AL - 1) / K = 1.45 / 3 = 0.483 counts the 600 drafts never proposed as rejected; vLLM's
    "Avg Draft acceptance rate" = 1,450 / 2,400 = 0.604."""
    m = sc.metrics_from_vllm_counters(1_000, 2_400, 1_450, [700, 450, 300])
    assert m.mean_acceptance_length == pytest.approx(2.45)
    assert m.draft_acceptance_rate == pytest.approx(1.45 / 3)
    assert m.accepted_per_drafted == pytest.approx(1_450 / 2_400)
    assert m.mean_drafted == pytest.approx(2.4)
    # rates alone (no counters) can only give (AL - 1) / K
    rates = sc.metrics_from_rates(m.rates)
    assert rates.accepted_per_drafted == rates.draft_acceptance_rate


def test_vllm_counters_from_the_run_of_the_model_pair_engine_agree_with_per_round_counts():
    """The same numbers from per-round kept counts (every round drafts K)."""
    per_round = [0, 3, 1, 2, 3, 0, 1]
    m = sc.metrics_from_accepted_per_round(per_round, 3)
    counters = sc.metrics_from_vllm_counters(
        7, 21, sum(per_round), [sum(n >= i for n in per_round) for i in (1, 2, 3)]
    )
    assert counters.rates == pytest.approx(m.rates)
    assert counters.accepted_per_drafted == pytest.approx(m.draft_acceptance_rate)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1_000, 3_000, 1_900, [805, 632, 483]), "num_accepted_tokens = 1,900 but the"),
        ((1_000, 1_800, 1_920, [805, 632, 483]), "num_draft_tokens = 1,800; allowed: from the"),
        ((1_000, 3_001, 1_920, [805, 632, 483]), "to num_drafts x K = 3,000 (K = 3"),
        ((0, 0, 0, [0]), "num_drafts = 0; at least 1 round"),
        ((1_000, -1, 0, [0]), "num_draft_tokens = -1; a counter is a whole number >= 0"),
        ((1_000, 3_000, 1.5, [1]), "num_accepted_tokens = 1.5"),
        ((10, 30, 25, [11, 9, 5]), "num_accepted_tokens_per_pos: position 1 is 11, more than"),
        ((10, 30, 9, [2, 7]), "num_accepted_tokens_per_pos: position 2 (7) is above"),
    ],
)
def test_vllm_counters_that_cannot_come_from_one_run_are_refused(args, message):
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.metrics_from_vllm_counters(*args)
    assert message in str(err.value)
