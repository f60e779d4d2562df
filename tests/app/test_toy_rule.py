"""Adding a rule is its module and its test: a toy rule, registered here, shows in both
labs' menus with the verdict its kind implies (issue 26)."""

import dataclasses

import numpy as np
import pytest

import specdec_core as sc
from specdec_core.rules import LABS, RuleKind
from tests.app import toy_rule
from tests.app.conftest import open_page

LAB = "pages/scripts/losslessness.py"
VARIANTS = "pages/scripts/variants.py"
FAST = {"rounds": "20000", "seed": "3"}
SEED_P = np.array([0.40, 0.25, 0.20, 0.10, 0.05])  # the labs' default p and q
SEED_Q = np.array([0.30, 0.30, 0.15, 0.15, 0.10])
TOY_LOSSY = dataclasses.replace(sc.RULES["greedy"], name="toy_lossy", labs=LABS)
# A rule that decides a whole round jointly, registered the documented way (a Rule with
# ``independent_keeps=False`` and a ``round_step``), with no words and no row of its own.
TOY_JOINT = dataclasses.replace(sc.RULES["block_verification"], name="toy_joint", labs=LABS)


@pytest.fixture
def toy_rules():
    """The toy rules registered for one test (and unregistered after it, whatever happens)."""
    added = []
    try:
        for rule in (toy_rule.LAZY, toy_rule.KEEP_ALL, TOY_LOSSY, TOY_JOINT):
            added.append(sc.register_rule(rule).name)
        yield added
    finally:
        for name in reversed(added):
            sc.unregister_rule(name)


def _verdict(at, key: str) -> str:
    return at.get_by_key(key).children[0].value


def test_the_toy_rule_is_exact_and_its_bug_is_not():
    p, q = np.array([0.3, 0.2, 0.15, 0.25, 0.1]), np.array([0.2, 0.4, 0.05, 0.3, 0.05])
    np.testing.assert_allclose(toy_rule.lazy_emitted(p, q), p)
    assert "toy_lazy" not in sc.RULES  # registered only by the fixture


@pytest.mark.parametrize(
    "name, verdict", [("toy_lazy", "PASS"), ("toy_keep_all", "FAIL"), ("toy_lossy", "FAIL")]
)
def test_the_losslessness_lab_offers_a_registered_rule_with_its_kinds_verdict(
    toy_rules, name, verdict
):
    at = open_page(LAB, FAST)
    menu = at.selectbox(key="lab_variant")
    assert name in menu.options  # no words for it: the menu shows its name
    menu.set_value(name).run()
    assert not at.exception
    text = _verdict(at, "lab_verdict")
    assert text.startswith(verdict), text
    kind = sc.RULES[name].kind
    page = " ".join(e.value for e in [*at.caption, *at.markdown, *at.warning, *at.error])
    if kind is RuleKind.LOSSY_BY_DESIGN:
        assert "lossy by design" in text and "not a bug" in text
        assert len(at.error) == 0 and "This rule is a bug" not in page
    if kind is RuleKind.BUG_OF:
        assert len(at.error) == 1 and "This rule is a bug" in page


def test_the_variants_lab_offers_a_registered_rule_and_its_bug(toy_rules):
    at = open_page(VARIANTS, FAST)
    menu = at.selectbox(key="var_variant")
    assert "toy_lazy" in menu.options and "toy_lossy" in menu.options
    assert "toy_keep_all" not in menu.options  # a bug is its rule's "Break it" checkbox
    menu.set_value("toy_lazy").run()
    assert not at.exception
    assert _verdict(at, "var_verdict").startswith("PASS")
    at.checkbox(key="var_broken").check().run()
    assert not at.exception
    assert _verdict(at, "var_verdict").startswith("FAIL")
    at.selectbox(key="var_variant").set_value("toy_lossy").run()
    assert not at.exception
    text = _verdict(at, "var_verdict")
    assert text.startswith("FAIL") and "lossy by design" in text


def _page_text(at) -> str:
    parts = [*at.caption, *at.markdown, *at.warning, *at.error, *at.info, *at.latex]
    return " ".join(str(e.value) for e in parts)


def test_the_losslessness_lab_describes_a_new_rule_from_its_properties(toy_rules):
    """An independent rule keeps with its own r (no words: "r"); a joint one is held to its
    exact law s_n - s_(n+1), never to a power law, and its gain is said in numbers."""
    at = open_page(LAB, FAST)
    at.selectbox(key="lab_variant").set_value("toy_lazy").run()
    assert not at.exception
    r = 0.5 * sc.acceptance_rate(SEED_P, SEED_Q)
    text = _page_text(at)
    assert r"P(n+1\ \text{tokens}) = r^n (1-r)" in text and f"r = {r:.3f}" in text
    at.selectbox(key="lab_variant").set_value("toy_joint").run()
    assert not at.exception and _verdict(at, "lab_verdict").startswith("PASS")
    text = _page_text(at)
    assert "s_n - s_{n+1}" in text and "alpha^n (1 - alpha)" in text  # said not to hold
    assert r"\alpha^n" not in text and "kept independently with probability" not in text
    note = at.get_by_key("lab_keep_note").children[0].value
    ours = sc.RULES["toy_joint"].expected(SEED_P, SEED_Q, 4)
    assert f"(exact: {ours:.2f})" in note and "E(alpha, K) = 3.71" in note


def test_the_variants_lab_steps_a_joint_rule_a_round_at_a_time(toy_rules):
    at = open_page(VARIANTS, {**FAST, "variant": "toy_joint", "preset": "strict", "k": "3"})
    assert not at.exception
    assert _verdict(at, "var_verdict").startswith("PASS")
    for _ in range(3):  # positions 1..3, then the round's decision
        at.button(key="var_next").click().run()
    assert not at.exception
    shown = " ".join(m.value for m in at.get_by_key("var_decision").markdown)
    decision = shown.replace("\\", "")  # the lines are markdown-escaped
    assert "Position 3: drafted" in decision and "of the 3 drafts" in decision
    assert "h = " in decision and "w = " in decision  # no words: the numbers' own symbols
    gain = sc.RULES["toy_joint"].expected(SEED_P, SEED_Q, 3) - sc.expected_tokens(
        sc.acceptance_rate(SEED_P, SEED_Q), 3
    )
    assert any(f"{gain:+.3f} tokens per round" in c.value for c in at.caption)
