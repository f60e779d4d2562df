"""The one verdict section's words and CSV (specdec_ui/losslessness/verdict.py)."""

import numpy as np

import specdec_core as sc
from specdec_core.rules import RuleKind
from specdec_ui.losslessness import verdict as losslessness_verdict

P = np.array([0.4, 0.25, 0.2, 0.1, 0.05])
Q = np.array([0.3, 0.3, 0.15, 0.15, 0.1])


def _run(variant: str):
    result = sc.simulate_rounds(P, Q, 3, 20_000, rng=np.random.default_rng(1), variant=variant)
    return result, sc.losslessness_test(result)


def test_the_verdict_names_both_tests():
    _, report = _run("correct")
    assert losslessness_verdict.verdict_text(report).startswith(
        "PASS: the emitted tokens follow p (chi-square"
    )
    _, bug = _run("no_bonus")
    text = losslessness_verdict.verdict_text(bug)
    assert text.startswith("FAIL: the round lengths do not follow the theory")
    assert "the emitted tokens do not follow p" not in text


def test_kinds_and_their_words():
    assert losslessness_verdict.rule_kind("greedy") is RuleKind.LOSSY_BY_DESIGN
    assert losslessness_verdict.rule_kind("no_such_rule") is None
    assert (
        "not a bug" in losslessness_verdict.LOSSY_WORDS
        and "lossy by design" in losslessness_verdict.LOSSY_WORDS
    )
    assert (
        losslessness_verdict.p_value_text(0.0) == "< 1e-300"
        and losslessness_verdict.p_value_latex(0.0) == r"< 10^{-300}"
    )


def test_one_csv_for_both_labs():
    result, _ = _run("greedy")
    law = sc.emitted_distribution("greedy", P, Q)
    frame = losslessness_verdict.results_csv_table(
        result, "ABCDE", law, {"variant": "greedy", "seed": 1}
    )
    assert list(frame.columns) == [
        "table", "item", "observed", "expected", "exact emitted share (position 1)",
        "variant", "seed",
    ]  # fmt: skip
    tokens = frame[frame["table"] == "tokens"]
    np.testing.assert_allclose(tokens["exact emitted share (position 1)"], [1, 0, 0, 0, 0])
    rounds = frame[frame["table"] == "tokens per round"]
    assert rounds["observed"].sum() == 20_000
    assert rounds["exact emitted share (position 1)"].isna().all()
    assert (
        losslessness_verdict.results_csv_table(result, "ABCDE", None, {})[
            "exact emitted share (position 1)"
        ]
        .isna()
        .all()
    )
