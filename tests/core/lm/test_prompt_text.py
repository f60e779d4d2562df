"""Issue 33, item 17: a prompt typed on a phone (curly quotes, accents) is read as plain
ASCII, every mapping reported; what cannot be mapped is named with its position and why."""

from __future__ import annotations

import pytest

from specdec_core import SpecDecError
from specdec_core.lm import (
    MAX_PROMPT_CHARS,
    PromptError,
    ascii_prompt,
    encode_prompt,
    load_tokenizer,
)

TOK = load_tokenizer()


@pytest.mark.parametrize(
    ("typed", "read", "positions"),
    [
        ("Zürich café", "Zurich cafe", (2, 11)),
        ("“Hello,” she said", '"Hello," she said', (1, 8)),
        ("it’s ‘fine’", "it's 'fine'", (3, 6, 11)),
        ("a – b — c …", "a - b - c ...", (3, 7, 11)),
        ("x\u00a0y\u202fz", "x y z", (2, 4)),
        ("Straße, naïve, Æsop, ﬁne", "Strasse, naive, AEsop, fine", (5, 11, 16, 22)),
        ("plain ASCII stays", "plain ASCII stays", ()),
    ],
)
def test_typographic_characters_and_accents_are_read_as_ascii(typed, read, positions):
    got = ascii_prompt(typed)
    assert got.text == read and got.text.isascii()
    assert tuple(pos for pos, _, _ in got.mapped) == positions
    for pos, ch, ascii_ in got.mapped:  # each mapping names the typed character
        assert typed[pos - 1] == ch and ascii_.isascii()


def test_the_engine_encodes_the_mapped_text():
    assert encode_prompt(TOK, "Zürich café") == TOK.encode("Zurich cafe")
    assert encode_prompt(TOK, "it’s “ok”") == TOK.encode('it\'s "ok"')


@pytest.mark.parametrize(
    ("typed", "fragments"),
    [
        ("emoji 🙂 here", ("'🙂'", "U+1F642", "position 7", "symbol or emoji")),
        ("Ωmega", ("'Ω'", "position 1", "Greek script")),
        ("日本", ("position 1", "CJK")),
        ("a\u200bb", ("U+200B", "position 2", "control or formatting")),
        ("café ✓", ("'✓'", "position 6")),  # the first unmappable one, after a mapped é
    ],
)
def test_what_cannot_be_mapped_is_named_with_its_position_and_why(typed, fragments):
    with pytest.raises(PromptError) as info:
        encode_prompt(TOK, typed)
    assert isinstance(info.value, SpecDecError) and isinstance(info.value, ValueError)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_the_length_limit_counts_the_typed_characters():
    assert encode_prompt(TOK, "é" * MAX_PROMPT_CHARS)
    with pytest.raises(PromptError, match="at most"):
        encode_prompt(TOK, "é" * (MAX_PROMPT_CHARS + 1))
