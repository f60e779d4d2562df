"""Vocabularies defined once: the size-mismatch message and the statuses of a round."""

from typing import get_args

import numpy as np
import pytest

import specdec_core as sc


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1, 5), "p has 1 entry but q has 5; they must match."),
        ((2, 1), "p has 2 entries but q has 1; they must match."),
        ((0, 3), "p has 0 entries but q has 3; they must match."),
        (
            (3, 4, "p_target", "q_draft"),
            "p_target has 3 entries but q_draft has 4; they must match.",
        ),
    ],
)
def test_mismatch_message_counts_and_names(args, message):
    assert sc.mismatch_message(*args) == message


@pytest.mark.parametrize(
    "call",
    [
        lambda: sc.acceptance_rate([1.0], [0.5, 0.5]),
        lambda: sc.broadcast_rows([1.0], [0.5, 0.5], 2),
        lambda: sc.simulate_rounds([1.0], [0.5, 0.5], 2, 10, rng=np.random.default_rng(0)),
    ],
)
def test_every_core_entry_point_uses_the_one_message(call):
    with pytest.raises(sc.InvalidDistributionError) as err:
        call()
    assert str(err.value) == sc.mismatch_message(1, 2)


def test_one_mapping_from_final_kind_to_token_status():
    assert set(sc.FINAL_STATUS) == set(get_args(sc.FinalKind))
    assert set(sc.FINAL_STATUS.values()) <= set(get_args(sc.TokenStatus))


def test_a_rejected_round_names_each_position_and_token():
    p_rows, q_rows = sc.broadcast_rows(
        [0.40, 0.25, 0.20, 0.10, 0.05], [0.3, 0.3, 0.15, 0.15, 0.1], 4
    )
    r = sc.verify_round(p_rows, q_rows, [0, 1, 1, 2], uniforms=[0.5, 0.9], final_token=0)
    assert r.draft_statuses == ("accepted", "rejected", "discarded", "discarded")
    assert r.final_status == "resampled"
    assert r.emitted_tokens == (0, r.final_token)


def test_an_all_kept_round_ends_with_the_bonus():
    p_rows, q_rows = sc.broadcast_rows([0.5, 0.5], [0.5, 0.5], 2)
    r = sc.verify_round(p_rows, q_rows, [0, 1], uniforms=[0.9, 0.9], final_token=1)
    assert r.draft_statuses == ("accepted", "accepted")
    assert r.final_status == "bonus"
    assert r.n_emitted == 3
