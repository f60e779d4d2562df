"""The coloured generated text as markdown: escaped, wrapping by token, every mark named."""

from specdec_ui.kit.token_text import (
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
    assert text.startswith(r":gray-background[:gray[✎ \*\*x\*\*]]")  # ✎ opens the prompt
    assert r" :blue-background[:blue[\[a\]\(b\)✓]]" in text  # a leading space: a gap outside
    assert ":yellow-background[:yellow[↵★]]  \n" in text  # a newline token ends the line
    assert text.endswith(f"{ZERO_WIDTH_SPACE}:violet-background[:violet[z↻]]")
    assert "<" not in text and "**" not in text.replace(r"\*\*", "")


def test_tokens_of_spaces_or_nothing_stay_visible():
    assert shown_token("") == "␣" and shown_token("\t") == "→"
    assert token_markdown([("   ", "accepted")]) == ":blue-background[:blue[␣✓]]"


def test_the_legend_names_each_kind_once_in_order_of_appearance():
    legend = legend_markdown(["prompt", "accepted", "prompt", "plain"])
    assert legend.count("background[") == 3
    assert legend.index("prompt") < legend.index("kept") < legend.index("plain step")
    assert "○" in legend and TOKEN_MARKS["plain"].colour == "green"


def test_each_kind_is_written_in_its_colours_strong_text_shade_in_distinct_hues():
    """Issue 25, item 5: a projector washes out the pale tints; the text shade carries the
    colour. The five kinds of the generated text have five different hues."""
    text = token_markdown([("a", kind) for kind in ("prompt", "accepted", "resampled")])
    for colour in ("gray", "blue", "violet"):
        assert f":{colour}-background[:{colour}[" in text
    text_kinds = ("prompt", "accepted", "resampled", "bonus", "plain")
    assert len({TOKEN_MARKS[k].colour for k in text_kinds}) == 5
    chips = ("kept", "rejected", "discarded")
    assert len({TOKEN_MARKS[k].colour for k in chips}) == 3


def test_no_kind_is_told_by_colour_alone():
    """Issue 33, item 11: the prompt and the kept drafts (grey and blue) have marks too:
    ✎ opens each run of prompt tokens, ✓ ends every kept draft; the legend shows both."""
    text = token_markdown(
        [("Return", "prompt"), (" the", "prompt"), (" number", "accepted"), (" of", "accepted")]
    )
    assert text.count("✎") == 1 and text.startswith(":gray-background[:gray[✎ Return]]")
    assert ":gray-background[:gray[the]]" in text  # later prompt tokens: no mark
    assert text.count("✓") == 2 and text.endswith(":blue-background[:blue[of✓]]")
    symbols = {kind: TOKEN_MARKS[kind].symbol for kind in ("prompt", "accepted", "resampled")}
    assert all(symbols.values()) and len({*symbols.values()}) == 3
    symbols |= {kind: TOKEN_MARKS[kind].symbol for kind in ("bonus", "plain")}
    assert all(symbols.values()) and len({*symbols.values()}) == 5
    legend = legend_markdown(["prompt", "accepted"])
    assert "✎ prompt" in legend and "✓ draft token, kept" in legend
