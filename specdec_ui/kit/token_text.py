"""Generated text with every token on a coloured background, as Streamlit markdown.

Markdown text wraps by token at any width (a 390 px phone, a projector) and Streamlit
draws its ``:color-background[...]`` and ``:color[...]`` marks in colours made for the
viewer's light or dark theme. The background alone is a pale tint that a projector washes
out (and near black in dark mode), so each token is also written in its colour's strong
text shade (Streamlit's palette: 4.6-10:1 against its tint in both themes), in five hues a
projector keeps apart: gray, blue, violet, yellow, green (and red for a rejection).
Every token's text goes through ``md_escape``, so a prompt such as ``**x**`` or
``[a](b)`` shows as typed. Colour never carries meaning alone (WCAG 1.4.1; issue 33,
item 11): every generated token carries its symbol (✓ kept draft, ↻ resampled, ★ bonus,
○ plain step), the typed prompt starts with ✎ and its tokens carry none, and the legend
names every colour and symbol. The symbols are text, so a screen reader reads them too.
Pure functions (no Streamlit): the page passes the string to ``st.markdown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from specdec_ui.kit.text import md_escape
from specdec_ui.kit.theme import STATUS_SYMBOL


@dataclass(frozen=True)
class TokenMark:
    """How one kind of token is shown: Streamlit colour name, symbol, words."""

    colour: str
    symbol: str
    word: str
    at_start: bool = False  # the symbol opens a run of this kind instead of ending each token


# How a token was produced (the engine's kinds) or decided (a draft's status in a round).
TOKEN_MARKS = {
    "prompt": TokenMark("gray", "✎", "prompt (typed; its tokens carry no mark)", at_start=True),
    "accepted": TokenMark("blue", STATUS_SYMBOL["accepted"], "draft token, kept"),
    "resampled": TokenMark("violet", STATUS_SYMBOL["resampled"], "resampled after a rejection"),
    "bonus": TokenMark("yellow", STATUS_SYMBOL["bonus"], "bonus token from the target"),
    "plain": TokenMark("green", "○", "plain step: the target's own token (no draft)"),
    "kept": TokenMark("blue", STATUS_SYMBOL["accepted"], "kept"),
    "rejected": TokenMark("red", STATUS_SYMBOL["rejected"], "rejected"),
    "discarded": TokenMark("gray", STATUS_SYMBOL["discarded"], "discarded (never checked)"),
}
ZERO_WIDTH_SPACE = "\u200b"  # lets a line break between two tokens that touch


def shown_token(text: str) -> str:
    """Visible form of a token's text: newline '↵', tab '→', nothing at all '␣'."""
    return text.replace("\n", "↵").replace("\t", "→") or "␣"


def _marked(colour: str, text: str) -> str:
    """``text`` (already escaped) in ``colour``'s text shade on its background tint."""
    return f":{colour}-background[:{colour}[{text}]]"


def _one(text: str, kind: str, first: bool) -> str:
    """One token; ``first``: it opens a run of its kind (where an ``at_start`` mark goes)."""
    mark = TOKEN_MARKS[kind]
    shown = shown_token(text)
    core = md_escape(shown.lstrip(" ") or "␣")  # a token of spaces only stays visible
    gap = " " if shown != shown.lstrip(" ") else ZERO_WIDTH_SPACE  # a leading space is a gap
    end = "  \n" if "\n" in text else ""  # a newline in the token ends the line
    if not mark.at_start:
        core += mark.symbol
    elif first:
        core = f"{mark.symbol} {core}"
    return f"{gap}{_marked(mark.colour, core)}{end}"


def token_markdown(pieces: Iterable[tuple[str, str]]) -> str:
    """The tokens ``(text, kind)`` as one markdown paragraph, each on its colour."""
    out, before = [], None
    for text, kind in pieces:
        out.append(_one(text, kind, kind != before))
        before = kind
    return "".join(out).lstrip(ZERO_WIDTH_SPACE + " ")


def legend_markdown(kinds: Sequence[str]) -> str:
    """One line naming the colour (and symbol) of each kind in ``kinds``, in that order."""
    marks = [TOKEN_MARKS[k] for k in dict.fromkeys(kinds)]
    return " ".join(_marked(m.colour, md_escape(f"{m.symbol} {m.word}".strip())) for m in marks)
