"""Losslessness lab: the correct sampler passes, every broken variant fails (seeded)."""

import dataclasses
import re

import numpy as np
import pytest

import specdec_core as sc
from specdec_core.rules import RuleKind, rules_of_kind
from specdec_ui import presets
from specdec_ui.kit.engine_figures import vllm_log_line
from specdec_ui.kit.text import md_escape
from specdec_ui.losslessness import work as losslessness_work
from specdec_ui.words import rule_words
from tests.app.conftest import figures, open_page
from tests.app.shown_tables import shown_table

PAGE = "pages/scripts/losslessness.py"
BROKEN = [r.name for r in rules_of_kind(RuleKind.BUG_OF, lab="losslessness")]


def _verdict(at) -> str:
    return at.get_by_key("lab_verdict").children[0].value


def test_default_run_passes():
    at = open_page(PAGE)
    assert not at.exception and not at.error and not at.warning
    assert at.selectbox(key="lab_preset").value == presets.DEFAULT_LAB_PRESET
    assert at.number_input(key="lab_rounds").value == presets.DEFAULT_ROUNDS
    verdict = _verdict(at)
    assert verdict.startswith("PASS: ")
    assert "p-value" in verdict and "0.001" in verdict
    assert len(at.success) == 1  # the verdict box is green only when it passes
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any(t.startswith("alpha = sum min(p, q) = 1 - TV(p, q) = 0.850") for t in titles)
    assert any(t.startswith("Emitted tokens") for t in titles)
    assert any(t.startswith("Tokens per round over 100,000 rounds") for t in titles)
    assert at.metric[0].value == "0.850"  # alpha (expected)
    assert abs(float(at.metric[1].value) - 0.85) < 0.01  # kept / checked (simulated)


@pytest.mark.parametrize("variant", BROKEN)
def test_each_broken_variant_fails_with_a_fixed_seed(variant):
    at = open_page(PAGE, {"seed": "3"})
    at.selectbox(key="lab_variant").set_value(variant).run()
    assert not at.exception
    verdict = _verdict(at)
    assert verdict.startswith("FAIL: "), verdict
    assert len(at.error) == 1  # the verdict box is red
    assert md_escape(rule_words(variant).description) in " ".join(i.value for i in at.info)
    if not sc.RULES[variant].bonus:  # it shows in the round lengths only
        assert "the round lengths do not follow the theory" in verdict
        assert "the emitted tokens do not follow p" not in verdict
        assert any("unbiased in tokens" in c.value for c in at.caption)
    else:
        assert "the emitted tokens do not follow p" in verdict


def test_switching_back_to_correct_passes_again():
    at = open_page(PAGE, {"seed": "3", "variant": "resample_from_p"})
    assert _verdict(at).startswith("FAIL")
    at.selectbox(key="lab_variant").set_value("correct").run()
    assert _verdict(at).startswith("PASS")


@pytest.mark.parametrize("preset", list(presets.LAB_PRESETS))
def test_every_preset_renders_and_passes(preset):
    at = open_page(PAGE)
    at.selectbox(key="lab_preset").set_value(preset).run()
    assert not at.exception and not at.error
    assert at.text_input(key="lab_p_text").value == presets.LAB_PRESETS[preset].p_text
    assert _verdict(at).startswith("PASS")


def _strict_words(at) -> str:
    return at.get_by_key("lab_keep_note").children[0].value


def test_strict_verification_passes_with_shorter_rounds():
    """Seed 000's p, q, K = 4: strict keeps a draft with beta = sum p q = 0.245, not 0.85,
    so a round emits E(0.245, 4) = 1.32 tokens instead of E(0.85, 4) = 3.71; still lossless."""
    at = open_page(PAGE)
    at.selectbox(key="lab_variant").set_value("strict").run()
    assert not at.exception and not at.error
    assert _verdict(at).startswith("PASS: ")
    assert md_escape(rule_words("strict").description) in " ".join(i.value for i in at.info)
    assert not any("did not show" in c.value for c in at.caption)  # not a bug that hid
    shown = {m.label: m.value for m in at.metric}
    assert shown["alpha (expected)"] == "0.850"
    assert shown["beta (expected, strict)"] == "0.245"
    assert abs(float(shown["kept / checked (simulated)"]) - 0.245) < 0.005
    words = _strict_words(at)
    assert "beta = sum p(x) q(x) = 0.245" in words and "alpha = sum min(p, q) = 0.850" in words
    assert "E(beta, K) = 1.32" in words and "the probabilistic rule expects 3.71" in words
    emitted = float(re.search(r"This run emitted ([0-9.]+) tokens per round", words).group(1))
    assert abs(emitted - 1.3233) < 0.005 + 0.01  # shown to 2 decimals; 5 sd of a 100,000-round mean
    assert any(r"\beta^n (1-\beta)" in formula.value for formula in at.latex)
    rounds = shown_table(at, "expected rounds")  # the counts behind the tokens-per-round chart
    law = sc.tokens_per_round_distribution([0.245] * 4)
    np.testing.assert_allclose(rounds.value["theory"], law)
    assert list(rounds.shown["theory"]) == [f"{x:.4f}" for x in law]  # as shown and heard


def test_strict_opens_from_a_link_and_switching_back_hides_its_numbers():
    at = open_page(PAGE, {"variant": "strict", "preset": "equal", "k": "2"})
    assert not at.exception and not at.warning
    assert _verdict(at).startswith("PASS")
    # p = q: the probabilistic rule keeps everything, strict only sum p^2 = 0.30.
    assert {m.label: m.value for m in at.metric}["beta (expected, strict)"] == "0.300"
    assert "against alpha = sum min(p, q) = 1.000" in _strict_words(at)
    at.selectbox(key="lab_variant").set_value("correct").run()
    assert _verdict(at).startswith("PASS")
    labels = [m.label for m in at.metric]  # the overlap's metrics, then the engine panel's
    assert labels[:2] == ["alpha (expected)", "kept / checked (simulated)"]
    assert "beta (expected, strict)" not in labels
    with pytest.raises(KeyError):
        at.get_by_key("lab_keep_note")


def test_perfect_draft_hides_the_rejection_bug():
    at = open_page(PAGE, {"preset": "equal", "variant": "resample_from_p"})
    assert not at.exception
    assert _verdict(at).startswith("PASS")  # p = q never rejects: nothing to catch
    assert any("did not show" in c.value for c in at.caption)


@pytest.mark.parametrize(
    "p_text, fragment",
    [
        ("0.5, abc, 0.2", "entry 2"),
        ("0.5, 0.6", "sum to 1.1"),
        ("0.5, -0.1, 0.6", "negative"),
        ("", "empty"),
        ("0.5, 0.5", "p has 2 entries but q has 5"),
    ],
)
def test_bad_typed_input_shows_an_error(p_text, fragment):
    at = open_page(PAGE)
    at.text_input(key="lab_p_text").input(p_text).run()
    assert not at.exception
    assert at.selectbox(key="lab_preset").value == presets.CUSTOM
    assert len(at.error) == 1
    assert md_escape(fragment) in at.error[0].value


def test_typed_pair_runs_with_default_labels():
    at = open_page(PAGE)
    at.text_input(key="lab_p_text").input("1/2, 1/4, 25%").run()
    at.text_input(key="lab_q_text").input("0.2 0.3 0.5").run()
    assert not at.exception and not at.error
    assert _verdict(at).startswith("PASS")
    overlap = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("alpha"))
    assert overlap["data"][0]["x"] == ["A", "B", "C"]
    shared = [c.value for c in at.code if c.value.startswith("?")]  # the share link
    assert len(shared) == 1 and "p=1%2F2%2C+1%2F4%2C+25%25" in shared[0]  # typed text in the link


def test_link_reopens_a_custom_run():
    query = {
        "p": "0.7, 0.3",
        "q": "0.4, 0.6",
        "k": "2",
        "rounds": "20000",
        "seed": "9",
        "variant": "accept_if_p_ge_q",
    }
    at = open_page(PAGE, query)
    assert not at.exception and not at.warning
    assert at.selectbox(key="lab_preset").value == presets.CUSTOM
    assert at.slider(key="lab_k").value == 2
    assert at.number_input(key="lab_seed").value == 9
    assert _verdict(at).startswith("FAIL")


@pytest.mark.parametrize(
    "query, bad",
    [
        ({"k": "99"}, "k"),
        ({"rounds": "5"}, "rounds"),
        ({"rounds": "10000000000"}, "rounds"),
        ({"seed": "-1"}, "seed"),
        ({"variant": "evil"}, "variant"),
        ({"preset": "x" * 3000}, "preset"),
        ({"p": "0.5, nope"}, "p"),
        ({"q": "[1](javascript:alert(1))"}, "q"),
    ],
)
def test_bad_links_warn_and_fall_back(query, bad):
    at = open_page(PAGE, query)
    assert not at.exception
    assert len(at.warning) == 1 and f"'{md_escape(bad)}'" in at.warning[0].value
    assert _verdict(at).startswith("PASS")  # the defaults still run


def test_mismatched_link_pair_falls_back():
    at = open_page(PAGE, {"p": "0.5, 0.5", "q": "0.2, 0.3, 0.5"})
    assert not at.exception
    assert "different lengths" in at.warning[0].value
    assert at.selectbox(key="lab_preset").value == presets.DEFAULT_LAB_PRESET


def test_manual_mode_waits_for_the_run_button():
    at = open_page(PAGE, {"seed": "3"})
    at.checkbox(key="lab_auto").uncheck().run()
    at.selectbox(key="lab_variant").set_value("accept_if_p_ge_q").run()
    assert _verdict(at).startswith("PASS")  # still the previous run
    assert any("Settings changed" in i.value for i in at.info)
    at.button(key="lab_run").click().run()
    assert _verdict(at).startswith("FAIL")
    assert not any("Settings changed" in i.value for i in at.info)


def test_downloads_and_source():
    at = open_page(PAGE)
    assert len(at.get("download_button")) == 1
    sources = " ".join(c.value for c in at.code)
    assert "def simulate_rounds" in sources and "def losslessness_test" in sources


def test_a_core_variant_without_a_display_label_does_not_break_the_page():
    # The page names rules with specdec_ui.words; a rule registered without words
    # (tests/ui/test_words.py refuses one) shows its name instead of raising KeyError.
    sc.register_rule(dataclasses.replace(sc.RULES["correct"], name="shiny_new"))
    try:
        at = open_page("pages/scripts/losslessness.py", {"variant": "shiny_new", "rounds": "1000"})
    finally:
        sc.unregister_rule("shiny_new")
    assert not at.exception
    assert "shiny_new" in at.selectbox(key="lab_variant").options
    assert any("Shiny_new." in i.value.replace("\\", "") for i in at.info)


# --- the engines' vocabulary (issue 20, item 3) -------------------------------------------

SEED_P = (0.40, 0.25, 0.20, 0.10, 0.05)  # preset 000, the page's default run (K = 4, seed 0)
SEED_Q = (0.30, 0.30, 0.15, 0.15, 0.10)
ENGINE_LABELS = ("Mean acceptance length (AL)", "Draft acceptance rate", "α of the i.i.d. fit")


def _engine_shown(at) -> dict[str, str]:
    shown = {m.label: m.value for m in at.metric if m.label in ENGINE_LABELS}
    assert sorted(shown) == sorted(ENGINE_LABELS)
    return shown


def _engine_words(at) -> str:
    return " ".join(m.value for m in at.get_by_key("lab_engine").get("markdown"))


@pytest.mark.parametrize(
    "variant, exact, al",
    [
        ("correct", "r_i = α^i = 0.850, 0.723, 0.614, 0.522", "E(α, K) = 3.71"),
        ("strict", "r_i = β^i = 0.245, 0.060, 0.015, 0.004", "E(β, K) = 1.32"),
    ],
)
def test_engine_numbers_are_those_of_the_same_simulation(variant, exact, al):
    """AL = mean tokens per round and the fitted alpha = kept / checked of the run the page
    simulated (recomputed here from the same settings, not read from the page)."""
    at = open_page(PAGE, {"variant": variant})
    assert not at.exception and not at.error
    rounds, k = presets.DEFAULT_ROUNDS, presets.DEFAULT_K
    result, _ = losslessness_work.simulate_and_test(SEED_P, SEED_Q, k, rounds, 0, variant)
    metrics = sc.metrics_from_accepted_histogram(result.n_accepted_counts)
    shown = _engine_shown(at)
    assert shown["Mean acceptance length (AL)"] == f"{result.mean_tokens_per_round:.2f}"
    assert shown["Mean acceptance length (AL)"] == f"{metrics.mean_acceptance_length:.2f}"
    assert shown["α of the i.i.d. fit"] == f"{result.drafted_accepted_fraction:.3f}"
    assert shown["α of the i.i.d. fit"] == f"{metrics.fitted_alpha:.3f}"
    assert shown["Draft acceptance rate"] == f"{metrics.draft_acceptance_rate:.1%}"
    assert vllm_log_line(metrics) in [c.value for c in at.code]
    rates = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Per-position"))
    np.testing.assert_allclose(rates["data"][0]["y"], metrics.rates)
    words = " ".join(c.value for c in at.caption)
    assert f"your {rounds:,} simulated rounds at K = {k}" in words
    theory = _engine_words(at)
    assert exact in theory and al in theory
    # The theory is what the simulation estimates: 100,000 rounds put AL within 0.02.
    expected_al = float(al.split("= ")[-1])
    assert abs(metrics.mean_acceptance_length - expected_al) < 0.02


def test_a_bug_with_a_great_acceptance_length_is_named_as_such():
    """The greedy-draft bug keeps every draft of preset 000 (p(A) / q(A) > 1): AL = K + 1,
    above the correct rule's 3.71, and the output fails the test."""
    at = open_page(PAGE, {"variant": "ratio_with_wrong_q"})
    assert _verdict(at).startswith("FAIL")
    assert _engine_shown(at)["Mean acceptance length (AL)"] == "5.00"
    theory = _engine_words(at)
    assert "do not know whether the output is right" in theory
    assert "yet its AL is 5.00, where the correct rule expects E(α, K) = 3.71" in theory
    assert "r_i = α^i" not in theory


def test_no_bonus_shows_that_the_engines_al_assumes_the_bonus():
    at = open_page(PAGE, {"variant": "no_bonus"})
    result, _ = losslessness_work.simulate_and_test(
        SEED_P, SEED_Q, 4, presets.DEFAULT_ROUNDS, 0, "no_bonus"
    )
    metrics = sc.metrics_from_accepted_histogram(result.n_accepted_counts)
    assert metrics.mean_acceptance_length - result.mean_tokens_per_round > 0.1  # rounds short
    shown = _engine_shown(at)["Mean acceptance length (AL)"]
    assert shown == f"{metrics.mean_acceptance_length:.2f}"
    theory = _engine_words(at)
    assert f"its rounds emitted {result.mean_tokens_per_round:.2f} tokens each" in theory


def test_a_helper_that_timed_out_is_a_warning_and_the_page_stops(monkeypatch):
    from specdec_ui.runtime import processes

    spec = processes.POOLS["simulate"]

    def timed_out(*args, **kwargs):
        raise processes.HelperTimeoutError(spec)

    monkeypatch.setattr(losslessness_work, "shared_simulation", timed_out)
    at = open_page(PAGE)
    assert not at.exception and not at.error
    assert [w.value for w in at.warning] == [md_escape(str(processes.HelperTimeoutError(spec)))]
    with pytest.raises(KeyError):
        at.get_by_key("lab_verdict")
    assert "def simulate_rounds" in " ".join(c.value for c in at.code)


@pytest.mark.parametrize(
    ("variant", "step", "tables"),
    [
        ("correct", "def correct_step(", "def correct_tables("),
        ("resample_from_p", "def resample_from_p_step(", "def resample_from_p_tables("),
        ("greedy", "def greedy_position(", "def greedy_tables("),
    ],
)
def test_the_code_shown_is_the_chosen_rule_before_the_dispatch(variant, step, tables):
    at = open_page(PAGE, {"variant": variant, "rounds": "1000"})
    assert not at.exception
    shown = [c.value for c in at.code]
    firsts = [
        next((i for i, src in enumerate(shown) if src.startswith(w)), None)
        for w in (step, tables, "def simulate_rounds(")
    ]
    assert None not in firsts, (variant, [src.splitlines()[0] for src in shown])
    assert firsts == sorted(firsts), "the rule's step and tables come before simulate_rounds"


def test_block_verification_passes_and_says_its_gain_over_token_by_token():
    """The default preset at K = 4: 3.98 tokens per round against 3.71 (Sun et al. 2024),
    held to its exact round-length law, never to a power of alpha."""
    at = open_page(PAGE, {"variant": "block_verification"})
    assert not at.exception and not at.error
    assert _verdict(at).startswith("PASS: ")
    note = at.get_by_key("lab_keep_note").children[0].value
    assert "(exact: 3.98)" in note and "E(alpha, K) = 3.71" in note and "+0.27" in note
    formulas = " ".join(f.value for f in at.latex)
    assert "s_n - s_{n+1}" in formulas and r"\alpha^n" not in formulas
    theory = _engine_words(at)
    assert "exact AL is 3.98" in theory and "kept independently" not in theory
    rounds = shown_table(at, "expected rounds")
    law = sc.RULES["block_verification"].round_law(np.array(SEED_P), np.array(SEED_Q), 4)
    np.testing.assert_allclose(rounds.value["theory"], law)


def test_block_verification_beyond_its_tracked_law_is_refused_in_words():
    query = {
        "variant": "block_verification",
        "k": "8",
        "p": "0.034, 0.051, 0.001, 0, 0.028, 0.082, 0.034, 0.038, 0.142, 0.305, 0.166, 0, "
        "0.114, 0.005",
        "q": "0.078, 0.062, 0.231, 0.026, 0.022, 0.109, 0.003, 0.010, 0.075, 0.057, 0.127, "
        "0.030, 0.033, 0.137",
    }
    at = open_page(PAGE, query)
    assert not at.exception
    message = " ".join(e.value for e in at.error).replace("\\", "")  # markdown-escaped
    assert "block verification: the exact round-length law" in message and "K = 8" in message
