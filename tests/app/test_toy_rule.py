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
TOY_LOSSY = dataclasses.replace(sc.RULES["greedy"], name="toy_lossy", labs=LABS)


@pytest.fixture
def toy_rules():
    """The toy rules registered for one test (and unregistered after it, whatever happens)."""
    added = []
    try:
        for rule in (toy_rule.LAZY, toy_rule.KEEP_ALL, TOY_LOSSY):
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
