"""The one registry of verification rules: every rule's pieces agree with each other."""

import dataclasses

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import rules
from specdec_core.rules import RULES, RuleKind

P = np.array([0.30, 0.20, 0.15, 0.25, 0.10])
Q = np.array([0.20, 0.40, 0.05, 0.30, 0.05])
OPTIONS = {"multi_draft": {"n_candidates": 2}, "multi_draft_no_residual": {"n_candidates": 2}}
LAW_OPTIONS = {**OPTIONS, "tree": {"branching": (2, 2)}}
SIM_OPTIONS = {**OPTIONS, "tree": {"branching": (2, 2)}}


def _q(name: str) -> np.ndarray:
    return np.eye(P.size)[1] if name == "deterministic" else Q


def _k(name: str) -> int:
    return 2 if name == "tree" else 3  # a tree's run has K = its depth


def test_the_registry_is_read_only_and_has_every_rule_once():
    with pytest.raises(TypeError):
        RULES["x"] = RULES["correct"]  # type: ignore[index]
    assert len(set(RULES)) == len(RULES) and all(name == r.name for name, r in RULES.items())
    assert rules.BUILT_IN == set(RULES)  # no test left a rule registered
    assert sc.RULES is RULES


def test_kinds_name_what_each_rule_promises():
    for rule in rules.rules_of_kind(RuleKind.BUG_OF):
        assert rule.breaks in RULES and not RULES[rule.breaks].is_bug, rule.name
        assert rules.reference_rule(rule.name).name == rule.breaks
    for rule in RULES.values():  # an exact rule passes its own law; a bug is tested against
        assert rule.lossless == (rule.kind is RuleKind.EXACT)  # the rule it breaks
        assert (rule.breaks is not None) == rule.is_bug, rule.name
    assert RULES["strict_fresh_sample"].breaks == "strict"
    assert RULES["multi_draft_no_residual"].breaks == "multi_draft"
    assert RULES["block_unweighted_leftover"].breaks == "block_verification"


@pytest.mark.parametrize("name", list(RULES))
def test_the_round_law_is_a_law_and_its_mean_is_the_expected_tokens(name):
    """Rule.round_law (the labs' round-length law) sums to 1; for a rule that is not a bug
    its mean + 1 (the bonus or replacement) is the rule's expected tokens per round."""
    rule, q, k = RULES[name], _q(name), _k(name)
    options = SIM_OPTIONS.get(name, {})
    law = rule.round_law(P, q, k, **options)
    assert law.shape == (k + 1,) and law.sum() == pytest.approx(1.0, abs=1e-12)
    if not rule.is_bug:
        expected = rule.expected(P, q, k, **LAW_OPTIONS.get(name, {}))
        assert law @ np.arange(k + 1) + 1 == pytest.approx(expected, abs=1e-9)
    if rule.independent_keeps:  # one keep chance at every position: a truncated power law
        keep = rule.keep_chances(P, q, k, **options)
        if name != "tree":  # a tree's widths differ by level: one chance per level
            np.testing.assert_allclose(keep, keep[0], atol=1e-12)


@pytest.mark.parametrize("name", list(RULES))
def test_the_emitted_law_is_p_exactly_when_the_rule_is_exact(name):
    law = sc.emitted_distribution(name, P, _q(name), **LAW_OPTIONS.get(name, {}))
    assert law.sum() == pytest.approx(1.0)
    rule = RULES[name]
    exact = rule.kind is RuleKind.EXACT or not rule.position_law_broken  # a round's bug
    assert np.allclose(law, P, atol=1e-12) == exact


@pytest.mark.parametrize("name", list(RULES))
def test_the_monte_carlo_follows_the_rules_own_law_and_expected_tokens(name):
    """Position 1 of the vectorised chunk emits the one-position law; the mean round length
    is the rule's expected tokens (200,000 rounds: 5 standard errors are below 0.01)."""
    q, k = _q(name), _k(name)
    result = sc.simulate_rounds(
        P, q, k, 200_000, rng=np.random.default_rng(7), variant=name, **SIM_OPTIONS.get(name, {})
    )
    share = result.position_counts[0] / result.n_rounds
    law = sc.emitted_distribution(name, P, q, **LAW_OPTIONS.get(name, {}))
    assert np.abs(share - law).max() < 0.01, (share, law)
    expected = RULES[name].expected(P, q, k, **LAW_OPTIONS.get(name, {}))
    assert result.mean_tokens_per_round == pytest.approx(expected, abs=0.02)


@pytest.mark.parametrize("name", list(RULES))
def test_the_one_position_step_follows_the_emitted_law(name):
    q, rng = _q(name), np.random.default_rng(11)
    options = LAW_OPTIONS.get(name, {})
    tokens = [RULES[name].step(P, q, rng, **options).emitted_token for _ in range(4_000)]
    share = np.bincount(tokens, minlength=P.size) / len(tokens)
    law = sc.emitted_distribution(name, P, q, **options)
    assert 0.5 * np.abs(share - law).sum() < 0.04, (share, law)


def test_round_lengths_are_tested_against_the_law_of_the_rule_a_bug_breaks():
    bug = sc.simulate_rounds(P, Q, 3, 1_000, rng=np.random.default_rng(0), variant="no_bonus")
    np.testing.assert_allclose(bug.alphas, [sc.acceptance_rate(P, Q)] * 3)
    run = sc.simulate_rounds(
        P, Q, 3, 1_000, rng=np.random.default_rng(0), variant="multi_draft_no_residual",
        n_candidates=2,
    )  # fmt: skip
    beta_2 = sc.RULES["multi_draft"].tables(np.tile(P, (4, 1)), np.tile(Q, (3, 1)), n_candidates=2)
    np.testing.assert_allclose(run.alphas, beta_2.keep_probabilities)


def test_round_tables_carry_keep_probabilities():
    tables = sc.RULES["correct"].tables(np.tile(P, (3, 1)), np.tile(Q, (2, 1)))
    np.testing.assert_allclose(tables.keep_probabilities, [sc.acceptance_rate(P, Q)] * 2)
    greedy = sc.RULES["greedy"].tables(np.tile(P, (3, 1)), np.tile(Q, (2, 1)))
    np.testing.assert_allclose(greedy.keep_probabilities, [Q[0], Q[0]])  # q(argmax p)


def _toy(name: str, kind: RuleKind, breaks: str | None = None) -> rules.Rule:
    return dataclasses.replace(RULES["correct"], name=name, kind=kind, breaks=breaks)


def test_register_and_unregister_a_rule():
    rule = sc.register_rule(_toy("toy_exact", RuleKind.EXACT))
    try:
        assert RULES["toy_exact"] is rule and list(RULES)[-1] == "toy_exact"
        run = sc.simulate_rounds(P, Q, 2, 1_000, rng=np.random.default_rng(0), variant="toy_exact")
        assert run.variant == "toy_exact"
        with pytest.raises(sc.SpecDecError, match="already registered"):
            sc.register_rule(rule)
        sc.register_rule(_toy("toy_bug", RuleKind.BUG_OF, breaks="toy_exact"))
        with pytest.raises(sc.SpecDecError, match="broken by toy_bug"):
            sc.unregister_rule("toy_exact")
        assert rules.bug_of("toy_exact").name == "toy_bug"
        sc.unregister_rule("toy_bug")
    finally:
        sc.unregister_rule("toy_exact")
    assert "toy_exact" not in RULES and "toy_bug" not in RULES


@pytest.mark.parametrize(
    "rule, fragment",
    [
        (_toy("correct", RuleKind.EXACT), "already registered"),
        (_toy("toy", RuleKind.BUG_OF), "names the rule it breaks"),
        (_toy("toy", RuleKind.EXACT, breaks="correct"), "names the rule it breaks"),
        (_toy("toy", RuleKind.BUG_OF, breaks="nope"), "'nope', which is not registered"),
        (_toy("two words", RuleKind.EXACT), "plain identifier"),
        (dataclasses.replace(_toy("toy", RuleKind.EXACT), labs=("home",)), "unknown lab"),
    ],
)
def test_register_rule_refuses_a_bad_rule(rule, fragment):
    with pytest.raises(sc.SpecDecError, match=fragment):
        sc.register_rule(rule)
    assert "toy" not in RULES


def test_unknown_names_are_refused_with_the_names_there_are():
    with pytest.raises(sc.SpecDecError, match="variant 'nope' is unknown; choose one of correct"):
        sc.simulate_rounds(P, Q, 2, 10, rng=np.random.default_rng(0), variant="nope")
    with pytest.raises(sc.SpecDecError, match="no rule named 'nope'"):
        sc.unregister_rule("nope")
