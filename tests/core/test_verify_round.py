"""verify_round: the decisions of one round, its inputs and its randomness."""

import numpy as np
import pytest

import specdec_core as sc

P = [0.40, 0.25, 0.20, 0.10, 0.05]
Q = [0.30, 0.30, 0.15, 0.15, 0.10]


def rows(k):
    return sc.broadcast_rows(P, Q, k)


def test_coin_rule_is_strictly_less_than():
    p_rows, q_rows = rows(1)
    a = 0.25 / 0.30
    kept = sc.verify_round(p_rows, q_rows, [1], uniforms=[np.nextafter(a, 0)], final_token=0)
    lost = sc.verify_round(p_rows, q_rows, [1], uniforms=[a], final_token=0)
    assert kept.n_accepted == 1 and kept.final_kind == "bonus"
    assert lost.n_accepted == 0 and lost.final_kind == "resample"


def test_steps_stop_at_the_first_rejection():
    p_rows, q_rows = rows(4)
    r = sc.verify_round(p_rows, q_rows, [1, 1, 1, 1], uniforms=[0.1, 0.9, 0.1, 0.1], final_token=0)
    assert [s.position for s in r.steps] == [0, 1]
    assert [s.accepted for s in r.steps] == [True, False]
    assert r.discarded_positions == (2, 3)
    assert r.emitted_tokens == (1, 0) and r.final_position == 1


def test_seeded_rng_replays_the_same_round():
    p_rows, q_rows = rows(3)
    a = sc.verify_round(p_rows, q_rows, [0, 1, 3], rng=np.random.default_rng(7))
    b = sc.verify_round(p_rows, q_rows, [0, 1, 3], rng=np.random.default_rng(7))
    assert a.steps == b.steps and a.emitted_tokens == b.emitted_tokens
    assert a.final_coin == b.final_coin is not None
    c = sc.verify_round(p_rows, q_rows, [0, 1, 3], rng=np.random.default_rng(8))
    assert [s.coin for s in c.steps] != [s.coin for s in a.steps]


def test_partial_coins_are_completed_from_the_rng_and_missing_rng_is_named():
    p_rows, q_rows = rows(3)
    r = sc.verify_round(p_rows, q_rows, [0, 0, 0], uniforms=[0.5], rng=np.random.default_rng(1))
    assert r.steps[0].coin == 0.5 and r.n_emitted == 4
    with pytest.raises(sc.InvalidParameterError, match="the coin for position 2 is needed"):
        sc.verify_round(p_rows, q_rows, [0, 1, 1], uniforms=[0.5])


def test_draft_token_with_zero_q_is_refused():
    p_rows, q_rows = sc.broadcast_rows([0.5, 0.5], [1.0, 0.0], 1)
    with pytest.raises(sc.InvalidParameterError, match=r"position 1 \(id 1\) has q = 0"):
        sc.verify_round(p_rows, q_rows, [1], uniforms=[0.5], final_token=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"draft_tokens": [0, 5]}, "draft token at position 2 is 5; token ids run from 0 to 4"),
        ({"draft_tokens": [0]}, "got 1 tokens for K = 2"),
        ({"uniforms": [0.5, 1.0]}, "coin 2 is 1.0; coins lie in [0, 1)"),
        ({"uniforms": [0.1, 0.2, 0.3]}, "got 3 coins for K = 2"),
        (
            {"final_token": 4, "uniforms": [0.1, 0.99]},
            "final token 4 has probability 0 under the resample",
        ),
    ],
)
def test_bad_round_inputs(kwargs, message):
    p_rows, q_rows = rows(2)
    args = {"draft_tokens": [0, 1], "uniforms": [0.1, 0.1], "final_token": 0, **kwargs}
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.verify_round(p_rows, q_rows, args.pop("draft_tokens"), **args)
    assert message in str(err.value)


def test_row_shapes_are_checked_and_rows_named():
    p_rows, q_rows = rows(2)
    with pytest.raises(sc.InvalidDistributionError, match=r"expected shape \(3, 5\)"):
        sc.verify_round(p_rows[:2], q_rows, [0, 1], rng=np.random.default_rng(0))
    bad = q_rows.copy()
    bad[1, 0] = 0.9
    with pytest.raises(sc.InvalidDistributionError, match="q at position 2: entries sum to 1.6"):
        sc.verify_round(p_rows, bad, [0, 1], rng=np.random.default_rng(0))
    with pytest.raises(sc.InvalidParameterError, match="K = 17 is out of range"):
        p17, q17 = np.tile(P, (18, 1)), np.tile(Q, (17, 1))
        sc.verify_round(p17, q17, [0] * 17, rng=np.random.default_rng(0))


def test_ragged_draft_rows_get_a_clear_error():
    p_rows, _ = rows(2)
    with pytest.raises(sc.InvalidDistributionError, match="q_rows: not a table of numbers"):
        sc.verify_round(p_rows, [[0.5, 0.5], [1.0]], [0, 0], rng=np.random.default_rng(0))
    with pytest.raises(sc.InvalidDistributionError, match="q_rows: not a table of numbers"):
        sc.draft_from([[0.5, 0.5], [1.0]], np.random.default_rng(0))


def test_sample_index_never_returns_a_zero_probability_token():
    dist = np.array([0.0, 0.3, 0.0, 0.7, 0.0])
    u = np.array([0.0, 0.29999, 0.3, 0.999999999, np.nextafter(1.0, 0)])
    np.testing.assert_array_equal(sc.sample_index(dist, u), [1, 1, 3, 3, 3])


def test_draft_from_samples_each_row():
    q_rows = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    tokens = sc.draft_from(q_rows, np.random.default_rng(3))
    assert tokens[:2] == (0, 1) and tokens[2] in (0, 1)


def test_verify_round_output_follows_p_over_many_seeded_rounds():
    """The slow path (one round at a time) is lossless too: chi-square, seeded."""
    p_rows, q_rows = rows(2)
    rng = np.random.default_rng(2024)
    first = np.zeros(5)
    for _ in range(4000):
        drafts = sc.draft_from(q_rows, rng)
        first[sc.verify_round(p_rows, q_rows, drafts, rng=rng).emitted_tokens[0]] += 1
    assert sc.chi_square_test(first, P).p_value > 1e-3
