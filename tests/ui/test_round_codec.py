"""round_codec: typed text and links <-> a checked round, without Streamlit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import specdec_core as sc
from specdec_ui.round.codec import (
    ROUND_KEYS,
    CustomInputs,
    RoundChoice,
    RowTables,
    custom_spec,
    read_link,
    rows_text,
    scenario_as_custom,
    share_params,
)
from specdec_ui.round.story import play_round, spec_from_scenario

P = "0.4, 0.25, 0.2, 0.1, 0.05"
Q = "0.3, 0.3, 0.15, 0.15, 0.1"


def typed(**fields) -> CustomInputs:
    return CustomInputs(**{"labels": "", "p_text": P, "q_text": Q, **fields})


def test_the_codec_does_not_import_streamlit():
    code = "import sys, specdec_ui.round.codec; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_custom_spec_names_bad_entries():
    spec = custom_spec(typed(drafts_text="A, B, C", coins_text="0.5, 0.72", final_text="D", seed=2))
    assert spec.labels == tuple("ABCDE") and spec.draft_tokens == (0, 1, 2)
    assert spec.coins == (0.5, 0.72) and spec.final_token == 3 and spec.seed == 2
    cases = [
        (typed(p_text="0.5, abc"), "p: entry 2 ('abc') is not a number"),
        (typed(k=9), "K = 9 is out of range; allowed: 1 to 8"),
        (typed(q_text="0.5, 0.5"), "p has 5 entries but q has 2"),
        (typed(drafts_text="A, B"), "got 2 labels for K = 3"),
        (typed(q_text="0, 0.3, 0.3, 0.3, 0.1", drafts_text="A, B, C"), "entry 1 ('A') has q = 0"),
        (
            typed(drafts_text="A, B, C", coins_text="0.5, 0.9", final_text="D"),
            "final token ('D') has probability 0 under the leftover max(0, p − q) at the rejected "
            "position 2; choose one of A, C",
        ),
    ]
    for inputs, message in cases:
        with pytest.raises(sc.SpecDecError) as err:
            custom_spec(inputs)
        assert message in str(err.value)
    bonus = typed(
        p_text="0.5, 0.5, 0, 0, 0", q_text="0, 0, 0.5, 0.5, 0", k=1, drafts_text="C", final_text="A"
    )
    assert custom_spec(bonus).final_token == 0


def test_read_link_round_trip_and_problems():
    inputs = CustomInputs(
        labels="x, y", p_text="0.5, 0.5", q_text="0.9, 0.1", k=2, seed=9, coins_text="0.2"
    )
    params = share_params(RoundChoice(custom=inputs), 3)
    assert params == {
        "mode": "custom",
        "labels": "x, y",
        "p": "0.5, 0.5",
        "q": "0.9, 0.1",
        "k": "2",
        "seed": "9",
        "coins": "0.2",
        "step": "3",
    }
    state = read_link(params)
    assert not state.problems and state.step == 3 and state.choice.tables is None
    assert state.choice.custom == inputs
    bad = read_link(
        {
            "mode": "custom",
            "k": "99",
            "p": "garbage",
            "step": "-5",
            "preset": "nope",
            "seed": "1e9",
            "coins": "a\x00b",
        }
    )
    text = " ".join(bad.problems)
    for name in ("'k'", "'p'", "'step'", "'preset'", "'seed'", "'coins'"):
        assert name in text
    assert bad.choice.custom.k == 3 and bad.step == 0
    assert read_link({}) == read_link({"mode": "preset", "preset": "000-round"})
    assert read_link({}).choice == RoundChoice(preset="000-round", custom=None)
    assert share_params(RoundChoice(preset="003-A"), 4) == {
        "mode": "preset",
        "preset": "003-A",
        "step": "4",
    }


def test_read_link_table_rows():
    state = read_link({"mode": "custom", "k": "1", "p": "1, 0 | 0.5, 0.5", "q": "0.5 0.5"})
    assert not state.problems
    tables = state.choice.tables
    assert tables.p_rows.tolist() == [[1.0, 0.0], [0.5, 0.5]]
    assert tables.q_rows.tolist() == [[0.5, 0.5]]
    assert rows_text(tables.p_rows) == "1, 0 | 0.5, 0.5"
    assert state.choice.custom.p_text == "1, 0"  # the typed field keeps the first row
    assert share_params(state.choice, 0)["p"] == "1, 0 | 0.5, 0.5"
    wrong = read_link({"mode": "custom", "k": "3", "p": "1, 0 | 0.5, 0.5", "q": "0.5 0.5"})
    assert "has 2 rows; give one shared row or 4 rows" in " ".join(wrong.problems)
    assert wrong.choice.tables is None and wrong.choice.custom.p_text.startswith("0.40")


def test_preset_as_custom_keeps_every_number():
    for key in ROUND_KEYS:
        copy = scenario_as_custom(key)
        spec = custom_spec(copy.inputs, copy.tables)
        preset = play_round(spec_from_scenario(sc.SCENARIOS[key]))
        custom_result = play_round(spec)
        assert custom_result.emitted_tokens == preset.emitted_tokens
        assert [s.coin for s in custom_result.steps] == [s.coin for s in preset.steps]
        assert bool(copy.notes) == any("," in lab for lab in sc.SCENARIOS[key].labels)


def test_custom_spec_normalises_only_when_asked():
    with pytest.raises(sc.SpecDecError, match="sum to 10"):
        custom_spec(typed(p_text="4 3 2 1", q_text="1 1 1 1", k=1))
    spec = custom_spec(typed(p_text="4 3 2 1", q_text="1 1 1 1", k=1, normalise=True))
    assert spec.p_rows[0].tolist() == pytest.approx([0.4, 0.3, 0.2, 0.1])
    assert spec.q_rows[0].tolist() == pytest.approx([0.25] * 4)
    tables = RowTables(np.array([[2.0, 2.0], [1.0, 3.0]]), np.array([[0.5, 0.5]]))
    with pytest.raises(sc.SpecDecError, match="p at position 1"):
        custom_spec(typed(p_text="", q_text="0.5 0.5", k=1), tables)
    spec = custom_spec(typed(p_text="", q_text="0.5 0.5", k=1, normalise=True), tables)
    assert spec.p_rows.tolist() == [[0.5, 0.5], [0.25, 0.75]]


def test_custom_inputs_are_the_widget_values():
    inputs = CustomInputs(labels="a, b", k=2, normalise=True)
    assert CustomInputs.from_values({**inputs.values(), "mode": "Custom"}) == inputs
    assert set(inputs.values()) == {
        "labels",
        "p_text",
        "q_text",
        "k",
        "drafts_text",
        "coins_text",
        "final_text",
        "seed",
        "normalise",
    }
