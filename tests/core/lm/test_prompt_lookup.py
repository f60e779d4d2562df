"""Prompt lookup proposals on hand-made token sequences, and its one-hot verification."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core import InvalidParameterError
from specdec_core.lm.prompt_lookup import PromptLookupDraft, find_continuation


def test_a_trigram_match_proposes_what_followed_it():
    #         0  1  2  3  4  5  6  7  8  9
    tokens = [5, 6, 7, 8, 9, 1, 2, 5, 6, 7]
    assert find_continuation(tokens, 3) == [8, 9, 1]
    assert find_continuation(tokens, 1) == [8]


def test_no_match_proposes_nothing():
    assert find_continuation([1, 2, 3, 4, 5], 4) == []
    assert find_continuation([7], 4) == []  # nothing before the last token
    assert find_continuation([], 4) == []


def test_the_longest_suffix_wins_then_shorter_ones():
    # the last 3 tokens (1, 2, 3) never occurred before; (2, 3) did, at 4..5 -> 9
    tokens = [2, 3, 8, 0, 2, 3, 9, 1, 2, 3]
    assert find_continuation(tokens, 2) == [9, 1]
    # only the last token (3) occurred before: unigram fallback
    assert find_continuation([3, 4, 0, 0, 5, 3], 2) == [4, 0]
    assert find_continuation([3, 4, 0, 0, 5, 3], 2, max_ngram=1) == [4, 0]


def test_the_most_recent_of_several_matches_is_used():
    tokens = [1, 2, 10, 1, 2, 20, 1, 2]
    assert find_continuation(tokens, 1) == [20]


def test_overlapping_matches_continue_the_period():
    # (1, 2) occurs at 0, 2 and (as the suffix) 4: the latest earlier one is at 2,
    # and what followed it runs into the suffix
    tokens = [1, 2, 1, 2, 1, 2]
    assert find_continuation(tokens, 4) == [1, 2]
    assert find_continuation([4, 4, 4, 4], 3) == [4]  # (4, 4, 4) at 0 -> 4


def test_a_match_at_the_end_gives_fewer_than_k_tokens():
    tokens = [3, 4, 3, 4]  # (3, 4) at 0; only 2 tokens follow it
    assert find_continuation(tokens, 5) == [3, 4]


def test_token_ids_beyond_one_byte_are_matched_as_whole_tokens():
    # 256 = bytes 00 01 00 00 and 1 = 01 00 00 00: a byte search must not mix tokens
    tokens = [256, 1, 7, 65536, 1, 0, 1]
    assert find_continuation(tokens, 2, max_ngram=1) == [0, 1]
    assert find_continuation([1, 256, 9, 1, 256], 1) == [9]
    # bytes of (256, 0) are 00 01 00 00 00 00 00 00: "01 00 00 00" (token 1) sits inside,
    # misaligned; it must not count as an earlier 1
    assert find_continuation([256, 0, 5, 1], 2, max_ngram=1) == []


def test_bad_k_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="k is -1"):
        find_continuation([1, 2], -1)
    with pytest.raises(InvalidParameterError, match="max_ngram"):
        PromptLookupDraft(None, max_ngram=0)


def test_the_draft_object_proposes_and_holds_no_cache():
    from specdec_core.lm.protocol import LanguageModel, Proposer

    draft = PromptLookupDraft(None).fresh()
    assert isinstance(draft, Proposer) and not isinstance(draft, LanguageModel)
    assert draft.propose(np.array([5, 6, 7, 5, 6]), 2) == [7, 5]
    assert draft.length == 0
    draft.rollback(0)
    with pytest.raises(InvalidParameterError, match="no tokens"):
        draft.rollback(3)
