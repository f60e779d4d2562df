"""specdec_ui.model_pairs.work: one definition per count, link state, predictions."""

from __future__ import annotations

import math

import pytest

from specdec_core.lm import GenerationResult
from specdec_core.lm.timing import SpeedMeasurement
from specdec_ui.model_pairs import work as model_pairs_work

PAIRS = ["lookup-table-to-gpt-4L", "trigram-to-gpt-4L", "gpt-1L-to-gpt-4L", "bigram-to-5gram"]


def result(kinds, *, k=3, rounds, checked, accepted, emitted, target_calls) -> GenerationResult:
    return GenerationResult(
        (1, 2),
        tuple(range(len(kinds))),
        tuple(kinds),
        k,
        0.0,
        n_rounds=rounds,
        checked=checked,
        accepted=accepted,
        emitted=emitted,
        drafted=k * rounds,
        target_calls=target_calls,
    )


def test_counts_of_a_run_whose_last_round_was_cut():
    # round 1: 3 kept + bonus (4 tokens); round 2: 1 kept, 1 rejected -> resample (2 tokens);
    # round 3: 3 kept + bonus, but only 1 token fits the limit of 7
    kinds = ["accepted"] * 3 + ["bonus", "accepted", "resampled", "accepted"]
    c = model_pairs_work.run_counts(
        result(kinds, rounds=3, checked=8, accepted=7, emitted=10, target_calls=3), True
    )
    assert (c.n_tokens, c.cut, c.rejected, c.bonus_rounds) == (7, 3, 1, 2)
    assert c.tokens_per_round == pytest.approx(10 / 3) and c.acceptance_rate == 7 / 8
    assert c.text_count("accepted") == 5 and c.kept == 7  # 2 kept drafts were cut
    assert (c.plain_calls, c.calls_saved) == (7, 4)


def test_ngram_lookups_can_exceed_plain_calls():
    c = model_pairs_work.run_counts(
        result(["resampled"] * 4, k=4, rounds=4, checked=4, accepted=0, emitted=4, target_calls=20),
        False,
    )
    assert c.calls_saved == -16 and not c.parallel_verify  # the page words this as lookups
    nothing = model_pairs_work.run_counts(
        result(["bonus"], k=1, rounds=1, checked=0, accepted=0, emitted=1, target_calls=1), True
    )
    assert math.isnan(nothing.acceptance_rate)


def test_link_round_trip_and_bad_values_fall_back_with_named_problems():
    state = {
        "pair": "gpt-1L-to-gpt-4L",
        "prompt": "The list",
        "k": 5,
        "draft": "adaptive",
        "temperature": 1.3,
        "seed": 42,
        "tokens": 80,
        "mode": "step",
        "round": 7,
    }
    back, problems = model_pairs_work.state_from_link(model_pairs_work.link_params(state), PAIRS)
    assert back == state and problems == []
    # a link without a draft length opens on the fixed default, with its K
    back, _ = model_pairs_work.state_from_link({"pair": "gpt-1L-to-gpt-4L"}, PAIRS)
    assert (
        (back["draft"], back["k"])
        == (model_pairs_work.DEFAULT_DRAFT_LENGTH, model_pairs_work.DEFAULT_K)
        == ("fixed", 3)
    )
    back, _ = model_pairs_work.state_from_link({"draft": "adaptive"}, PAIRS)  # an old link
    assert (back["draft"], back["k"]) == ("adaptive", model_pairs_work.DEFAULT_K)
    back, _ = model_pairs_work.state_from_link({"draft": "adaptive", "k": "3"}, PAIRS)
    assert (back["draft"], back["k"]) == ("adaptive", 3)
    bad = {"pair": "x", "k": "0", "t": "nan", "seed": "-1", "tokens": "205", "mode": "all"}
    back, problems = model_pairs_work.state_from_link(
        {**bad, "round": "zero", "prompt": " ", "draft": "y"}, PAIRS
    )
    assert back["pair"] == model_pairs_work.DEFAULT_PAIR and back["k"] == model_pairs_work.DEFAULT_K
    assert back["draft"] == "fixed"
    assert (back["temperature"], back["seed"], back["tokens"]) == (
        0.0,
        0,
        model_pairs_work.DEFAULT_TOKENS,
    )
    assert back["prompt"] == model_pairs_work.DEFAULT_PROMPT and back["mode"] == "run"
    named = " ".join(problems)
    for name in ("pair", "k", "t", "seed", "tokens", "mode", "round", "prompt", "draft"):
        assert f"'{name}'" in named, name
    assert "round" not in model_pairs_work.link_params({**state, "mode": "run"})


def test_predictions_use_the_run_alpha_and_the_measured_costs():
    c = model_pairs_work.run_counts(
        result(["accepted"] * 6, rounds=2, checked=4, accepted=2, emitted=6, target_calls=2), True
    )
    m = SpeedMeasurement(3, 0.0, 200, True, (1.0,), (1.2,), (0.12,), 100, 1, 2, "fake")
    pred = model_pairs_work.predictions(c, m)
    e = (1 - 0.5**4) / (1 - 0.5)
    assert pred.alpha == 0.5 and pred.expected == pytest.approx(e)
    assert pred.seeds == pytest.approx(e / (3 * m.c + 1))
    assert pred.corrected == pytest.approx(e / (3 * m.c + m.v))
