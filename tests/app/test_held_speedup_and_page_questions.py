"""Issue 25 ("a second teacher's walk"): AppTest proofs of items 1 and 9-12 and the smaller
things (the browser proofs of items 2-8 are tests/e2e/test_steppers_in_one_screen.py).

1. The Model pair lab's measured speedup is held 3 hours per server (not the 10 minutes of
   typed text, not at the mercy of the figure cache's LRU), under a key with the prompt's
   digest; the page says when it was measured; "Measure again" replaces it for everyone.
9. No "seed 000/003" or "the seeds' formula" where a student reads.
10. A fixed-K run that drafted nothing in some rounds says why, and why its tokens per round
    differ from E(alpha, K), with the run's own numbers.
11. At T = 0 step mode shows no coin.
12. "What this page asks" holds two or three questions per page with worked answers, and
    every number in an answer is the core's.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

import specdec_core as sc
from specdec_core import variants as vr
from specdec_ui import page_questions
from specdec_ui.model_pairs import words as model_pairs_words
from specdec_ui.model_pairs import work as model_pairs_work
from specdec_ui.presets import LAB_PRESETS, SPEED_PRESETS, VARIANT_PRESETS
from specdec_ui.registry import PAGES as REGISTERED
from specdec_ui.runtime import shared_work
from tests.app.conftest import figures, jump_slider, open_app, open_page
from tests.model_pair_fakes import default_request, fake_speed, hold_speed
from tests.ui.waiting import wait_until

MODEL_PAIRS = "pages/scripts/model_pairs.py"
PAGES = tuple(p.path for p in REGISTERED if p.asks)  # every page that asks, by construction


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


@pytest.fixture
def clean_hold():
    """An empty hold and an idle background lane: a comparison of fixed and adaptive
    drafting that an earlier adaptive page started would queue "measure again" behind it."""
    wait_until(
        lambda: shared_work.snapshot("background") == (0, 0), "the background lane to idle", 180
    )
    model_pairs_work.HOLD.clear()
    yield
    model_pairs_work.HOLD.clear()


# --- item 1: one number for the lesson ------------------------------------------------------


def test_a_held_measurement_lasts_three_hours_and_then_is_measured_again():
    now = [0.0]
    hold = model_pairs_work.MeasurementHold(
        hold_s=model_pairs_work.HOLD_S, retry_s=600.0, max_entries=4, clock=lambda: now[0]
    )
    held = hold.put("run", model_pairs_work.Held(fake_speed(1.38), 0.0))
    now[0] = model_pairs_work.HOLD_S - 1  # 2 h 59 min 59 s later: the class still sees 1.38x
    assert model_pairs_work.HOLD_S >= 3 * 3600 and hold.get("run") is held
    now[0] = model_pairs_work.HOLD_S + 1
    assert hold.get("run") is None
    # a timeout is retried sooner than a figure is replaced; the oldest of too many goes
    hold.put("slow", model_pairs_work.Held(model_pairs_work.Unmeasured("busy"), 0.0))
    now[0] += 601
    assert hold.get("slow") is None
    for i in range(6):
        hold.put(i, model_pairs_work.Held(fake_speed(1.0), 0.0))
    assert hold.get(0) is None and hold.get(5) is not None


def test_the_store_of_figures_cannot_push_a_measurement_out(clean_hold):
    """The old store was an LRU shared with every figure: a class moving sliders pushed a
    measurement out within minutes, and the next visitor measured again on a busier
    machine."""
    request = default_request(prompt="The capital of France is")
    hold_speed(request, fake_speed(1.38))
    for i in range(shared_work.WORK.store.max_entries + 10):
        shared_work.shared_result("test.flood", i, lambda: "figure", heavy=False)
    assert model_pairs_work.get_run_speed(request).value.speedup == pytest.approx(1.38)


def test_the_key_holds_a_digest_of_the_typed_prompt_not_its_text():
    secret = "My bank PIN is 1234"
    key = model_pairs_work.speed_key(default_request(prompt=secret))
    assert secret not in repr(key) and "1234" not in repr(key)
    assert key.prompt == model_pairs_work.prompt_digest(secret) and key.prompt.startswith("sha256:")
    assert (
        model_pairs_work.speed_key(default_request(prompt=secret, seed=9)) == key
    )  # T = 0: seeds share one


def test_the_page_says_when_it_was_measured_and_keeps_that_figure(clean_hold, monkeypatch):
    """Three visits meet the same held figure and its time; nothing re-measures it."""
    request = default_request()
    measured_at = time.time() - 12 * 60
    hold_speed(request, fake_speed(1.38), measured_at)
    monkeypatch.setattr(model_pairs_work, "measure_run", lambda r: pytest.fail("measured again"))
    for _ in range(3):
        at = open_page(MODEL_PAIRS)
        assert not at.exception
        assert _metric(at, "Speedup of your run (measured)") == "1.38x"
        said = " ".join(c.value for c in at.caption)
        when = model_pairs_work.clock_text(
            measured_at, None
        )  # AppTest has no browser time zone: UTC
        assert f"Measured at {when} (12 minutes ago)" in said
        assert (
            f"kept until {model_pairs_work.clock_text(measured_at + model_pairs_work.HOLD_S, None)}"
            in said
        )


def test_measure_again_says_what_it_does_and_replaces_the_figure_for_everyone(
    clean_hold, monkeypatch
):
    request = default_request()
    hold_speed(request, fake_speed(1.38), time.time() - 600)
    monkeypatch.setattr(model_pairs_work, "measure_run", lambda r: fake_speed(1.25))
    at = open_page(MODEL_PAIRS)
    box = at.get("expander")
    assert any("Measure again (for the teacher)" in e.proto.label for e in box)
    assert model_pairs_words.AGAIN_HELP in [m.value for m in at.markdown]
    at.button(key="lm_again").click().run()
    assert not at.exception
    for _ in range(200):  # the new measurement runs in the background lane
        if not model_pairs_work.measuring_again(request):
            break
        time.sleep(0.05)
    other = open_page(MODEL_PAIRS)  # another student's session
    assert _metric(other, "Speedup of your run (measured)") == "1.25x"
    assert "(just now)" in " ".join(c.value for c in other.caption)


def test_measure_again_is_offered_only_once_the_figure_is_a_minute_old(clean_hold):
    request = default_request()
    hold_speed(request, fake_speed(1.38))
    at = open_page(MODEL_PAIRS)
    assert at.button(key="lm_again").disabled
    assert model_pairs_work.measure_again(request) is False  # a double click measures nothing


def test_clock_and_age_words():
    t = 1_700_000_000.0  # 22:13 UTC
    assert model_pairs_work.clock_text(t, None) == "22:13 UTC"
    assert model_pairs_work.clock_text(t, -60) == "23:13"  # a browser one hour east of UTC
    assert (
        model_pairs_work.age_text(30) == "just now"
        and model_pairs_work.age_text(60) == "1 minute ago"
    )
    assert model_pairs_work.age_text(3 * 3600 + 300) == "3 hours 5 minutes ago"


# --- item 9: words a student understands ----------------------------------------------------

STUDENT_PAGES = [
    ("pages/scripts/round.py", {}),
    ("pages/scripts/round.py", {"mode": "preset", "preset": "000-rejection"}),
    ("pages/scripts/speedup.py", {}),
    ("pages/scripts/losslessness.py", {}),
    ("pages/scripts/self_test.py", {}),
    ("pages/scripts/variants.py", {"preset": "strict"}),
]
SOURCE_WORDS = re.compile(r"seed 00[03]|seed's|seeds'|S_\{\\text\{seeds|\(seed 0", re.IGNORECASE)


def _all_text(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "success", "warning", "header", "subheader"):
        parts += [str(x.value) for x in getattr(at, kind)]
    parts += [str(x.value) for x in at.latex]
    parts += [str(e.proto.label) for e in at.get("expander")]
    for box in at.selectbox:
        parts += [str(o) for o in box.options]  # AppTest lists them as the page shows them
    return "\n".join(parts)


@pytest.mark.parametrize(("page", "query"), [*STUDENT_PAGES, ("pages/scripts/home.py", {})])
def test_no_page_names_the_projects_source_documents(page, query):
    at = open_app(page, query) if "home" in page else open_page(page, query)
    assert not at.exception
    found = SOURCE_WORDS.findall(_all_text(at))
    assert not found, f"{page}: {found}"


def test_examples_are_named_by_what_they_show():
    at = open_page("pages/scripts/round.py")
    options = list(at.selectbox(key="round_preset").options)  # as the page shows them
    assert "Worked example: a full round, all three drafts kept, bonus D" in options
    assert any(o.startswith("Rejection example:") for o in options)
    assert not any("seed" in o.lower() or o.startswith("Cell") for o in options)
    self_test = open_page("pages/scripts/self_test.py")
    assert "Quick self-test" in [h.value for h in self_test.header]


def test_the_model_pair_lab_names_its_basic_formula(clean_hold):
    request = default_request()
    hold_speed(request, fake_speed(1.38))
    at = open_page(MODEL_PAIRS)
    latex = " ".join(x.value for x in at.latex)
    assert r"S_{\text{basic}}" in latex and "seeds" not in latex
    rows = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Speedup over"))
    assert "basic formula (v = 1)" in rows["data"][0]["y"]
    assert not SOURCE_WORDS.findall(_all_text(at))


# --- item 10: why a fixed K drafted nothing, and why the run differs from E -----------------


def test_a_fixed_k_run_says_why_rounds_drafted_nothing_and_why_it_differs_from_e(clean_hold):
    request = default_request()
    run = model_pairs_work.get_run(request)
    spec, counts = run.spec, run.counts
    assert spec.plain_rounds > 0  # the default run has such rounds (the walk saw 6 of 31)
    hold_speed(request, fake_speed(1.38))
    at = open_page(MODEL_PAIRS)
    assert at.radio(key="lm_draft").value == "fixed"
    note = next(i.value for i in at.info if "proposed nothing" in i.value)
    assert f"In {spec.plain_rounds} of {spec.n_rounds} rounds" in note
    assert "With a fixed K, K = 3 is the most a round drafts" in note
    e = sc.expected_tokens(counts.acceptance_rate, counts.k)
    gap = next(c.value for c in at.caption if c.value.startswith("Why your run's"))
    drafting = [(n, a) for n, a in zip(spec.draft_sizes, spec.accepted_sizes, strict=True) if n]
    made = sum(a + 1 for _, a in drafting) / len(drafting)
    assert f"Why your run's {counts.tokens_per_round:.2f} differs from E = {e:.2f}" in gap
    assert f"{spec.plain_rounds} of the {spec.n_rounds} rounds drafted nothing" in gap
    assert f"the {len(drafting)} rounds that drafted made {made:.2f} tokens each" in gap


# --- item 11: no coin where none is drawn -------------------------------------------------


def test_step_mode_at_t0_shows_no_coin_and_says_why():
    at = open_page(MODEL_PAIRS, {"mode": "step", "t": "0.0"})
    assert not at.exception
    for round_shown in range(1, 8):
        jump_slider(at).set_value(round_shown).run()
        titles = [f["layout"].get("title", {}).get("text", "") for f in figures(at)]
        assert "The coins" not in titles
        shown = " ".join(m.value for m in at.markdown)
        assert "u = " not in shown and "coin u" not in shown
    run = model_pairs_work.get_run(default_request(), trace=True)
    checked = next(i for i, r in enumerate(run.spec.rounds) if len(r.positions) > 1)
    jump_slider(at).set_value(checked + 1).run()
    check = " ".join(m.value for m in at.markdown)
    assert "The check at T = 0" in check and "target's top" in check
    assert any("no coin is needed" in m.value for m in at.markdown)


def test_step_mode_at_t1_still_shows_the_coins_in_the_row_labels():
    at = open_page(MODEL_PAIRS, {"mode": "step", "t": "1.0"})
    run = model_pairs_work.get_run(default_request(temperature=1.0), trace=True)
    checked = next(i for i, r in enumerate(run.spec.rounds) if len(r.positions) > 1)
    jump_slider(at).set_value(checked + 1).run()
    coins = next(f for f in figures(at) if f["layout"]["title"]["text"] == "The coins")
    coin = run.spec.rounds[checked].positions[0].coin
    assert coins["data"][0]["y"][0] == f"pos 1: u = {coin:.2f}"


def test_a_traced_run_at_t0_is_shared_by_every_seed():
    assert default_request(seed=5).shared(trace=True) == default_request(seed=0).shared(trace=True)
    assert default_request(seed=5, temperature=1.0).shared(trace=True).seed == 5


# --- item 12: questions for the class, every number from the core ----------------------------

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _numbers(text: str) -> list[float]:
    return [float(x) for x in NUMBER.findall(text.replace(",", ""))]


def _stated(x: float, facts: list[float]) -> bool:
    """``x`` is one of the facts as written (rounded to x's own decimals)."""
    decimals = len(str(x).split(".")[1]) if "." in str(x) else 0
    return any(abs(round(f, decimals) - x) <= 10**-decimals * 0.51 for f in facts)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_asks_two_or_three_questions_and_every_answer_number_is_the_cores(page):
    questions = page_questions.questions_for(page)
    assert 2 <= len(questions) <= 3
    for q in questions:
        facts = [v for _, v in q.facts]
        for x in _numbers(q.answer):
            assert x in _numbers(q.ask) or _stated(x, facts) or x in EXPLAINED, (page, x, q.answer)


EXPLAINED = {1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 0.0}  # counts and exponents the answers name (K, K+1)


def _fact(page: str, i: int, name: str) -> float:
    return page_questions.questions_for(page)[i].fact(name)


P, Q = np.array([0.40, 0.25, 0.20, 0.10, 0.05]), np.array([0.30, 0.30, 0.15, 0.15, 0.10])


def test_the_answers_facts_are_what_the_core_computes():
    """Each fact recomputed here from the core, with the page's own preset numbers."""
    alpha = sc.acceptance_rate(P, Q)
    assert _fact("pages/scripts/home.py", 2, "alpha") == pytest.approx(0.85)
    assert _fact("pages/scripts/home.py", 2, "E") == pytest.approx(sc.expected_tokens(0.85, 3))
    assert _fact("pages/scripts/round.py", 0, "a") == pytest.approx(
        sc.acceptance_probability(0.25, 0.30)
    )
    res = sc.residual_distribution(P, Q)
    assert _fact("pages/scripts/round.py", 1, "A") == pytest.approx(res[0])
    assert _fact("pages/scripts/round.py", 1, "Z") == pytest.approx(1 - alpha)
    h = SPEED_PRESETS["003-H"]
    assert _fact("pages/scripts/speedup.py", 1, "ms per token") == pytest.approx(
        sc.time_per_token(h.alpha, 4, h.c_q, h.c_p)
    )
    assert _fact("pages/scripts/speedup.py", 2, "best") == sc.optimal_k(h.alpha, h.c_q, h.c_p)
    assert LAB_PRESETS["000"].p_text.startswith("0.40, 0.25")
    assert _fact("pages/scripts/losslessness.py", 2, "all kept") == pytest.approx(alpha**4)
    rescue = VARIANT_PRESETS["rescue"]
    p, q = sc.parse_distribution(rescue.p_text), sc.parse_distribution(rescue.q_text)
    assert _fact("pages/scripts/variants.py", 0, "beta2") == pytest.approx(
        float(vr.multidraft_acceptance(p, q, np.array([2]))[0])
    )
    assert _fact("pages/scripts/variants.py", 1, "beta") == pytest.approx(float((P * Q).sum()))


def test_the_resample_from_p_bug_emits_what_the_lab_answer_says():
    """The answer's law of the bug, min(p, q) + (1 - alpha) p, against the core's Monte
    Carlo of that bug (K = 1: one position a round, 200,000 rounds, seeded)."""
    result = sc.simulate_rounds(
        P, Q, 1, 200_000, rng=np.random.default_rng(7), variant="resample_from_p"
    )
    # the token at the drafted position: the kept draft or its replacement
    first = result.position_counts[0] / result.position_counts[0].sum()
    assert first[1] == pytest.approx(_fact("pages/scripts/losslessness.py", 1, "B"), abs=0.004)
    assert first[0] == pytest.approx(_fact("pages/scripts/losslessness.py", 1, "A"), abs=0.004)


@pytest.mark.parametrize("page", [p for p in PAGES if "home" not in p])
def test_what_this_page_asks_holds_the_questions_with_folded_answers(page):
    at = open_page(page, {"present": "1"})
    assert not at.exception
    boxes = at.get("expander")
    assert boxes[0].proto.label == page_questions.BOX_LABEL
    answers = [e for e in boxes if e.proto.label == "Worked answer"]
    questions = page_questions.questions_for(page)
    assert len(answers) == len(questions)
    assert all(not e.proto.expanded for e in [boxes[0], *answers])  # folded until asked
    shown = [m.value for m in at.markdown]
    for q in questions:
        assert q.answer in shown and any(q.ask in m for m in shown)


def test_the_home_page_asks_too():
    at = open_app()
    assert page_questions.BOX_LABEL in [e.proto.label for e in at.get("expander")]
