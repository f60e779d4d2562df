"""Issue 33, items 17 and 18 in the pages: typed text a phone or a European keyboard
makes (curly quotes, accents, decimal commas, K = 2.5) is read or refused in words that
name the entry; never a traceback, never a silent fix."""

from __future__ import annotations

import re

from specdec_ui.model_pairs import work as model_pairs_work
from tests.app.conftest import open_page

ROUND = "pages/scripts/round.py"
MODEL_PAIRS = "pages/scripts/model_pairs.py"


def plain(text: str) -> str:
    """Undo md_escape: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", text)


def custom_round():
    at = open_page(ROUND)
    at.radio(key="round_mode").set_value("Custom").run()
    assert not at.exception and not at.error
    return at


def test_a_decimal_comma_is_named_with_its_entry_and_what_to_type():
    at = custom_round()
    at.text_input(key="round_p_text").input("0,4; 0,25; 0,2; 0,1; 0,05").run()
    assert not at.exception and len(at.error) == 1
    message = plain(at.error[0].value)
    assert "entry 1 ('0,4')" in message and "decimal comma" in message
    assert "type 0.4 with a point" in message and "sum to" not in message
    at.text_input(key="round_p_text").input("0.4; 0.25; 0.2; 0.1; 0.05").run()
    assert not at.exception and not at.error
    at.text_input(key="round_coins_text").input("0.1, 0,95").run()  # coins too
    assert not at.exception
    assert any("coins: entry 2 ('0,95')" in plain(e.value) for e in at.error)


def test_k_of_two_and_a_half_is_refused_not_cut_to_two():
    at = custom_round()
    at.number_input(key="round_k").set_value(2.5).run()
    assert not at.exception and len(at.error) == 1
    message = plain(at.error[0].value)
    assert "K must be a whole number, got 2.5" in message and "1 to 8" in message
    at.number_input(key="round_k").set_value(4.0).run()  # the float field's whole number
    assert not at.exception and not at.error
    assert at.query_params["k"] == "4"  # the link keeps a whole number


def test_a_prompt_typed_on_a_phone_is_read_as_ascii_and_the_page_says_so():
    prompt = "“Zürich café” isn’t"
    at = open_page(MODEL_PAIRS, {"tokens": "15"})
    at.text_area(key="lm_prompt").set_value(prompt).run()
    assert not at.exception and not at.error
    notes = [plain(c.value) for c in at.caption if "Read as plain ASCII" in c.value]
    assert len(notes) == 1
    assert '“ as "' in notes[0] and "ü as u" in notes[0] and "’ as '" in notes[0]
    assert "5 characters of your prompt, the first at position 1" in notes[0]
    read = '"Zurich cafe" isn\'t'
    assert any(t.value.startswith(read) for t in at.text)  # the plain text: what was read
    assert model_pairs_work.prompt_note("plain text") is None


def test_a_character_that_cannot_be_mapped_is_named_with_its_position():
    at = open_page(MODEL_PAIRS, {"tokens": "15"})
    at.text_area(key="lm_prompt").set_value("café 🙂").run()
    assert not at.exception and len(at.error) == 1
    message = plain(at.error[0].value)
    assert "'🙂'" in message and "position 6" in message and "emoji" in message


def test_a_link_with_k_of_two_and_a_half_warns_with_the_range():
    at = open_page(ROUND, {"mode": "custom", "k": "2.5"})
    assert not at.exception
    warning = plain(at.warning[0].value)
    assert "'k'" in warning and "'2.5' is not a whole number; allowed: 1 to 8" in warning
    assert at.number_input(key="round_k").value == 3  # the default, said in the warning
