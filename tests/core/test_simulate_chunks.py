"""simulate_rounds in chunks: bounded memory, exact reproduction, one variant registry."""

import dataclasses
import tracemalloc

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import montecarlo as mc
from specdec_core import rules, simulate

P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])


def _peak_bytes(n_rounds: int) -> int:
    tracemalloc.start()
    try:
        sc.simulate_rounds(P, Q, 3, n_rounds, rng=np.random.default_rng(0))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_number_of_rounds():
    chunk = simulate.CHUNK_ROUNDS
    small, large = _peak_bytes(chunk), _peak_bytes(10 * chunk)
    # Per-round arrays (2 bytes a round each) would add > 2 MB to a ~6 MB peak here.
    assert large < 1.15 * small, (small, large)


def test_a_seed_reproduces_a_run_exactly_and_another_seed_does_not():
    n = simulate.CHUNK_ROUNDS + 1234  # two chunks, the second one partial
    a, b, c = (
        sc.simulate_rounds(P, Q, 4, n, rng=np.random.default_rng(seed)) for seed in (7, 7, 8)
    )
    for field in ("position_counts", "n_accepted_counts", "tokens_per_round_counts"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.position_counts, c.position_counts)


def test_counts_agree_with_each_other():
    result = sc.simulate_rounds(P, Q, 3, 30_000, rng=np.random.default_rng(4), variant="no_bonus")
    assert result.n_accepted_counts.sum() == result.n_rounds
    assert result.tokens_per_round_counts.sum() == result.n_rounds
    assert result.tokens_per_round_counts[0] == 0  # every round emits a token
    # tokens emitted = sum of round lengths = sum over positions of rounds reaching them
    lengths = np.arange(result.k_drafts + 2)
    assert (lengths * result.tokens_per_round_counts).sum() == result.position_counts.sum()
    # the per-round views hold the same histograms
    np.testing.assert_array_equal(
        np.bincount(result.n_accepted, minlength=4), result.n_accepted_counts
    )
    assert result.tokens_per_round.size == result.n_rounds


def test_one_chunk_step_by_step_on_hand_checked_tables():
    """p = (0, 1), q = (1/2, 1/2), K = 1: A(x=0) = 0, A(x=1) = 1; residual = (0, 1)."""
    tables = mc.correct_tables(np.array([[0.0, 1.0], [0.25, 0.75]]), np.array([[0.5, 0.5]]))
    np.testing.assert_allclose(tables.accept, [[0.0, 1.0]])
    np.testing.assert_allclose(tables.final_rows, [[0.0, 1.0], [0.25, 0.75]])
    # verify: with keep chances 0 and 1 no coin matters: a round keeps its draft iff it is 1
    chunk = mc.rounds_chunk(tables, 1_000, np.random.default_rng(0))
    np.testing.assert_array_equal(chunk.n_accepted, chunk.drafts[0] == 1)
    assert 0 < chunk.n_accepted.sum() < 1_000
    # final tokens: round 0 resamples the residual (token 1); bonus rows use (1/4, 3/4)
    n_accepted = np.array([0, 1, 1])
    last = tables.final_sampler.by_row(n_accepted, np.array([0.1, 0.2, 0.3]))
    assert last.tolist() == [1, 0, 1]
    outcome = mc.ChunkOutcome(
        n_accepted=n_accepted, drafts=np.array([[0, 1, 1]]), last=last, vocab=2
    )
    assert outcome.emitted.tolist() == [[1, 2], [1, 0], [1, 1]]
    counts = mc.count_step(outcome, vocab=2)
    assert counts.position_counts.tolist() == [[0, 3], [1, 1]]
    assert counts.tokens_per_round_counts.tolist() == [0, 1, 2]


def test_variant_vocabulary_is_defined_once():
    assert sc.RULES is rules.RULES
    assert sc.RULES["strict"].lossless


@pytest.mark.parametrize("variant", [r.name for r in rules.rules_of_kind(lab="losslessness")])
def test_every_registered_variant_runs_through_the_same_chunk_loop(variant):
    result = sc.simulate_rounds(P, Q, 2, 5_000, rng=np.random.default_rng(1), variant=variant)
    assert result.variant == variant and result.position_counts.shape == (3, 5)
    assert result.tokens_per_round_counts.sum() == 5_000


def test_options_a_variant_does_not_declare_are_refused():
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.simulate_rounds(P, Q, 2, 100, rng=np.random.default_rng(0), n_candidates=2)
    assert str(err.value) == (
        "option(s) n_candidates do not apply to variant 'correct'; allowed: none."
    )


def test_a_new_variant_plugs_in_with_tables_a_chunk_and_an_option():
    """The extension point: a lossy rule min(1, scale * p / q) with an option ``scale``."""

    def scaled_tables(p_rows, q_rows, *, scale=1.0):
        right = mc.correct_tables(p_rows, q_rows)
        accept = np.minimum(1.0, scale * right.accept)
        keep = (accept * q_rows).sum(axis=1)
        return mc.RoundTables(p_rows, q_rows, accept, right.final_rows, keep)

    correct = sc.RULES["correct"]
    variant = dataclasses.replace(
        correct,
        name="scaled",
        kind=rules.RuleKind.LOSSY_BY_DESIGN,
        tables=scaled_tables,
        chunk=mc.rounds_chunk,
        options=("scale",),
    )
    sc.register_rule(variant)
    try:
        run = {"rng": np.random.default_rng(3), "variant": "scaled"}
        exact = sc.simulate_rounds(P, Q, 3, 50_000, **run, scale=1.0)
        lossy = sc.simulate_rounds(P, Q, 3, 50_000, **run, scale=3.0)
        with pytest.raises(
            sc.InvalidParameterError,
            match="option.s. size do not apply to variant 'scaled'; allowed: scale",
        ):
            sc.simulate_rounds(P, Q, 3, 10, **run, size=2)
    finally:
        sc.unregister_rule("scaled")
    assert exact.options == {"scale": 1.0} and sc.losslessness_test(exact).passed
    assert sc.losslessness_test(lossy).tokens.p_value < 1e-12
    assert "scaled" not in sc.RULES
