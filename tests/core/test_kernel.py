"""The acceptance rule in one kernel: decide_round, and verify_round's checks around it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core.sampling import decide_round, validate_round

P = [0.40, 0.25, 0.20, 0.10, 0.05]
Q = [0.30, 0.30, 0.15, 0.15, 0.10]


class GivenUniforms:
    """A stand-in generator that hands out the uniforms of a worked example, in order."""

    def __init__(self, *values: float):
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


def test_kernel_on_seed_000_all_kept_then_bonus():
    """Seed 000: a(A) = min(1, .40/.30) = 1, a(B) = .25/.30 = .833 > .72, a(C) = 1."""
    p_rows, q_rows = sc.broadcast_rows(P, Q, 3)
    r = decide_round(p_rows, q_rows, (0, 1, 2), coins=(0.5, 0.72, 0.3), final_token=3)
    assert [s.acceptance_probability for s in r.steps] == pytest.approx([1.0, 0.25 / 0.30, 1.0])
    assert [s.accepted for s in r.steps] == [True, True, True]
    assert r.final_kind == "bonus" and r.n_accepted == 3 and r.emitted_tokens == (0, 1, 2, 3)
    assert r.final_coin is None and r.residual_unnormalised is None


def test_kernel_rejects_and_samples_the_residual_by_hand():
    """p = (.4, .1, .25, .15, .1), q as seed 000, draft B: a = .1/.3 = 1/3 < coin .65.

    max(0, p - q) = (.1, 0, .1, 0, 0), Z = .2, residual (.5, 0, .5, 0, 0): CDF (.5, .5, 1, 1, 1),
    so the final uniform .6 lands on token 2 (C).
    """
    p = [0.4, 0.1, 0.25, 0.15, 0.1]
    p_rows, q_rows = sc.broadcast_rows(p, Q, 2)
    r = decide_round(p_rows, q_rows, (1, 0), rng=GivenUniforms(0.65, 0.6))
    assert r.steps[0].ratio == pytest.approx(1 / 3) and not r.steps[0].accepted
    assert len(r.steps) == 1 and r.discarded_positions == (1,)
    np.testing.assert_allclose(r.residual_unnormalised, [0.1, 0, 0.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(r.final_distribution, [0.5, 0, 0.5, 0, 0], atol=1e-15)
    assert r.final_coin == 0.6 and r.final_token == 2 and r.emitted_tokens == (2,)


@st.composite
def dyadic_rows(draw, n_rows: int, v: int):
    """Rows (n_rows, V) of multiples of 1/64 that sum to exactly 1 (validation keeps them)."""
    rows = []
    for _ in range(n_rows):
        cuts = sorted(draw(st.lists(st.integers(0, 64), min_size=v - 1, max_size=v - 1)))
        rows.append(np.diff([0, *cuts, 64]) / 64)
    return np.array(rows, dtype=np.float64)


@st.composite
def rounds(draw):
    k, v = draw(st.integers(1, 5)), draw(st.integers(1, 7))
    p_rows, q_rows = draw(dyadic_rows(k + 1, v)), draw(dyadic_rows(k, v))
    drafts = tuple(draw(st.sampled_from(np.flatnonzero(row > 0).tolist())) for row in q_rows)
    coins = draw(st.lists(st.floats(0, 1, exclude_max=True), max_size=k))
    return p_rows, q_rows, drafts, coins, draw(st.integers(0, 2**32))


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_kernel_equals_verify_round_on_valid_inputs(case):
    p_rows, q_rows, drafts, coins, seed = case
    a = decide_round(p_rows, q_rows, drafts, coins=coins, rng=np.random.default_rng(seed))
    b = sc.verify_round(
        p_rows, q_rows, list(drafts), uniforms=coins, rng=np.random.default_rng(seed)
    )
    assert a.steps == b.steps and a.emitted_tokens == b.emitted_tokens
    assert (a.final_kind, a.final_position, a.final_coin) == (
        b.final_kind,
        b.final_position,
        b.final_coin,
    )
    np.testing.assert_array_equal(a.final_distribution, b.final_distribution)
    assert a.n_emitted == a.n_accepted + 1 and a.steps[: a.n_accepted] == b.steps[: b.n_accepted]


def test_validate_round_returns_the_kernels_inputs():
    p_rows, q_rows = sc.broadcast_rows(P, Q, 2)
    checked = validate_round(p_rows.tolist(), q_rows.tolist(), np.array([1, 4]), np.array([0.2]))
    assert checked.draft_tokens == (1, 4) and checked.coins == (0.2,)
    assert checked.p_target.shape == (3, 5) and checked.q_draft.shape == (2, 5)


def test_coins_as_an_array_work_like_a_list():
    p_rows, q_rows = sc.broadcast_rows(P, Q, 2)
    as_list = sc.verify_round(p_rows, q_rows, [1, 1], uniforms=[0.9, 0.1], final_token=0)
    as_array = sc.verify_round(p_rows, q_rows, [1, 1], uniforms=np.array([0.9, 0.1]), final_token=0)
    assert as_array.steps == as_list.steps and as_array.emitted_tokens == as_list.emitted_tokens
    seeded = sc.verify_round(
        p_rows, q_rows, [1, 1], uniforms=np.array([]), rng=np.random.default_rng(2)
    )
    assert (
        seeded.steps == sc.verify_round(p_rows, q_rows, [1, 1], rng=np.random.default_rng(2)).steps
    )


@pytest.mark.parametrize(
    ("uniforms", "message"),
    [
        (np.array([]), "the coin for position 1 is needed but was not given"),
        (np.array([0.1, 0.2, 0.3]), "uniforms: got 3 coins for K = 2"),
        (np.array([[0.1, 0.2]]), "uniforms must be a list of up to K = 2 coins"),
        (np.array([0.1, 1.5]), "uniforms: coin 2 is 1.5; coins lie in [0, 1)"),
        (np.array([np.nan]), "uniforms: coin 1 is nan"),
        (0.5, "uniforms must be a list of up to K = 2 coins"),
        ("0.5, 0.7", "uniforms: not a list of numbers"),
        ([10**400], "uniforms: not a list of numbers"),
    ],
)
def test_bad_coins_raise_the_projects_error(uniforms, message):
    p_rows, q_rows = sc.broadcast_rows(P, Q, 2)
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.verify_round(p_rows, q_rows, [1, 1], uniforms=uniforms, final_token=0)
    assert message in str(err.value)


def test_rows_too_large_for_a_float_raise_the_projects_error():
    with pytest.raises(sc.InvalidDistributionError, match="p: not a table of numbers"):
        sc.validate_rows([[10**400, 0]], "p", 1)
    p_rows = [[10**400, 0], [0.5, 0.5]]
    with pytest.raises(sc.InvalidDistributionError, match="p: not a table of numbers"):
        sc.verify_round(p_rows, [[0.5, 0.5]], [0], uniforms=[0.1], final_token=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"draft_tokens": "ab"}, "draft_tokens must be a list of token ids, got text"),
        ({"draft_tokens": 3}, "draft_tokens must be a list of token ids, got 3"),
        (
            {"draft_tokens": [1.0, 0]},
            "draft token at position 1 is 1.0; token ids are whole numbers",
        ),
        ({"draft_tokens": [0, True]}, "draft token at position 2 is True; token ids are whole"),
        ({"draft_tokens": [None, 0]}, "draft token at position 1 is None"),
        ({"draft_tokens": [10**400, 0]}, "draft token at position 1 is 10000000000000000000…;"),
        ({"final_token": "A"}, "final token is 'A'; token ids are whole numbers from 0 to 4"),
        ({"final_token": 2.0}, "final token is 2.0; token ids are whole numbers"),
        ({"final_token": 5}, "final token is 5; token ids run from 0 to 4"),
    ],
)
def test_token_ids_must_be_whole_numbers_in_range(kwargs, message):
    """No silent fixes: 1.5 is not truncated to 1, True is not token 1."""
    p_rows, q_rows = sc.broadcast_rows(P, Q, 2)
    args = {"draft_tokens": [0, 1], "uniforms": [0.1, 0.1], "final_token": 0, **kwargs}
    with pytest.raises(sc.InvalidParameterError) as err:
        sc.verify_round(p_rows, q_rows, args.pop("draft_tokens"), **args)
    assert message in str(err.value)
