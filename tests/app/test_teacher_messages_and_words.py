"""Issue 18 (what a teacher saw), the messages and words, by AppTest: bad input named next to
its field on the round page, the Speedup explorer's largest-K note and its heatmap range, the
Variants lab's inputs in the main column and its numbers explained, the step headings, and
the QR button on every page. Layout, sizes and colours are proved in Chromium
(tests/e2e/test_teacher_screens.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import variants as vr
from specdec_ui import presets
from specdec_ui.kit.text import md_escape
from specdec_ui.round.codec import CustomInputs, custom_spec, error_field
from specdec_ui.variants import table as variants_table
from tests.app.conftest import figures, open_page

ROUND = "pages/scripts/round.py"
SPEED = "pages/scripts/speedup.py"
VARIANTS = "pages/scripts/variants.py"
FAST = {"rounds": "20000"}


def plain(text: str) -> str:
    """Undo md_escape: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", text)


def _blocks(node):
    """Every block of the element tree under ``node``, ``node`` first."""
    yield node
    for child in getattr(node, "children", {}).values():
        if getattr(child, "children", None) is not None:
            yield from _blocks(child)


def errors_beside(at, key: str) -> list[str]:
    """The error messages in the same block (column) as the widget ``key``."""
    for block in _blocks(at.main):
        children = list(block.children.values())
        if any(getattr(c, "key", None) == key for c in children):
            found = []
            for child in children:  # an st.empty slot is a block holding the error
                items = [child, *getattr(child, "children", {}).values()]
                found += [plain(i.value) for i in items if getattr(i, "type", "") == "error"]
            return found
    raise AssertionError(f"no widget with key {key!r}")


def custom_round(**values):
    at = open_page(ROUND)
    at.radio(key="round_mode").set_value("Custom").run()
    for key, value in values.items():
        widget = at.number_input(key=key) if key == "round_k" else at.text_input(key=key)
        (widget.set_value(value) if key == "round_k" else widget.input(value)).run()
    assert not at.exception
    return at


# --- round page: K of 0, -1 or 25, and every bad entry, named next to its field ------------


@pytest.mark.parametrize("k", [0, -1, 25])
def test_a_bad_k_is_named_next_to_the_k_field(k):
    at = custom_round(round_k=k)
    assert at.number_input(key="round_k").value == k  # the box keeps what was typed ...
    beside = errors_beside(at, "round_k")
    assert beside == [f"K = {k} is out of range; allowed: 1 to {presets.ROUND_K_MAX}."]
    assert len(at.error) == 1  # ... and the message is there, not only a tiny icon
    assert any("last valid" in plain(i.value) for i in at.info)  # the round stays K = 3
    assert at.query_params.get("k") in ("3", ["3"])  # the link keeps the last valid round


@pytest.mark.parametrize(
    ("key", "text", "words"),
    [
        ("round_p_text", "0.5, abc", "entry 2 ('abc') is not a number"),
        ("round_q_text", "0.5, 0.6", "sum to 1.1"),
        ("round_q_text", "0.5, 0.5", "p has 5 entries but q has 2"),
        ("round_labels", "A, B", "got 2 labels for 5 tokens"),
        ("round_coins_text", "0.5, 1.5", "coin 2 is 1.5"),
        ("round_drafts_text", "A, Z, B", "entry 2 ('Z') is not one of the labels"),
        ("round_final_text", "nope", "final token ('nope')"),
    ],
)
def test_each_bad_entry_is_named_next_to_its_own_field(key, text, words):
    at = custom_round(**{key: text})
    beside = errors_beside(at, key)
    assert len(beside) == 1 and words in beside[0], beside
    assert len(at.error) == 1  # only there, not again below the form


def test_error_field_reads_the_entry_a_real_message_names():
    good = CustomInputs().values()
    cases = {
        "k": {"k": 0},
        "p": {"p_text": "0.5, x"},
        "q": {"q_text": "0.9, 0.2"},
        "labels": {"labels": "A"},
        "drafts": {"drafts_text": "Q, Q, Q"},
        "coins": {"coins_text": "2"},
        "final": {"final_text": "?"},
    }
    for field, change in cases.items():
        with pytest.raises(sc.SpecDecError) as err:
            custom_spec(CustomInputs.from_values({**good, **change}))
        assert error_field(str(err.value)) == field, (field, str(err.value))
    assert error_field("p at position 2: entries sum to 1.1") == "tables"
    assert error_field("something else went wrong") is None


# --- round page: the step first, headings that do not repeat -------------------------------


def test_round_intro_and_settings_fold_and_the_settings_name_the_round():
    at = open_page(ROUND)
    labels = [plain(e.proto.label) for e in at.get("expander")]
    assert labels[0] == "What this page asks"  # the questions and the intro, folded
    settings = [label for label in labels if label.startswith("⚙️")]
    title = "Worked example: a full round, all three drafts kept, bonus D"
    assert settings[0] == f"⚙️ Round settings: {title}"
    at.radio(key="round_mode").set_value("Custom").run()
    settings = [plain(e.proto.label) for e in at.get("expander")]
    assert "⚙️ Round settings: your own round" in settings


def test_the_draft_step_heading_does_not_repeat_its_title():
    at = open_page(ROUND)
    heading = at.header[0].value
    title = plain(at.markdown[1].value) if at.markdown else ""
    assert heading == "Drafting"
    assert not title.lower().startswith(f"### {heading.lower()}")


def test_one_draft_kept_is_not_all_1_drafts():
    at = custom_round(round_k=1, round_coins_text="0.01")
    at.button(key="round_last").click().run()
    titles = " ".join(plain(m.value) for m in at.markdown)
    assert "All 1 drafts" not in titles
    assert "The one draft kept: bonus token" in titles


# --- Speedup explorer -------------------------------------------------------------------


def _optimum_texts(at) -> str:
    return " ".join(c.value for c in at.get_by_key("speed_optimum").children.values())


def test_alpha_1_says_the_best_k_is_the_sliders_maximum_and_the_cap_is_1_over_c():
    at = open_page(SPEED, {"alpha": "1", "k": "4", "c_q": "1", "c_p": "10"})  # c = 0.1
    assert not at.exception
    note = _optimum_texts(at)
    assert f"Best K = {presets.SPEED_K_MAX}" in note
    assert "largest K offered (the slider's maximum), not a true optimum" in note
    assert "1/c = 10x and never passes it" in note
    assert "without limit" not in note  # not the free draft's words
    assert at.metric[4].value == str(presets.SPEED_K_MAX)
    assert at.metric[4].delta == "the slider's maximum"


def test_an_inner_best_k_gets_no_note():
    at = open_page(SPEED)  # seed 003 Ex 8: best K = 4
    assert "slider's maximum" not in _optimum_texts(at)
    assert at.metric[4].delta in (None, "")


def test_time_per_token_delta_has_its_unit_and_a_short_description():
    at = open_page(SPEED)  # 21.64 ms against 40 ms
    metric = at.metric[2]
    assert metric.delta == "-18.36 ms"
    assert metric.proto.delta_description == "vs target alone"


@pytest.mark.parametrize(("k", "k_rows"), [(4, 16), (16, 16), (20, 32)])
def test_heatmap_runs_k_over_the_students_range(k, k_rows):
    at = open_page(SPEED, {"alpha": "0.7", "k": str(k), "c_q": "5", "c_p": "40"})
    heat = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Speedup over"))
    speed = next(t for t in heat["data"] if t.get("name") == "speedup")
    assert speed["y"] == list(range(1, k_rows + 1))
    assert f"K from 1 to {k_rows}" in " ".join(c.value for c in at.caption)


# --- Variants lab ---------------------------------------------------------------------------


def test_variants_inputs_are_in_the_main_column_not_the_sidebar():
    at = open_page(VARIANTS, FAST)
    sidebar_keys = {
        getattr(el, "key", None) for block in _blocks(at.sidebar) for el in block.children.values()
    }
    assert not {k for k in sidebar_keys if k and k.startswith("var_")}
    for key in ("var_preset", "var_variant", "var_p_text", "var_q_text", "var_rounds"):
        assert at.get_by_key(key) is not None
    inputs = next(e for e in at.get("expander") if e.proto.label.startswith("⚙️ Inputs"))
    assert inputs.proto.expanded is True  # open in normal view ...
    presenting = open_page(VARIANTS, FAST | {"present": "1"})
    folded = next(e for e in presenting.get("expander") if e.proto.label.startswith("⚙️ Inputs"))
    assert folded.proto.expanded is False  # ... folded in presenter view


def test_multi_draft_shows_beta_m_as_a_number():
    at = open_page(VARIANTS, {"preset": "rescue", "m": "2"} | FAST)
    p = sc.parse_distribution(presets.VARIANT_PRESETS["rescue"].p_text)
    q = sc.parse_distribution(presets.VARIANT_PRESETS["rescue"].q_text)
    alpha, beta = vr.multidraft_acceptance(p, q, [1, 2])
    captions = " ".join(c.value for c in at.caption)
    said = md_escape(f"beta_2 = {beta:.3f}; with one candidate it is alpha = beta_1 = {alpha:.3f}")
    assert said in captions


def test_a_broken_run_says_the_exact_tokens_per_round_are_the_correct_rules():
    at = open_page(VARIANTS, {"preset": "rescue", "broken": "1"} | FAST)
    assert at.metric[1].label == "tokens per round (exact, correct rule)"
    fine = open_page(VARIANTS, {"preset": "rescue"} | FAST)
    assert fine.metric[1].label == "tokens per round (exact)"


def test_typical_acceptance_says_what_the_tv_and_the_histogram_count():
    at = open_page(VARIANTS, {"preset": "typical-flat"} | FAST)
    assert at.metric[3].label == "TV(emitted, p) at one position, exact"
    assert at.metric[3].value == "0.400"
    note = next(c.value for c in at.caption if c.value.startswith("The exact TV"))
    assert "one drafted position" in note and "after K kept drafts" in note
    histogram_tv = float(re.search(r"TV of the histogram: ([0-9.]+)", note).group(1))
    assert histogram_tv > 0.45  # A at 0.70 against p(A) = 0.20: further than 0.400


def test_histogram_tv_is_the_share_of_every_emitted_token():
    p = np.array([0.2] * 5)
    q = np.array([0.6, 0.1, 0.1, 0.1, 0.1])
    result = sc.simulate_rounds(
        p, q, 3, 50_000, rng=np.random.default_rng(0), variant="typical_acceptance"
    )
    share = result.emitted_counts / result.emitted_counts.sum()
    assert variants_table.histogram_tv(result, p) == pytest.approx(0.5 * np.abs(share - p).sum())
    assert share[0] > 0.65  # the bonus is argmax p = A: the histogram is not q
    correct = sc.simulate_rounds(p, q, 3, 50_000, rng=np.random.default_rng(0))
    assert variants_table.histogram_tv(correct, p) < 0.01


# --- the QR button on every page ----------------------------------------------------------


@pytest.mark.parametrize(
    "page",
    [
        "app.py",
        ROUND,
        SPEED,
        "pages/scripts/losslessness.py",
        "pages/scripts/self_test.py",
        VARIANTS,
    ],
)
def test_every_page_has_the_qr_button_in_the_main_column_in_presenter_view(page):
    at = open_page(page, {"present": "1"})
    assert not at.exception
    assert at.get_by_key("presenter_qr_corner") is not None  # pinned top right by the CSS
    assert "presenter_qr" not in [b.key for b in at.sidebar.button]
    assert at.button(key="presenter_qr").label == "📱 Show QR code"
    normal = open_page(page)
    assert "presenter_qr" in [b.key for b in normal.sidebar.button]  # the sidebar, normally
