"""Every name the core defines has the words a page shows for it."""

from typing import get_args

import specdec_core as sc
from specdec_core import quiz, simulate
from specdec_ui import theme, words


def test_every_round_status_has_a_word_and_a_symbol():
    statuses = set(get_args(sc.DraftStatus)) | set(get_args(sc.TokenStatus))
    assert set(theme.STATUS_WORD) == statuses | {"pending"}  # pending: not reached yet
    assert set(theme.STATUS_SYMBOL) == set(theme.STATUS_WORD)
    assert set(sc.FINAL_STATUS.values()) <= statuses  # the word of each final kind's token
    assert [theme.STATUS_WORD[s] for s in ("accepted", "rejected")] == ["kept", "rejected"]


def test_every_simulated_variant_has_a_label_and_a_description():
    names = list(simulate.SIMULATED_VARIANTS) + list(simulate.ALGORITHM_VARIANTS)
    assert list(words.VARIANT_LABELS) == names
    assert list(words.VARIANT_DESCRIPTIONS) == names
    assert all(words.VARIANT_LABELS.values()) and all(words.VARIANT_DESCRIPTIONS.values())
    assert words.VARIANT_LABELS["correct"] == "Correct algorithm"
    assert words.VARIANT_LABELS["multi_draft"] == "Multi-draft (SpecInfer)"


def test_a_variant_is_called_a_bug_exactly_when_it_is_a_deliberately_broken_rule():
    # The Losslessness lab's menu: "Bug: ..." exactly when not lossless (strict is lossless).
    for name, spec in simulate.SIMULATED_VARIANTS.items():
        assert words.VARIANT_LABELS[name].startswith("Bug: ") == (not spec.lossless), name
    # The Variants lab's rules: typical acceptance is lossy by design, not a bug.
    for name in simulate.ALGORITHM_VARIANTS:
        assert words.VARIANT_LABELS[name].startswith("Bug: ") == ("no_residual" in name), name


def test_every_question_kind_has_a_menu_label():
    assert tuple(words.QUESTION_KIND_LABELS) == quiz.QUESTION_KINDS
