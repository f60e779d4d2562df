"""Tokenizer round trip, its errors, and the corpus split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import SpecDecError
from specdec_core.lm import (
    MAX_PROMPT_CHARS,
    PromptError,
    encode_prompt,
    load_corpus,
    load_tokenizer,
)
from specdec_core.lm.corpus import is_validation, paragraphs, split_documents
from specdec_core.lm.tokenizer import Tokenizer, train_bpe

TOK = load_tokenizer()


def test_vocabulary_has_512_distinct_tokens_built_from_the_alphabet():
    assert TOK.vocab_size == 512
    assert len(set(TOK.vocab)) == 512
    assert set("".join(TOK.vocab)) == set(TOK.alphabet)


def test_round_trip_on_the_whole_validation_text_and_compression():
    text = load_corpus().validation_text
    ids = TOK.encode(text)
    assert TOK.decode(ids) == text
    assert 1.8 < len(text) / len(ids) < 3.0  # BPE-512 merges about two characters per token


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(load_tokenizer().alphabet)), max_size=80))
def test_round_trip_on_any_text_over_the_alphabet(text):
    ids = TOK.encode(text)
    assert TOK.decode(ids) == text
    assert all(0 <= i < TOK.vocab_size for i in ids)


def test_json_round_trip_gives_the_same_encoding():
    again = Tokenizer.from_json(TOK.to_json())
    text = "def f(x):\n    return x ** 2  # the square"
    assert again.encode(text) == TOK.encode(text)


def test_training_is_deterministic_and_merges_the_most_frequent_pair_first():
    text = "low lower lowest low low newer newest"
    a, b = train_bpe(text, 30), train_bpe(text, 30)
    assert a.merges == b.merges
    assert a.merges[0] in {(" ", "l"), ("l", "o"), ("o", "w")}
    assert a.decode(a.encode(text)) == text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("x" * (MAX_PROMPT_CHARS + 1), "at most"),
        ("Ωmega", "'Ω'"),  # a letter of another script has no ASCII spelling (issue 33)
        ("tab\there", "'\\t'"),
        ("emoji 🙂", "position 7"),
    ],
)
def test_bad_prompts_raise_a_clear_error(text, fragment):
    with pytest.raises(PromptError) as info:
        encode_prompt(TOK, text)
    assert isinstance(info.value, SpecDecError)
    assert fragment in str(info.value)


def test_a_prompt_at_the_cap_is_accepted():
    assert len(encode_prompt(TOK, "a" * MAX_PROMPT_CHARS)) >= 1


def test_split_is_by_document_and_validation_drops_paragraphs_seen_in_training():
    corpus = load_corpus()
    train_paragraphs = {p.strip() for t in corpus.train for p in paragraphs(t)}
    assert corpus.validation
    for text in corpus.validation:
        assert not any(p.strip() in train_paragraphs for p in paragraphs(text))
    assert 0.02 < len(corpus.validation_text) / len(corpus.train_text) < 0.2


def test_split_documents_on_a_toy_corpus():
    names = [f"doc{i}" for i in range(40)]
    val_name = next(n for n in names if is_validation(n))
    train_name = next(n for n in names if not is_validation(n))
    docs = [
        {"name": train_name, "text": "shared\n\nonly train"},
        {"name": val_name, "text": "shared\n\nnew words"},
    ]
    train, validation = split_documents(docs)
    assert train == ("shared\n\nonly train",)
    assert validation == ("new words",)
