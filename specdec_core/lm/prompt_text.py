"""Typed prompt text -> the plain ASCII the shipped models read (issue 33, item 17).

The tokenizer's alphabet is the characters of its training text: ASCII letters, digits,
punctuation, space and newline (:mod:`.tokenizer`). A phone types curly quotes and
apostrophes by default, and a student's name or city may carry an accent ("Zürich
café"), so these are mapped to the ASCII a keyboard would type, and every mapping is
reported (the page says which characters it read differently; never a silent fix):

- typographic punctuation by the table :data:`TYPOGRAPHIC` (quotes, apostrophes, dashes,
  the ellipsis, non-breaking and thin spaces);
- a Latin letter by its compatibility decomposition (Unicode NFKD) without the combining
  marks ("ü" -> "u", "é" -> "e", "ﬁ" -> "fi"), or by :data:`LATIN_LETTERS` for the few
  that have none ("ß" -> "ss", "ø" -> "o").

Anything else (an emoji, a letter of another script, a symbol) has no ASCII spelling
that keeps its meaning: :class:`PromptError` names the character, its position in the
typed text (1-based) and why.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from .errors import PromptError

TYPOGRAPHIC: dict[str, str] = {
    "\u2018": "'",  # left single quotation mark
    "\u2019": "'",  # right single quotation mark (the phone's apostrophe)
    "\u201a": "'",  # single low-9 quotation mark
    "\u201b": "'",  # single high-reversed-9 quotation mark
    "\u2032": "'",  # prime
    "\u2039": "'",  # single left-pointing angle quotation mark
    "\u203a": "'",  # single right-pointing angle quotation mark
    "\u201c": '"',  # left double quotation mark
    "\u201d": '"',  # right double quotation mark
    "\u201e": '"',  # double low-9 quotation mark
    "\u201f": '"',  # double high-reversed-9 quotation mark
    "\u2033": '"',  # double prime
    "\u00ab": '"',  # left-pointing double angle quotation mark
    "\u00bb": '"',  # right-pointing double angle quotation mark
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u2012": "-",  # figure dash
    "\u2013": "-",  # en dash
    "\u2014": "-",  # em dash
    "\u2015": "-",  # horizontal bar
    "\u2212": "-",  # minus sign
    "\u2026": "...",  # horizontal ellipsis
    "\u00a0": " ",  # no-break space
    "\u2002": " ",  # en space
    "\u2003": " ",  # em space
    "\u2007": " ",  # figure space
    "\u2009": " ",  # thin space
    "\u200a": " ",  # hair space
    "\u202f": " ",  # narrow no-break space
}
LATIN_LETTERS: dict[str, str] = {
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "œ": "oe",
    "Œ": "OE",
    "ø": "o",
    "Ø": "O",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "ı": "i",
}


@dataclass(frozen=True)
class PromptText:
    """A typed prompt as the models read it, and what was mapped to get there.

    ``mapped``: (position in the typed text, 1-based; the typed character; its ASCII).
    """

    typed: str
    text: str
    mapped: tuple[tuple[int, str, str], ...]


def _latin(ch: str) -> str | None:
    """A Latin letter's ASCII spelling (NFKD minus combining marks), or None."""
    if ch in LATIN_LETTERS:
        return LATIN_LETTERS[ch]
    if not unicodedata.name(ch, "").startswith("LATIN "):
        return None
    bare = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return bare if bare and bare.isascii() and bare.isalpha() else None


def _why(ch: str) -> str:
    """Why a character has no ASCII spelling here, from its Unicode category and name."""
    name = unicodedata.name(ch, "")
    category = unicodedata.category(ch)
    if category.startswith("L"):
        first = name.split(" ")[0] if name else "another"
        script = first if len(first) <= 3 else first.title()  # CJK, Greek, Cyrillic
        return f"it is a letter of the {script} script, which has no plain-ASCII spelling"
    if category.startswith("C"):
        return "it is an invisible control or formatting character"
    if category.startswith("S"):
        return "it is a symbol or emoji, which has no plain-ASCII spelling"
    return "it has no plain-ASCII spelling that keeps its meaning"


def ascii_prompt(text: str) -> PromptText:
    """``text`` with typographic punctuation and Latin letters mapped to ASCII.

    Raises :class:`PromptError` for the first character that cannot be mapped, naming it,
    its position (1-based) and why. ASCII characters pass through unchanged (the
    tokenizer checks them).
    """
    if not isinstance(text, str):
        raise PromptError(f"the prompt must be text, got {type(text).__name__}.")
    if text.isascii():
        return PromptText(text, text, ())
    out: list[str] = []
    mapped: list[tuple[int, str, str]] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            continue
        ascii_ = TYPOGRAPHIC.get(ch) or _latin(ch)
        if ascii_ is None:
            name = unicodedata.name(ch, "unnamed").lower()
            raise PromptError(
                f"the prompt has the character {ch!r} (U+{ord(ch):04X}, {name}) at position "
                f"{i + 1}, which the models here cannot read: {_why(ch)}. They read ASCII "
                "letters, digits, punctuation, spaces and newlines (curly quotes, dashes and "
                "accented Latin letters are read as their plain forms)."
            )
        out.append(ascii_)
        mapped.append((i + 1, ch, ascii_))
    return PromptText(text, "".join(out), tuple(mapped))
