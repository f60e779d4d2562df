"""The coloured generated text as markdown: escaped, wrapping by token, every mark named."""

from specdec_ui.token_text import (
    TOKEN_MARKS,
    ZERO_WIDTH_SPACE,
    legend_markdown,
    shown_token,
    token_markdown,
)


def test_each_token_is_escaped_on_its_colour_and_round_endings_carry_their_symbol():
    text = token_markdown(
        [("**x**", "prompt"), (" [a](b)", "accepted"), ("\n", "bonus"), ("z", "resampled")]
    )
    assert text.startswith(r":gray-background[\*\*x\*\*]")
    assert r" :blue-background[\[a\]\(b\)]" in text  # a leading space is a gap, outside
    assert ":yellow-background[↵★]  \n" in text  # a newline token ends the line
    assert text.endswith(f"{ZERO_WIDTH_SPACE}:violet-background[z↻]")
    assert "<" not in text and "**" not in text.replace(r"\*\*", "")


def test_tokens_of_spaces_or_nothing_stay_visible():
    assert shown_token("") == "␣" and shown_token("\t") == "→"
    assert token_markdown([("   ", "accepted")]) == ":blue-background[␣]"


def test_the_legend_names_each_kind_once_in_order_of_appearance():
    legend = legend_markdown(["prompt", "accepted", "prompt", "plain"])
    assert legend.count("background[") == 3
    assert legend.index("prompt") < legend.index("kept") < legend.index("plain step")
    assert "○" in legend and TOKEN_MARKS["plain"].colour == "orange"
