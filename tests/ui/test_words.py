"""Every name the core defines has the words a page shows for it."""

from typing import get_args

import specdec_core as sc
from specdec_core import quiz
from specdec_core.rules import RULES, RuleKind, rules_of_kind
from specdec_ui import words
from specdec_ui.kit import theme


def test_every_round_status_has_a_word_and_a_symbol():
    statuses = set(get_args(sc.DraftStatus)) | set(get_args(sc.TokenStatus))
    assert set(theme.STATUS_WORD) == statuses | {"pending"}  # pending: not reached yet
    assert set(theme.STATUS_SYMBOL) == set(theme.STATUS_WORD)
    assert set(sc.FINAL_STATUS.values()) <= statuses  # the word of each final kind's token
    assert [theme.STATUS_WORD[s] for s in ("accepted", "rejected")] == ["kept", "rejected"]


def test_every_rule_has_its_words_in_one_table():
    assert set(words.RULE_WORDS) == set(RULES)  # a set: the order of either is free
    for name, said in words.RULE_WORDS.items():
        assert said.label and said.description, name
    assert words.rule_label("correct") == "Correct algorithm"
    assert words.rule_label("multi_draft") == "Multi-draft (SpecInfer)"
    assert words.rule_title("multi_draft") == "Multi-draft: m candidates per position (SpecInfer)"
    assert words.rule_label("no_such_rule") == words.rule_title("no_such_rule") == "no_such_rule"


def test_a_rule_is_called_a_bug_exactly_when_its_kind_is_bug_of():
    # Typical acceptance and greedy matching are lossy by design, not bugs.
    for name, rule in RULES.items():
        said = words.RULE_WORDS[name]
        assert said.label.startswith("Bug: ") == (rule.kind is RuleKind.BUG_OF), name
        assert "bug" not in said.label.lower() or rule.kind is RuleKind.BUG_OF, name
    for name in ("typical_acceptance", "greedy"):
        assert "NOT lossless" in words.RULE_WORDS[name].description or "lossy by design" in (
            words.RULE_WORDS[name].description
        )


def test_the_variants_labs_bugs_have_their_break_it_words():
    for rule in rules_of_kind(RuleKind.BUG_OF, lab="variants"):
        assert words.RULE_WORDS[rule.name].break_it.startswith("Break it: "), rule.name


def test_every_question_kind_has_a_menu_label():
    assert tuple(words.QUESTION_KIND_LABELS) == quiz.QUESTION_KINDS
