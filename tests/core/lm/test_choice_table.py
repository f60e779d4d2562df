"""The choice table and the lookup + table draft (issue 12), on hand-made sequences, and
the shipped choices checked against the live target."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core.errors import InvalidParameterError
from specdec_core.lm import load_tokenizer
from specdec_core.lm import pairs as pairs_module
from specdec_core.lm.choice_table import (
    LOOKUP_HIT,
    MIN_EXPECTED_TOKENS,
    ChoiceTable,
    LookupTableDraft,
    context_keys,
    most_frequent_choice,
)

V = 10


def table(seqs, labels, order=3):
    return ChoiceTable.count([np.array(s) for s in seqs], [np.array(x) for x in labels], V, order)


def test_context_keys_read_the_window_as_a_base_v_number():
    assert context_keys(np.array([1, 2, 3, 4]), 2, V).tolist() == [12, 23, 34]
    assert context_keys(np.array([1, 2, 3]), 3, V).tolist() == [123]


def test_the_most_frequent_choice_wins_and_ties_go_to_the_smaller_id():
    keys = np.array([5, 5, 5, 7, 7])
    choices = np.array([3, 3, 1, 4, 2])
    ctx, choice, share = most_frequent_choice(keys, choices, V)
    assert ctx.tolist() == [5, 7]
    assert choice.tolist() == [3, 2]  # 3 seen twice; 4 and 2 tie -> 2
    assert share.tolist() == pytest.approx([2 / 3, 1 / 2])


def test_the_longest_known_context_decides():
    # after (1, 2) the target chose 7; after 2 alone (in another context) it chose 5 twice
    t = table([[1, 2, 9], [3, 2, 0], [4, 2, 0]], [[0, 7, 0], [0, 5, 0], [0, 5, 0]])
    assert t.lookup([1, 2]) == (7, 2, 1.0)
    assert t.lookup([6, 2]) == (5, 1, pytest.approx(2 / 3))  # (6, 2) unseen: back off
    assert t.predict([8, 8]) == 0  # nothing known


def test_a_context_never_crosses_into_the_next_sequence():
    t = table([[1, 2], [3, 4]], [[8, 8], [9, 9]], order=2)
    assert t.lookup([2, 3]) == (9, 1, 1.0)  # (2, 3) spans two sequences: never counted


def test_bad_tables_are_clear_errors():
    with pytest.raises(InvalidParameterError, match="order"):
        table([[1]], [[1]], order=5)
    with pytest.raises(InvalidParameterError, match="2 sequences but 1"):
        ChoiceTable.count([np.array([1]), np.array([2])], [np.array([1])], V)
    with pytest.raises(InvalidParameterError, match="3 tokens but 2 choices"):
        table([[1, 2, 3]], [[1, 2]])


def test_the_draft_copies_a_lookup_match_then_fills_from_the_table():
    t = table([[5, 6, 7]], [[6, 7, 1]])  # the table always expects 5 6 7 1
    draft = LookupTableDraft(t, None)
    text = [5, 6, 7, 8, 5, 6]  # "5 6" was followed by 7 8 before
    guesses, sure = draft.guesses(text, 4)
    assert guesses[:2] == [7, 8]  # the lookup: what followed "5 6" (then the suffix)
    assert sure[:2] == [LOOKUP_HIT[2]] * 2
    assert len(guesses) == 4  # the rest from the table, read after the guesses
    assert draft.propose(text, 4) == guesses  # confident enough: proposed


def test_the_draft_stays_quiet_when_its_guesses_are_unlikely():
    # the target chose 1 after 3 once and 2 after 3 once: a coin flip
    t = table([[3, 0, 3, 0]], [[1, 0, 2, 0]], order=1)
    draft = LookupTableDraft(t, None)
    guesses, sure = draft.guesses([3], 3)
    assert sure[0] == 0.5
    expected = 1 + 0.5 + 0.5 * sure[1] + 0.5 * sure[1] * sure[2]
    assert expected < MIN_EXPECTED_TOKENS and draft.propose([3], 3) == []


def test_the_draft_holds_no_cache():
    draft = LookupTableDraft(table([[1, 2]], [[2, 3]]), None).fresh()
    assert draft.length == 0
    draft.rollback(0)
    with pytest.raises(InvalidParameterError, match="no tokens"):
        draft.rollback(3)


def test_bad_arrays_are_a_clear_error():
    with pytest.raises(InvalidParameterError, match="1 to 4 orders"):
        ChoiceTable([], [], [], V)


def test_a_table_survives_its_compact_arrays():
    t = table([[1, 2, 3, 1, 2, 4], [2, 3, 1]], [[2, 3, 1, 2, 4, 0], [3, 1, 1]])
    back = ChoiceTable.from_arrays(t.to_arrays())
    assert back.order == t.order and back.vocab == V
    for a, b in zip(t.keys + t.choice, back.keys + back.choice, strict=True):
        assert np.array_equal(a, b)
    for a, b in zip(t.share, back.share, strict=True):
        assert np.allclose(a, b, atol=0.5 / 255)


def test_the_shipped_table_holds_the_targets_own_choices():
    """On the target's training text, the table's choice after the last 4 tokens is what
    the live target computes most of the time (a shuffled or stale table would not be)."""
    pairs_module.checked_asset("choice_table.npz")  # its SHA-256 matches
    draft, target = pairs_module.load_pair("lookup-table-to-gpt-4L")
    ids = pairs_module.corpus_token_ids()
    hits = total = 0
    for start in (0, 256 * 7, 256 * 1000, 256 * 2000):  # windows as the tool read them
        live = target.fresh().extend(ids[start : start + 64]).argmax(axis=1)
        for j in range(4, 64):
            hits += draft.table.predict(ids[start : start + j + 1]) == live[j]
            total += 1
    assert hits / total > 0.6  # 0.81 when written


def test_the_shipped_table_is_well_formed():
    draft, _ = pairs_module.load_pair("lookup-table-to-gpt-4L")
    t = draft.table
    assert t.order == 4 and t.vocab == load_tokenizer().vocab_size
    assert [k.size for k in t.keys] == sorted(k.size for k in t.keys)  # more long contexts
    assert all(np.all(np.diff(k) > 0) for k in t.keys)  # sorted, unique
    assert all(((s > 0) & (s <= 1)).all() for s in t.share)
