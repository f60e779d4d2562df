"""AppTest of the "Step through a round" page (pages/scripts/round.py)."""

from __future__ import annotations

import logging
import re

import pytest

import specdec_core as sc
from specdec_ui.round.codec import ROUND_KEYS
from specdec_ui.words import example_note, example_source
from tests.app.conftest import figures, open_page
from tests.app.shown_tables import shown_table

PAGE = "pages/scripts/round.py"


def plain(text: str) -> str:
    """Undo md_escape: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", text)


def block(at, key: str):
    """The container with ``key`` (st.container(key=...)) in the element tree."""
    stack = [at.main]
    while stack:
        node = stack.pop()
        if getattr(node, "type", "") == "flex_container" and getattr(node, "key", None) == key:
            return node
        stack.extend(getattr(node, "children", {}).values())
    raise AssertionError(f"no container with key {key!r}")


def why_texts(at) -> list[str]:
    """The current step's title and "why" text (inside the round_why container)."""
    return [plain(m.value) for m in block(at, "round_why").markdown]


def output_line(at) -> str:
    return block(at, "round_output").text[0].value


def drafts_line(at) -> str:
    return next(plain(c.value) for c in at.caption if c.value.startswith("Drafts"))


def step_heading(at) -> str:
    """The progress bar's "Step N of M" label; the page prints it only there (issue 10)."""
    labels = [el.proto.text for el in at.get("progress")]
    headings = [h.value for h in at.header]
    assert len(labels) == 1 and not any(h.startswith("Step ") for h in headings), headings
    return labels[0]


def click(at, key: str):
    at.button(key=key).click().run()
    assert not at.exception
    return at


def play_by_next(at) -> int:
    clicks = 0
    while not at.button(key="round_next").disabled:
        click(at, "round_next")
        clicks += 1
    return clicks


def traces(at) -> dict[str, list]:
    out = {}
    for fig in figures(at):
        for trace in fig["data"]:
            out[trace.get("name")] = trace
    return out


def test_default_render():
    at = open_page(PAGE)
    assert not at.exception
    assert at.radio(key="round_mode").value == "Preset"
    assert at.selectbox(key="round_preset").value == "000-round"
    assert step_heading(at).startswith("Step 1 of 9")
    assert output_line(at) == "(no token emitted yet)"
    assert at.button(key="round_back").disabled and at.button(key="round_first").disabled
    assert not at.warning and not at.error
    # the seed's lesson, the shareable link, the source of the core functions
    assert any("When the target likes a draft" in plain(i.value) for i in at.info)
    assert "mode=preset&preset=000-round&step=0" in at.code[0].value
    assert dict(at.query_params) == {"mode": "preset", "preset": "000-round", "step": "0"}
    sources = "\n".join(c.value for c in at.code)
    for name in ("def verify_round", "def acceptance_probability", "def residual_distribution"):
        assert name in sources
    assert len(figures(at)) == 2  # p/q bars at position 1 and the chips


@pytest.mark.parametrize("key", ROUND_KEYS)
def test_each_preset_renders_and_plays_to_its_outcome(key):
    scenario = sc.SCENARIOS[key]
    at = open_page(PAGE)
    at.selectbox(key="round_preset").set_value(key).run()
    assert not at.exception
    info = plain(at.info[0].value)
    assert scenario.lesson in info and example_source(scenario.source) in info
    assert "seed" not in info.lower()  # issue 25: the source documents by what they are
    if scenario.note:
        # The note leads with one plain sentence (markdown); its details follow as a caption.
        shown = " ".join(plain(m.value) for m in [*at.markdown, *at.caption])
        lead, _, details = example_note(scenario.note, scenario.source).partition(". ")
        assert lead.rstrip(".") + "." in shown and details in shown
    click(at, "round_last")
    line = output_line(at)
    expected = scenario.expected
    n_out = expected.get("n_emitted") or expected["n_accepted"] + 1
    assert line.count("·") + 1 == n_out
    if "emitted" in expected:
        assert [part.split(" ")[0] for part in line.split(" · ")] == list(expected["emitted"])
    word = "★ bonus" if expected["final_kind"] == "bonus" else "↻ resampled"
    assert line.endswith(word)
    assert "Round result" in why_texts(at)[0]


def test_seed_000_round_stepped_to_the_end():
    at = open_page(PAGE)
    seen = [" ".join(why_texts(at))]
    while not at.button(key="round_next").disabled:
        click(at, "round_next")
        seen.append(" ".join(why_texts(at)))
    assert len(seen) == 9  # draft, 3 x (ratio, coin), bonus, result
    assert seen[0].startswith("### The draft proposes K = 3 tokens: A (q = 0.30), B (q = 0.30), C")
    ratio_b = next(s for s in seen if "Position 2: B" in s)
    assert "ratio 0.833, a = 0.833" in ratio_b
    coin_b = next(s for s in seen if "Coin u = 0.72" in s)
    assert "< a = 0.833: keep B" in coin_b
    assert any("bonus token D from p at position 4" in s for s in seen)
    assert "4 tokens (A B C D)" in seen[-1] and "3 kept + 1 bonus" in seen[-1]
    assert output_line(at) == "A ✓ kept · B ✓ kept · C ✓ kept · D ★ bonus"
    assert drafts_line(at) == "Drafts: A ✓ kept · B ✓ kept · C ✓ kept"
    chips = traces(at)
    assert chips["★ bonus"]["x"] == [4] and chips["★ bonus"]["y"] == ["output"]
    assert chips["✓ kept"]["x"] == [1, 2, 3, 1, 2, 3]


def test_latex_has_the_current_numbers():
    at = open_page(PAGE)
    for _ in range(3):
        click(at, "round_next")  # draft, ratio A, coin A, ratio B
    assert r"\frac{0.25}{0.30}" in at.latex[0].value and "= 0.833" in at.latex[0].value
    data = traces(at)
    assert data["✓ keep if u < a"]["x"] == [pytest.approx(0.25 / 0.30)]
    click(at, "round_next")
    assert "u = 0.72 < a = 0.833" in at.latex[0].value
    assert traces(at)["coin u = 0.72"]["x"] == [0.72]


def test_rejection_preset_shows_the_seed_residual():
    at = open_page(PAGE)
    at.selectbox(key="round_preset").set_value("000-rejection").run()
    texts = []
    while not at.button(key="round_next").disabled:
        click(at, "round_next")
        texts.append(why_texts(at)[0])
        if "Normalise" in texts[-1]:
            break
    assert any("max(0, p − q) = [0.10, 0, 0.05, 0, 0]" in t for t in texts)
    assert "p_adj = [0.67, 0, 0.33, 0, 0]" in texts[-1]
    data = traces(at)
    assert data["max(0, p − q)"]["y"] == pytest.approx([0.10, 0, 0.05, 0, 0])
    assert data["p_adj = max(0, p − q) / Z"]["y"] == pytest.approx([2 / 3, 0, 1 / 3, 0, 0])
    assert r"0.67,\ 0,\ 0.33,\ 0,\ 0" in at.latex[0].value
    click(at, "round_last")
    assert output_line(at) == "A ✓ kept · A ↻ resampled"
    assert drafts_line(at) == "Drafts: A ✓ kept · B ✗ rejected · C – discarded"


def test_back_and_reset():
    at = open_page(PAGE)
    for _ in range(4):
        click(at, "round_next")
    assert step_heading(at).startswith("Step 5 of 9")
    assert output_line(at) == "A ✓ kept · B ✓ kept"
    click(at, "round_back")
    assert step_heading(at).startswith("Step 4 of 9")
    assert output_line(at) == "A ✓ kept"
    click(at, "round_first")
    assert step_heading(at).startswith("Step 1 of 9")
    assert at.button(key="round_back").disabled


def test_play_to_end_and_step_resets_on_a_new_round():
    at = open_page(PAGE)
    click(at, "round_last")
    assert step_heading(at).startswith("Step 9 of 9")
    assert at.button(key="round_next").disabled and at.button(key="round_last").disabled
    assert at.query_params["step"] == "8"
    at.selectbox(key="round_preset").set_value("003-B").run()
    assert step_heading(at).startswith("Step 1 of")


def test_bad_typed_p_names_the_entry_and_keeps_the_last_valid_round():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    assert not at.exception and not at.error
    click(at, "round_last")
    before = (output_line(at), step_heading(at))
    at.text_input(key="round_p_text").input("0.5, abc").run()
    assert not at.exception
    assert len(at.error) == 1
    message = plain(at.error[0].value)
    assert "entry 2" in message and "'abc'" in message and "not a number" in message
    assert (output_line(at), step_heading(at)) == before
    assert any("last valid" in plain(i.value) for i in at.info)
    at.text_input(key="round_p_text").input("0.40, 0.25, 0.20, 0.10, 0.05").run()
    assert not at.error


@pytest.mark.parametrize(
    ("entry", "text", "words"),
    [
        ("round_q_text", "0.5, 0.6", "sum to 1.1"),
        ("round_labels", "A, B", "got 2 labels for 5 tokens"),
        ("round_coins_text", "0.5, 1.5", "coin 2 is 1.5"),
        ("round_drafts_text", "A, Z, B", "entry 2 ('Z') is not one of the labels"),
        ("round_final_text", "nope", "final token ('nope')"),
    ],
)
def test_other_bad_custom_inputs(entry, text, words):
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key=entry).input(text).run()
    assert not at.exception
    assert words in plain(at.error[0].value)


def test_custom_round_typed_coins_reproduce_the_seed():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key="round_drafts_text").input("A, B, C").run()
    at.text_input(key="round_coins_text").input("0.5, 0.72, 0.9").run()
    at.text_input(key="round_final_text").input("D").run()
    click(at, "round_last")
    assert output_line(at) == "A ✓ kept · B ✓ kept · C ✓ kept · D ★ bonus"
    at.text_input(key="round_coins_text").input("0.5, 0.9").run()  # 0.9 >= 0.833 rejects B
    assert "final token ('D') has probability 0" in plain(at.error[0].value)
    assert "choose one of A, C" in plain(at.error[0].value)
    at.text_input(key="round_final_text").input("C").run()
    assert not at.error
    click(at, "round_last")
    assert output_line(at) == "A ✓ kept · C ↻ resampled"


def test_custom_k_and_seed_change_the_drafts_reproducibly():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.number_input(key="round_k").set_value(6).run()
    assert not at.exception
    drafts = drafts_line(at)
    assert drafts.count("·") == 5  # six drafts
    at.number_input(key="round_seed").set_value(7).run()
    seven = drafts_line(at)
    at.number_input(key="round_seed").set_value(0).run()
    assert drafts_line(at) == drafts
    at.number_input(key="round_seed").set_value(7).run()
    assert drafts_line(at) == seven
    assert "seed=7" in at.code[0].value and "k=6" in at.code[0].value


def test_bad_query_params_warn_and_fall_back():
    at = open_page(PAGE, {"mode": "custom", "k": "99", "p": "garbage", "step": "-5"})
    assert not at.exception
    warning = plain(at.warning[0].value)
    assert "'k'" in warning and "99 is out of range" in warning
    assert "'p'" in warning and "'step'" in warning
    assert at.number_input(key="round_k").value == 3
    assert at.text_input(key="round_p_text").value == "0.40, 0.25, 0.20, 0.10, 0.05"
    assert step_heading(at).startswith("Step 1 of")

    at = open_page(PAGE, {"preset": "nope", "mode": "sideways"})
    assert not at.exception
    warning = plain(at.warning[0].value)
    assert "'preset'" in warning and "'mode'" in warning
    assert at.selectbox(key="round_preset").value == "000-round"


def test_hostile_link_is_shown_as_text():
    hostile = {
        "mode": "custom",
        "labels": "<script>alert(1)</script>,B,C,D,E",
        "p": "0.2 0.2 0.2 0.2 0.2",
        "q": "0.2 0.2 0.2 0.2 0.2",
        "step": "999999999999",
    }
    at = open_page(PAGE, hostile)
    assert not at.exception
    warning = at.warning[0].value
    assert not re.search(r"(?<!\\)<", warning)  # no unescaped '<' reaches markdown
    assert "label 1 is 25 characters" in plain(warning) and "'step'" in warning
    assert at.text_input(key="round_labels").value == "A, B, C, D, E"


def test_step_beyond_the_round_warns():
    at = open_page(PAGE, {"preset": "003-E", "step": "40"})
    assert not at.exception
    assert "beyond the last step" in plain(at.warning[0].value)
    assert step_heading(at).startswith("Step 1 of")


def test_shared_link_reopens_the_step():
    at = open_page(PAGE, {"mode": "preset", "preset": "000-rejection", "step": "7"})
    assert not at.exception and not at.warning
    assert at.selectbox(key="round_preset").value == "000-rejection"
    assert step_heading(at).startswith("Step 8 of 10")
    assert "Normalise" in why_texts(at)[0]


def test_custom_link_round_trip():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key="round_labels").input("yes, no, maybe").run()
    at.text_input(key="round_p_text").input("1/2, 30%, 0.2").run()
    at.text_input(key="round_q_text").input("0.2, 0.2, 0.6").run()
    at.number_input(key="round_k").set_value(2).run()
    at.text_input(key="round_coins_text").input("0.3").run()
    for _ in range(3):
        click(at, "round_next")
    state = (output_line(at), step_heading(at), drafts_line(at))
    link = dict(at.query_params)
    assert link["mode"] == "custom" and link["p"] == "1/2, 30%, 0.2" and link["step"] == "3"
    again = open_page(PAGE, link)
    assert not again.exception and not again.warning
    assert (output_line(again), step_heading(again), drafts_line(again)) == state


def test_table_link_opens_per_position_rows():
    link = {
        "mode": "custom",
        "labels": "x, y",
        "k": "2",
        "p": "0.5 0.5 | 0.9 0.1 | 0.1 0.9",
        "q": "0.5 0.5 | 0.5 0.5",
        "drafts": "x, y",
        "coins": "0.1, 0.5",
        "final": "x",
    }
    at = open_page(PAGE, link)
    assert not at.exception and not at.warning
    assert at.radio(key="round_rows").value.startswith("A row per position")
    assert [d.key for d in at.get("dataframe")] == ["round_p_table_1", "round_q_table_1"]
    click(at, "round_last")
    # position 2: p(y) = 0.1, q(y) = 0.5, a = 0.2: the coin 0.5 rejects y
    assert output_line(at) == "x ✓ kept · x ↻ resampled"
    assert "|" in at.query_params["p"]


def test_hostile_label_renders_as_text():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key="round_labels").input("<img src=x onerror=1>, B, **C**, D, E").run()
    at.text_input(key="round_drafts_text").input("<img src=x onerror=1>, **C**, D").run()
    assert not at.exception and not at.error
    click(at, "round_next")
    for md in at.markdown:
        assert not re.search(r"(?<!\\)<img", md.value)  # every '<' of a label is escaped
    spec = "".join(str(f) for f in figures(at))
    assert "&lt;img src=x onerror=1&gt;" in spec and "<img" not in spec
    assert any("<img src=x onerror=1>" in why for why in why_texts(at))  # shown, as text
    at.text_input(key="round_labels").input("<script>alert(1)</script>, B, C, D, E").run()
    assert not at.exception
    assert "label 1 is 25 characters" in plain(at.error[0].value)
    assert "<script" not in at.error[0].value


def test_edit_preset_in_custom_mode_gives_the_same_round():
    at = open_page(PAGE)
    at.selectbox(key="round_preset").set_value("003-B").run()
    click(at, "round_last")
    preset_out = output_line(at)
    click(at, "round_edit_preset")
    assert at.radio(key="round_mode").value == "Custom"
    assert any("became 'comma'" in c.value for c in at.caption)
    click(at, "round_last")
    assert output_line(at) == preset_out == "Hello ✓ kept · world ✓ kept · “!” ↻ resampled"
    assert drafts_line(at) == (
        "Drafts: Hello ✓ kept · world ✓ kept · comma ✗ rejected · again – discarded"
    )


def test_download_button_present():
    at = open_page(PAGE)
    assert at.get("download_button")


def test_table_mode_fills_and_refills_from_the_typed_rows():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.radio(key="round_rows").set_value("A row per position (table)").run()
    assert not at.exception and not at.error
    assert [d.key for d in at.get("dataframe")] == ["round_p_table_1", "round_q_table_1"]
    at.number_input(key="round_k").set_value(4).run()
    assert any("K changed" in c.value for c in at.caption)
    assert [d.key for d in at.get("dataframe")] == ["round_p_table_2", "round_q_table_2"]
    assert at.query_params["p"].count("|") == 4 and at.query_params["q"].count("|") == 3
    at.text_input(key="round_p_text").input("0.5, abc").run()  # only fills the table
    assert "entry 2 ('abc')" in plain(at.error[0].value)
    assert [d.key for d in at.get("dataframe")] == ["round_p_table_2", "round_q_table_2"]
    at.text_input(key="round_p_text").input("0.2, 0.2, 0.2, 0.2, 0.2").run()
    assert not at.error
    at.text_input(key="round_labels").input("a, b, c, d, e").run()
    assert any("took the new labels" in c.value for c in at.caption)
    assert at.query_params["p"].startswith("0.4, 0.25")  # the numbers are kept
    click(at, "round_refill")
    assert [d.key for d in at.get("dataframe")] == ["round_p_table_4", "round_q_table_4"]
    assert at.query_params["p"].startswith("0.2, 0.2, 0.2") and at.query_params["k"] == "4"
    at.text_input(key="round_p_text").input("0.5, 0.5").run()
    at.text_input(key="round_q_text").input("0.5, 0.5").run()
    at.text_input(key="round_labels").input("x, y").run()  # two tokens now
    assert any("number of tokens changed" in c.value for c in at.caption)
    assert not at.error and at.query_params["p"].startswith("0.5, 0.5 |")


def test_edit_per_position_preset_opens_the_table():
    at = open_page(PAGE)
    at.selectbox(key="round_preset").set_value("003-A").run()
    click(at, "round_last")
    preset_out = output_line(at)
    click(at, "round_edit_preset")
    assert at.radio(key="round_rows").value == "A row per position (table)"
    assert at.text_input(key="round_labels").value == "The, cat, sat, down"
    click(at, "round_last")
    assert output_line(at) == preset_out == "The ✓ kept · cat ✓ kept · sat ✓ kept · down ★ bonus"


def test_inputs_survive_switching_between_preset_and_custom():
    at = open_page(PAGE)
    at.selectbox(key="round_preset").set_value("003-B").run()
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key="round_coins_text").input("0.25").run()
    at.radio(key="round_mode").set_value("Preset").run()
    assert at.selectbox(key="round_preset").value == "003-B"
    at.radio(key="round_mode").set_value("Custom").run()
    assert at.text_input(key="round_coins_text").value == "0.25"
    assert not at.exception


def test_link_without_labels_uses_letters_for_its_vocabulary():
    at = open_page(
        PAGE,
        {
            "mode": "custom",
            "p": "0.5, 0.5",
            "q": "0.9, 0.1",
            "k": "1",
            "drafts": "A",
            "coins": "0.7",
            "final": "B",
        },
    )
    assert not at.exception and not at.warning
    click(at, "round_last")
    assert output_line(at) == "B ↻ resampled"  # a = 0.5/0.9 = 0.556 < 0.7: rejected


def test_normalise_is_an_explicit_choice():
    at = open_page(PAGE)
    at.radio(key="round_mode").set_value("Custom").run()
    at.text_input(key="round_p_text").input("40, 25, 20, 10, 5").run()
    assert "p: entries sum to 100" in plain(at.error[0].value)
    at.checkbox(key="round_normalise").check().run()
    assert not at.error and not at.exception
    at.text_input(key="round_drafts_text").input("A, B, C").run()
    at.text_input(key="round_coins_text").input("0.5, 0.72, 0.9").run()
    click(at, "round_next")
    click(at, "round_next")
    click(at, "round_next")  # ratio at position 2: p(B) = 25/100 = 0.25
    assert "B has p = 0.25, q = 0.30" in why_texts(at)[0]
    link = dict(at.query_params)
    assert link["norm"] == "1" and link["p"] == "40, 25, 20, 10, 5"
    again = open_page(PAGE, link)
    assert not again.warning and not again.error
    assert again.checkbox(key="round_normalise").value
    assert why_texts(again) == why_texts(at)


def test_play_to_end_shows_a_numeric_trace_without_an_arrow_fallback():
    # A table that mixes numbers and text in one column makes Streamlit log an ArrowInvalid
    # traceback (and convert the column) on every "Play to end": the server log must stay clean.
    from streamlit import dataframe_util

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    log = logging.getLogger(dataframe_util.__name__)
    level = log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        at = open_page("pages/scripts/round.py")
        at.button(key="round_last").click().run()
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    assert not at.exception
    assert not [r for r in records if r.exc_info], [r.getMessage() for r in records]
    trace = shown_table(at, "coin u")
    frame = trace.value
    for name in ("p(x)", "q(x)", "ratio p/q", "a = min(1, p/q)", "coin u"):
        assert frame[name].dtype.kind == "f", (name, frame[name].dtype)
    assert frame["ratio p/q"].isna().iloc[-1]  # the final token has no ratio: shown as "—"
    assert trace.shown["ratio p/q"].iloc[-1] == "—"
    # as shown and read aloud (issue 33): 4 decimals, and a kept token is a tick with a word
    assert list(trace.shown["p(x)"]) == [f"{x:.4f}" for x in frame["p(x)"]]
    assert set(trace.shown["emitted"]) <= {"✓ yes", "✗ no"}
    assert trace.name.startswith("The round's trace")
