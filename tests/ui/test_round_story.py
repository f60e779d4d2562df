"""round_story: the decisions of a round, their "why" texts, numbers and trace table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
from specdec_ui.round.story import (
    RoundSpec,
    build_story,
    csv_safe,
    fmt_entry,
    fmt_prob,
    fmt_ratio,
    fmt_vector,
    play_round,
    spec_from_scenario,
)

ROUND_KEYS = [k for k, s in sc.SCENARIOS.items() if isinstance(s, sc.RoundScenario)]
P000 = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
Q000 = np.array([0.30, 0.30, 0.15, 0.15, 0.10])


def story_of(key: str):
    return build_story(spec_from_scenario(sc.SCENARIOS[key]))


def custom(k: int = 3, **kw) -> RoundSpec:
    return RoundSpec(
        labels=tuple("ABCDE"), p_rows=np.tile(P000, (k + 1, 1)), q_rows=np.tile(Q000, (k, 1)), **kw
    )


def test_number_formats_follow_the_seeds():
    assert [fmt_prob(x) for x in (0.3, 0.25, 5 / 6, 1.0, 0.0, 0.0004)] == [
        "0.30",
        "0.25",
        "0.833",
        "1.00",
        "0",
        "0.0004",
    ]
    assert [fmt_ratio(x) for x in (0.8 / 0.01, 0.4 / 0.3, 0.25 / 0.3, np.inf)] == [
        "80",
        "1.33",
        "0.833",
        "infinite",
    ]
    assert [fmt_entry(x) for x in (0.1, 0.0, 2 / 3, 0.001)] == ["0.10", "0", "0.67", "0.001"]
    labels = tuple(f"t{i}" for i in range(12))
    long = np.zeros(12)
    long[[2, 7]] = [0.25, 0.75]
    assert fmt_vector(long, labels) == "{t2: 0.25, t7: 0.75} (all other entries 0)"


def test_seed_000_round_decisions_in_order():
    story = story_of("000-round")
    assert [s.kind for s in story.steps] == [
        "draft",
        "ratio",
        "coin",
        "ratio",
        "coin",
        "ratio",
        "coin",
        "bonus",
        "result",
    ]
    ratio_a, ratio_b = story.steps[1], story.steps[3]
    assert "p = 0.40, q = 0.30, ratio 1.33, a = 1.00" in ratio_a.title
    assert "kept for sure" in ratio_a.why
    assert "ratio 0.833, a = 0.833" in ratio_b.title
    assert "83.3% of the time" in ratio_b.why
    coin_b = story.steps[4]
    assert coin_b.title == "Coin u = 0.72 < a = 0.833: keep B"
    assert coin_b.latex == r"u = 0.72 < a = 0.833\;\Rightarrow\;\text{keep}"
    assert r"\frac{0.25}{0.30}" in ratio_b.latex and ratio_b.latex.endswith("= 0.833")
    bonus = story.steps[7]
    assert "bonus token D from p at position 4 (p = 0.10)" in bonus.title
    assert story.output_text(8) == "A ✓ kept · B ✓ kept · C ✓ kept · D ★ bonus"
    assert "4 tokens (A B C D)" in story.steps[-1].title


def test_status_grows_one_decision_at_a_time():
    story = story_of("000-round")
    assert story.steps[0].draft_status == ("pending",) * 3 and story.steps[0].emitted == ()
    assert story.output_text(0) == "(no token emitted yet)"
    assert story.steps[1].emitted == ()  # the ratio alone decides nothing
    assert story.steps[2].draft_status == ("accepted", "pending", "pending")
    assert story.steps[2].emitted == ((0, 0, "accepted"),)
    assert story.output_text(4) == "A ✓ kept · B ✓ kept"
    assert story.draft_text(4) == "A ✓ kept · B ✓ kept · C … not checked yet"
    assert story.step(-3) is story.steps[0] and story.step(99) is story.steps[-1]


def test_rejection_shows_the_seed_residual_and_discards():
    story = story_of("000-rejection")
    kinds = [s.kind for s in story.steps]
    assert kinds == [
        "draft",
        "ratio",
        "coin",
        "ratio",
        "coin",
        "discard",
        "residual",
        "normalise",
        "resample",
        "result",
    ]
    assert story.steps[4].title == "Coin u = 0.90 ≥ a = 0.833: reject B"
    discard = story.steps[5]
    assert "C at position 3" in discard.title and "context is different" in discard.why
    assert discard.draft_status == ("accepted", "rejected", "discarded")
    residual = story.steps[6]
    assert residual.title.endswith("max(0, p − q) = [0.10, 0, 0.05, 0, 0]")
    assert "p − q = 0.25 − 0.30 < 0" in residual.why
    normalise = story.steps[7]
    assert normalise.title == "Normalise: Z = 0.15, p_adj = [0.67, 0, 0.33, 0, 0]"
    assert "1 − α = 1 − 0.85" in normalise.why
    assert r"\left[0.67,\ 0,\ 0.33,\ 0,\ 0\right]" in normalise.latex
    assert story.steps[8].emitted[-1] == (1, 0, "resampled")
    assert story.output_text(9) == "A ✓ kept · A ↻ resampled"
    assert "1 + 1 = 2" in story.steps[-1].why


def test_cell_b_discards_the_attractive_draft():
    story = story_of("003-B")
    assert "Position 3: “,” has p = 0.20" in story.steps[5].title
    discard = next(s for s in story.steps if s.kind == "discard")
    assert "again at position 4 (its p = 0.90)" in discard.title
    assert story.step(99).draft_status == ("accepted", "accepted", "rejected", "discarded")
    assert len(story.step(99).emitted) == 3


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("003-C", "equal confidence still gives a = 1"),
        ("003-D", "The target forbids spam (p = 0), so a = 0"),
        ("003-E", "The ratio is 80, but min(1, ·) caps it"),
        ("003-I", "never on rank"),
    ],
)
def test_special_cells_explain_themselves(key, words):
    story = story_of(key)
    assert words in story.steps[1].why


def test_cell_d_coin_cannot_save_a_forbidden_token():
    story = story_of("003-D")
    assert "No coin is below a = 0" in story.steps[2].why
    assert "[0.75, 0.25, 0, 0]" in next(s.title for s in story.steps if s.kind == "normalise")


def test_latex_holds_numbers_never_labels():
    labels = ("Paris", "London", "Rome")
    story = story_of("003-I")
    for step in story.steps:
        assert not any(lab in step.latex for lab in labels)
    hostile = ("<b>x</b>", r"\def", "$y$", "D", "E")
    spec = RoundSpec(
        labels=hostile, p_rows=np.tile(P000, (4, 1)), q_rows=np.tile(Q000, (3, 1)), seed=5
    )
    for step in build_story(spec).steps:
        assert not any(lab in step.latex for lab in hostile[:3])


def test_trace_frame_rows_and_csv_safety():
    story = story_of("000-rejection")
    frame = story.trace_frame()
    assert list(frame["decision"]) == ["kept", "rejected", "discarded", "resampled"]
    assert list(frame["position"]) == [1, 2, 3, 2]
    assert frame.loc[1, "coin u"] == 0.90
    assert frame.loc[1, "a = min(1, p/q)"] == pytest.approx(0.25 / 0.30)
    assert np.isnan(frame.loc[2, "coin u"])  # a discarded draft is never checked
    assert frame.loc[3, "final distribution(x)"] == pytest.approx(2 / 3)
    assert list(frame["emitted"]) == [True, False, False, True]
    assert csv_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)" and csv_safe("A") == "A"
    spec = RoundSpec(
        labels=("=cmd", "+x", "C", "D", "E"),
        p_rows=np.tile(P000, (4, 1)),
        q_rows=np.tile(Q000, (3, 1)),
        draft_tokens=(0, 1, 2),
        coins=(0.1,) * 3,
        final_token=0,
    )
    tokens = list(build_story(spec).trace_frame()["token"])
    assert tokens == ["'=cmd", "'+x", "C", "'=cmd"]


@pytest.mark.parametrize("key", ROUND_KEYS)
def test_every_preset_story_matches_the_core(key):
    scenario = sc.SCENARIOS[key]
    story = story_of(key)
    res = story.result
    assert res.n_accepted == scenario.expected.get("n_accepted", res.n_accepted)
    assert res.final_kind == scenario.expected["final_kind"]
    checked = [s for s in story.steps if s.kind == "ratio"]
    assert len(checked) == len(res.steps)
    assert len(story.step(99).emitted) == res.n_emitted
    assert story.steps[0].kind == "draft" and story.steps[-1].kind == "result"


def test_play_round_is_seeded_and_keeps_coins_when_drafts_are_typed():
    a, b = play_round(custom(k=5, seed=11)), play_round(custom(k=5, seed=11))
    assert a.draft_tokens == b.draft_tokens and [s.coin for s in a.steps] == [
        s.coin for s in b.steps
    ]
    drafts = {play_round(custom(k=5, seed=s)).draft_tokens for s in range(8)}
    assert len(drafts) > 1
    typed = play_round(custom(k=5, seed=11, draft_tokens=a.draft_tokens))
    assert [s.coin for s in typed.steps] == [s.coin for s in a.steps]
    given = play_round(custom(k=3, draft_tokens=(0, 1, 2), coins=(0.5, 0.72, 0.9), final_token=3))
    assert given.emitted_tokens == (0, 1, 2, 3)


def test_custom_story_names_how_coins_were_obtained():
    story = build_story(custom(k=3, seed=4, coins=(0.5,)))
    assert story.coin_origin == ("typed", "drawn with seed 4", "drawn with seed 4")
    assert "typed" in story.steps[2].why
    assert "sampled from q with seed 4" in story.steps[0].why


def test_play_round_refuses_mismatched_labels():
    spec = RoundSpec(labels=("A", "B"), p_rows=np.tile(P000, (2, 1)), q_rows=np.tile(Q000, (1, 1)))
    with pytest.raises(sc.SpecDecError, match="2 labels for 5 tokens"):
        play_round(spec)


def test_signature_changes_with_the_round():
    base = custom(seed=1)
    assert base.signature() == custom(seed=1).signature()
    assert base.signature() != custom(seed=2).signature()
    assert base.signature() != custom(seed=1, coins=(0.5,)).signature()


def _dist(weights: list[int]) -> np.ndarray:
    w = np.array(weights, dtype=np.float64)
    return w / w.sum()


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    v=st.integers(2, 6),
    k=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_story_invariants_for_any_round(v, k, seed, data):
    weights = st.lists(st.integers(0, 5), min_size=v, max_size=v).filter(lambda w: sum(w) > 0)
    p, q = _dist(data.draw(weights)), _dist(data.draw(weights))
    spec = RoundSpec(
        labels=tuple(f"t{i}" for i in range(v)),
        p_rows=np.tile(p, (k + 1, 1)),
        q_rows=np.tile(q, (k, 1)),
        seed=seed,
    )
    story = build_story(spec)
    res = story.result
    kinds = [s.kind for s in story.steps]
    assert kinds[0] == "draft" and kinds[-1] == "result"
    assert kinds.count("ratio") == kinds.count("coin") == len(res.steps)
    assert ("bonus" in kinds) == (res.final_kind == "bonus")
    assert ("discard" in kinds) == bool(res.discarded_positions)
    last = story.step(len(story.steps) - 1)
    assert tuple(tok for _, tok, _ in last.emitted) == res.emitted_tokens
    assert "pending" not in last.draft_status
    assert last.draft_status.count("accepted") == res.n_accepted
    for before, after in zip(story.steps, story.steps[1:], strict=False):
        assert len(after.emitted) - len(before.emitted) in (0, 1)  # one decision per step
    for step in story.steps:
        assert "nan" not in (step.title + step.why + step.latex).lower()


def test_step_kinds_and_statuses_are_one_vocabulary():
    from typing import get_args

    from specdec_ui.kit.theme import STATUS_WORD
    from specdec_ui.round.story import STEP_KINDS, StepKind

    assert tuple(STEP_KINDS) == get_args(StepKind)
    for key in ROUND_KEYS:
        story = story_of(key)
        kinds = [s.kind for s in story.steps]
        assert kinds[0] == "draft" and kinds[-1] == "result" and set(kinds) <= set(STEP_KINDS)
        res = story.result
        last = story.steps[-1]
        kept_then_final = ("accepted",) * res.n_accepted + (res.final_status,)
        assert tuple(status for _, _, status in last.emitted) == kept_then_final
        assert last.draft_status == res.draft_statuses
        assert kinds[-2] == res.final_kind  # the step that draws the final token
        core_statuses = (*get_args(sc.DraftStatus), *get_args(sc.TokenStatus))
        assert set(story.trace_frame()["decision"]) <= {STATUS_WORD[s] for s in core_statuses}
